// The tuner's loop offline, with an XGBoost model standing in for the GPU (the "oracle"): a way to
// try a search change on a workload's kept GPU records before spending device time on it.
//
//   autotune model train --db RECORDS.db --target cuda:sm_90 --out oracle.json   # one workload's records
//   oracle-tuning-sim --oracle oracle.json --best-ms 0.00718 --op conv2d --shape N=1,C=256,...
//       [--dtype float16] [--start START.model] [--trials 1000] [--seed 1] [--min-per-sketch 4] [--db sim.db]
//
// Each candidate is lowered as for the GPU (the real search, validity check and cost model); its
// "latency" is --best-ms divided by the oracle's predicted normalized throughput (1 = the records'
// best), floored at 2% of the best's throughput. The job's own model starts from --start, as
// `autotune tune --model` does. Prints the best latency and the best-so-far curve per round; the
// records land in --db (export them with `autotune db export`). An oracle ranks what it was trained
// on well (in-sample pairwise accuracy about 0.87 on 2,000 records) and what it never saw poorly, so
// read a result as a hint to check on the GPU, never as a figure.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>

#include "costmodel/xgboost_model.h"
#include "db/database.h"
#include "search/tuner.h"

namespace autotune {
namespace {

bool ReadFile(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::stringstream s;
  s << f.rdbuf();
  out = s.str();
  return true;
}

// "Builds" a candidate by asking the oracle how fast it would run; the figure travels in
// binary_bytes (femtoseconds) to the runner, as a real build's artifact would.
class OracleBuilder final : public measure::Builder {
 public:
  OracleBuilder(costmodel::XGBoostCostModel& oracle, double best_ms) : oracle_(oracle), best_ms_(best_ms) {}
  std::vector<measure::BuildResult> Build(const std::vector<measure::BuildInput>& inputs,
                                         const OnBuilt& on_built = {}) override {
    std::vector<measure::BuildResult> out;
    for (const auto& in : inputs) {
      const std::vector<float> row = oracle_.Summarize(in.func);
      double throughput;
      {
        std::lock_guard lock(mu_);  // one XGBoost call at a time
        throughput = oracle_.PredictRows({row})[0];
      }
      measure::BuildResult b;
      b.source = std::to_string(std::hash<std::string_view>()(
          std::string_view(reinterpret_cast<const char*>(row.data()), row.size() * sizeof(float))));
      b.entry = "oracle";
      b.artifact = "oracle";
      b.binary_bytes = static_cast<int64_t>(best_ms_ / std::max(throughput, 0.02) * 1e12);
      out.push_back(std::move(b));
      if (on_built) on_built(out.size() - 1, out.back());
    }
    return out;
  }

 private:
  costmodel::XGBoostCostModel& oracle_;
  double best_ms_;
  std::mutex mu_;
};

class OracleRunner final : public measure::Runner {
 public:
  std::vector<measure::MeasureResult> Run(const tir::Workload&, const std::vector<measure::BuildResult>& builds) override {
    std::vector<measure::MeasureResult> out;
    for (const auto& b : builds) {
      if (!b.ok()) {
        out.push_back(measure::MeasureResult::Error(b.error_kind, b.error_message));
        continue;
      }
      measure::MeasureResult r;
      r.median_ms = static_cast<double>(b.binary_bytes) / 1e12;
      r.latencies_ms = {r.median_ms};
      r.correct = true;
      out.push_back(std::move(r));
    }
    return out;
  }
};

int Fail(const std::string& what) {
  std::fprintf(stderr, "oracle-tuning-sim: %s\n", what.c_str());
  return 1;
}

int Main(int argc, char** argv) {
  CLI::App app{"The tuner's loop offline: an XGBoost model of one workload's GPU records stands in for the GPU"};
  std::string oracle_file, start_file, db_file = "oracle-sim.db", op, shape, dtype = "float32";
  double best_ms = 0;
  int trials = 1000, min_per_sketch = search::EvolutionConfig{}.min_per_sketch;
  uint64_t seed = 1;
  app.add_option("--oracle", oracle_file, "model trained on the workload's records (autotune model train)")->required();
  app.add_option("--best-ms", best_ms, "the records' best latency: the oracle's throughput 1")
      ->required()
      ->check(CLI::PositiveNumber);
  app.add_option("--op", op, "operator")->required();
  app.add_option("--shape", shape, "shape parameters")->required();
  app.add_option("--dtype", dtype, "element type (as tune --dtype)")->capture_default_str();
  app.add_option("--start", start_file, "the job's start model (as tune --model; default: a cold start)");
  app.add_option("--trials", trials, "measurements")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("--seed", seed, "seed of the search and of the job's model")->capture_default_str();
  app.add_option("--min-per-sketch", min_per_sketch, "EvolutionConfig::min_per_sketch")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--db", db_file, "database of the simulated records (created if missing; one that holds the workload resumes, as tune does)")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  std::string bytes;
  costmodel::XGBoostConfig oracle_config;
  oracle_config.threads = 1;
  costmodel::XGBoostCostModel oracle(oracle_config);
  if (!ReadFile(oracle_file, bytes)) return Fail("cannot read --oracle " + oracle_file);
  if (auto r = oracle.Load(bytes); !r) return Fail("--oracle " + oracle_file + ": " + r.error().message);
  costmodel::XGBoostConfig job_config;
  job_config.threads = 1;  // as in tune
  job_config.seed = seed;
  job_config.target = "cuda:sm_90";
  costmodel::XGBoostCostModel model(job_config);
  if (!start_file.empty()) {
    if (!ReadFile(start_file, bytes)) return Fail("cannot read --start " + start_file);
    if (auto r = model.Load(bytes); !r) return Fail("--start " + start_file + ": " + r.error().message);
  }
  auto db = db::TuningDatabase::Open(db_file);
  if (!db) return Fail(db.error().message);

  OracleBuilder builder(oracle, best_ms);
  OracleRunner runner;
  search::TuneConfig config;
  config.target = tir::TargetKind::kCuda;
  config.target_info = {"cuda", "sm_90", "oracle", "", ""};
  config.trials = trials;
  config.seed = seed;
  config.evolution.min_per_sketch = min_per_sketch;
  search::Tuner tuner(config, builder, runner, **db, model);
  search::TuneTaskSpec task;
  task.op = op;
  task.shape = shape;
  task.dtype = dtype;
  std::atomic<bool> stop{false};
  auto reports = tuner.Run({task}, stop, [](const search::TuneProgress& p) {
    std::fprintf(stderr, "\r%d/%d trials", p.trials_done, p.trials_total);
  });
  std::fprintf(stderr, "\n");
  if (!reports) return Fail(reports.error().message);
  const search::TaskReport& r = reports->front();
  std::printf("best %.5f ms after %d trials; best so far per round:", r.best_latency_ms, r.trials);
  for (double c : r.curve) std::printf(" %.5f", c);
  std::printf("\n%.1f s: search %.1f s, model %.1f s, build (lowering and the oracle) %.1f s\n", r.seconds,
              r.search_seconds, r.model_seconds, r.build_seconds);
  return 0;
}

}  // namespace
}  // namespace autotune

int main(int argc, char** argv) { return autotune::Main(argc, argv); }
