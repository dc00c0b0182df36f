// Where lowering's time goes, and whether a change to it changed what it makes: samples --count
// random schedules of one workload (seeds 1..count, as the search's fresh samples), lowers each on
// one thread, and prints the seconds spent in every step of tir::Lower and one hash of all the
// lowered programs' text. A faster pass must leave the hash as it was.
//
//   lower-bench --op conv2d --shape N=16,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1 [--dtype float16] [--count 400]
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "search/default_schedule.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/printer.h"

namespace autotune {
namespace {

using Clock = std::chrono::steady_clock;

int Main(int argc, char** argv) {
  CLI::App app{"Times every step of lowering on random schedules of one workload, and hashes what it makes"};
  std::string op, shape, target_name = "cuda", dtype = "float32";
  int count = 400;
  bool print = false;
  app.add_option("--op", op, "operator")->required();
  app.add_option("--shape", shape, "shape parameters")->required();
  app.add_option("--dtype", dtype, "element type (as tune --dtype)")->capture_default_str();
  app.add_option("--target", target_name, "cuda or cpu")->check(CLI::IsMember({"cuda", "cpu"}))->capture_default_str();
  app.add_option("--count", count, "schedules to sample and lower")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_flag("--print", print, "print the first schedule's program after every step");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  auto workload = tir::MakeWorkload(op, shape, "", dtype);
  if (!workload) {
    std::fprintf(stderr, "lower-bench: %s\n", workload.error().message.c_str());
    return 1;
  }
  const tir::TargetKind target = target_name == "cuda" ? tir::TargetKind::kCuda : tir::TargetKind::kCpu;

  std::vector<std::string> order;         // steps in the order Lower runs them
  std::map<std::string, double> seconds;  // per step, all schedules
  double sampling = 0;
  size_t hash = 0;
  int sampled = 0, lowered = 0, failed = 0;
  for (int i = 1; i <= count; ++i) {
    Clock::time_point t0 = Clock::now();
    auto sch = search::RandomSchedule(*workload, target, static_cast<uint64_t>(i));
    sampling += std::chrono::duration<double>(Clock::now() - t0).count();
    if (!sch) continue;  // a seed whose random decisions do not make a schedule of this workload
    ++sampled;
    tir::LowerOptions options;
    Clock::time_point last = Clock::now();
    options.dump = [&](const std::string& step, const tir::PrimFunc& f) {
      Clock::time_point now = Clock::now();
      if (print && lowered == 0) std::printf("---- after %s\n%s\n", step.c_str(), tir::ToString(f.body).c_str());
      if (!seconds.count(step)) order.push_back(step);
      seconds[step] += std::chrono::duration<double>(now - last).count();
      last = Clock::now();  // the dump itself is not a step's time
    };
    auto f = tir::Lower(sch->state(), options);
    if (!f) {
      ++failed;
      continue;
    }
    ++lowered;
    hash = hash * 1000003u ^ std::hash<std::string>()(tir::ToString(f->body));
  }
  double total = 0;
  for (const auto& [step, s] : seconds) total += s;
  std::printf("%d of %d seeds made a schedule; %d lowered, %d failed to lower; sampling %.3f s, lowering %.3f s (%.3f ms each)\n",
              sampled, count, lowered, failed, sampling, total, lowered ? total / lowered * 1e3 : 0.0);
  for (const auto& step : order) std::printf("  %-24s %8.3f s  %5.1f%%\n", step.c_str(), seconds[step], 100 * seconds[step] / total);
  std::printf("programs hash %016zx\n", hash);
  return 0;
}

}  // namespace
}  // namespace autotune

int main(int argc, char** argv) { return autotune::Main(argc, argv); }
