// The autotune executable as a user meets it: help on every command, reports, and one clear line
// with exit status 2 for every kind of bad input.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli/run_cli.h"
#include "tests/temp_path.h"

namespace {

using autotune::testing::Lines;
using autotune::testing::RunCli;

// Files of one test process only, so parallel runs do not collide.
std::string TempPath(const std::string& name) {
  return autotune::testing::TestTempPath("autotune_cli", name);
}

const char* kGemm = "--op gemm --shape M=16,N=24,K=8";

TEST(Cli, HelpOnEveryCommand) {
  for (const char* sub : {"", "ops", "show", "measure", "targets", "lookup", "db", "tune", "networks"}) {
    auto r = RunCli(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub;
    EXPECT_NE(r.out.find("Usage:"), std::string::npos) << sub;
  }
}

TEST(Cli, OpsListsOperatorsAndJson) {
  auto r = RunCli("ops");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("conv2d"), std::string::npos);
  auto j = RunCli("ops --json");
  ASSERT_EQ(j.status, 0);
  auto parsed = nlohmann::json::parse(j.out);
  ASSERT_EQ(parsed.size(), 14u);
  EXPECT_EQ(parsed[2]["params"][7]["name"], "stride");
  EXPECT_EQ(parsed[2]["params"][7]["default"], 1);
  EXPECT_EQ(parsed[3]["name"], "conv2d_nhwc");
  EXPECT_EQ(parsed[5]["name"], "conv3d");
  EXPECT_EQ(parsed[5]["params"][6]["name"], "Q");  // N, C, D, H, W, K, then the kernel's QxRxS
}

TEST(Cli, NetworksListsThemAndPrintsATaskList) {
  auto list = RunCli("networks --json");
  ASSERT_EQ(list.status, 0) << list.err;
  auto nets = nlohmann::json::parse(list.out);
  ASSERT_EQ(nets.size(), 6u);
  EXPECT_EQ(nets[0]["name"], "resnet18");
  EXPECT_EQ(nets[4]["name"], "llama_block");
  EXPECT_EQ(nets[0]["layers"], 21);  // 20 convolutions and the classifier
  EXPECT_NEAR(nets[0]["flops"].get<double>() / 3.64e9, 1.0, 0.03);

  auto text = RunCli("networks resnet18 --batch 4");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("N=4,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"), std::string::npos) << text.out;

  // --json is the list `tune --tasks` reads.
  auto json = RunCli("networks bert_base --batch 2 --json");
  ASSERT_EQ(json.status, 0) << json.err;
  auto tasks = nlohmann::json::parse(json.out);
  ASSERT_EQ(tasks.size(), 8u);
  EXPECT_EQ(tasks[0]["op"], "gemm");
  EXPECT_EQ(tasks[0]["shape"], "M=256,N=768,K=768");
  EXPECT_EQ(tasks[0]["weight"], 36);
  EXPECT_EQ(tasks[2]["op"], "softmax");
  EXPECT_EQ(tasks[2]["shape"], "M=3072,N=128");
}

TEST(Cli, NetworksBadInputIsOneLine) {
  for (const char* args : {"networks resnet101", "networks resnet18 --batch 0", "networks --batch x"}) {
    auto r = RunCli(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(Lines(r.err), 1) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  EXPECT_NE(RunCli("networks resnet101").err.find("known: resnet18"), std::string::npos);
}

TEST(Cli, TargetsReportsCpuAndCuda) {
  auto r = RunCli("targets --json");
  ASSERT_EQ(r.status, 0);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j[0]["target"], "cpu");
  EXPECT_EQ(j[1]["target"], "cuda");
  EXPECT_FALSE(j[1]["reason"].get<std::string>().empty());
}

TEST(Cli, BadInputIsOneLineAndStatusTwo) {
  struct Case {
    std::string args, expect;
  };
  std::vector<Case> cases = {
      {"measure --op gemv --shape M=1 --target cpu", "unknown operator 'gemv'"},
      {"measure --op gemm --shape M=1,N=2 --target cpu", "missing parameter K"},
      {"measure --op gemm --shape M=1,N=x,K=2 --target cpu", "is not an integer"},
      {"measure --op conv2d --shape N=1,C=3,H=8,W=8,K=4,R=3,S=3,groups=2 --target cpu", "not a multiple of groups"},
      {"measure --op conv2d --shape N=1,C=3,H=2,W=2,K=4,R=7,S=7 --target cpu", "larger than the padded"},
      {"measure --op gemm --shape M=1,N=2,K=3 --epilogue gelu6 --target cpu", "unknown epilogue 'gelu6'"},
      {"measure --op gemm --shape M=1,N=2,K=3 --epilogue relu,bias,relu --target cpu", "names relu twice"},
      {"measure --op gemm --shape M=1,N=2,K=3 --dtype float8 --target cpu", "unknown element type 'float8'"},
      {"tune --tasks /nonexistent.json --dtype float16 --target cpu", "--dtype and --precision go with --op or --network"},
      {"measure --op gemm --shape M=1,N=2,K=3 --target tpu", "unknown target 'tpu'"},
      {"measure --op gemm --target cpu", "--shape is required"},
      {"measure --op gemm --shape M=1,N=2,K=3 --frobnicate", "frobnicate"},
      {"show --op gemm --shape M=1,N=2,K=3 --repeats 3", "repeats"},
      {"measure --op gemm --shape M=4,N=4,K=4 --target cuda --arch sm_90 --device 63", "the cuda target cannot run here"},
      {"measure --op gemm --shape M=4,N=4,K=4 --target cpu --cuda-graph", "--cuda-graph applies to the cuda target"},
      {"measure --op gemm --shape M=4,N=4,K=4 --target cuda --cuda-graph --db /nonexistent/x.db", "not stored"},
      {"frobnicate", "frobnicate"},
      // Non-finite numbers: CLI::Range alone lets nan through (every comparison with it is false).
      {"measure --op gemm --shape M=8,N=8,K=8 --target cpu --min-repeat-ms nan",
       "--min-repeat-ms: Value nan is not a finite number"},
      {"measure --op gemm --shape M=8,N=8,K=8 --target cpu --min-repeat-ms inf",
       "--min-repeat-ms: Value inf is not a finite number"},
      {"measure --op gemm --shape M=8,N=8,K=8 --target cpu --run-timeout nan",
       "--run-timeout: Value nan is not a finite number"},
      {"measure --op gemm --shape M=8,N=8,K=8 --target cpu --build-timeout inf",
       "--build-timeout: Value inf is not a finite number"},
      {"measure --op gemm --shape M=8,N=8,K=8 --target cpu --build-timeout 0.5", "--build-timeout: Value 0.5 not in range 1 to 3600"},
      {"tune --op gemm --shape M=8,N=8,K=8 --target cpu --screen-ratio nan",
       "--screen-ratio: Value nan is not a finite number"},
      {"measure --op gemm --shape M=8,N=8,K=8, --target cpu", "trailing comma in shape 'M=8,N=8,K=8,'"},
      // Negative seeds would wrap to a huge unsigned.
      {"measure --op gemm --shape M=8,N=8,K=8 --target cpu --seed -1", "--seed: Value -1 is negative"},
      {"tune --op gemm --shape M=8,N=8,K=8 --target cpu --seed -1", "--seed: Value -1 is negative"},
      {"model train --db /nonexistent/x.db --seed -1", "--seed: Value -1 is negative"},
      {"model eval --db /nonexistent/x.db --seed -1", "--seed: Value -1 is negative"},
      {"tune --op gemm --shape M=8,N=8,K=8 --target cpu --workers ''", "--workers: an empty value is not allowed"},
      {"measure --op gemm --shape M=1,N=2,K=3 --trace /nonexistent/t.json", "cannot read trace file '/nonexistent/t.json': no such file"},
  };
  for (const auto& c : cases) {
    auto r = RunCli(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(Lines(r.err), 1) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
  }
}

TEST(Cli, BadTraceFilesAreUserErrors) {
  std::ofstream(TempPath("not_json.json")) << "{ this is not json";
  std::ofstream(TempPath("wrong_stage.json"))
      << R"({"instructions": [{"kind": "get_stage", "attrs": {"name": "conv"}, "outputs": ["s0"]}]})";
  for (const auto& [file, expect] : std::vector<std::pair<std::string, std::string>>{
           {"not_json.json", "is not valid JSON"}, {"wrong_stage.json", "no stage named 'conv'"}}) {
    auto r = RunCli(std::string("measure ") + kGemm + " --target cpu --trace " + TempPath(file));
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
  }
}

// A trace file that exists but cannot be opened is not reported as missing. (Tests run as root, where
// chmod 000 does not stop reading, so a directory stands in for the unreadable file.)
TEST(Cli, UnreadableTraceFileIsNotCalledMissing) {
  const std::string dir = TempPath("trace_dir");
  std::filesystem::create_directories(dir);
  auto r = RunCli(std::string("measure ") + kGemm + " --target cpu --trace " + dir);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cannot read trace file '" + dir + "': is a directory"), std::string::npos) << r.err;
}

// Special files are refused before a byte is read: a FIFO would block forever, /dev/zero would fill
// memory. (ctest's timeout is what would catch a regression that blocks.)
TEST(Cli, SpecialFilesAreRefusedBeforeReading) {
  const std::string fifo = TempPath("input.fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = TempPath("big.json");
  std::ofstream(big) << "{";
  std::filesystem::resize_file(big, 65 << 20);  // 65 MiB (sparse), past the trace limit
  const std::string m = std::string("measure ") + kGemm + " --target cpu --trace ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {m + fifo, "cannot read trace file '" + fifo + "': not a regular file (a FIFO)"},
      {m + "/dev/zero", "cannot read trace file '/dev/zero': not a regular file (a device)"},
      {m + big, "too large (65 MiB, over the limit of 64 MiB)"},
      {"tune --tasks " + fifo + " --target cpu --db " + TempPath("t.db"), "not a regular file (a FIFO)"},
      {"db stats --db " + fifo, "not a regular file"},
      {"db top --db /dev/zero " + std::string(kGemm), "not a regular file"},
      {"lookup --db " + fifo + " " + kGemm + " --target cpu", "not a regular file (a FIFO)"},
      {"db import --db " + TempPath("i.db") + " --in " + fifo, "not a regular file (a FIFO)"},
      {"db import --db " + TempPath("i.db") + " --in /dev/zero", "not a regular file (a device)"},
  };
  for (const auto& [args, expect] : cases) {
    auto r = RunCli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(Lines(r.err), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << args << "\n" << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(TempPath("i.db")));
  std::filesystem::remove(fifo);
  std::filesystem::remove(big);
}

// A misspelt GPU architecture is bad input (2), not "no answer" (1).
TEST(Cli, LookupOfAnInvalidTargetIsBadInput) {
  const std::string db = TempPath("lookup_target.db");
  std::ofstream(TempPath("empty.jsonl")).flush();
  ASSERT_EQ(RunCli("db import --db " + db + " --in " + TempPath("empty.jsonl")).status, 0);
  auto r = RunCli("lookup --db " + db + " --op gemm --shape M=8,N=8,K=8 --target cuda:sm_xx");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("unknown cuda architecture 'sm_xx' in target 'cuda:sm_xx'"), std::string::npos) << r.err;
}

TEST(Cli, ShowPrintsLoweredIrAndSource) {
  auto r = RunCli(std::string("show ") + kGemm + " --epilogue bias,relu --target cuda --dump-ir");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* part : {"after schedule_ops", "after insert_barriers", "lowered TIR", "barrier()",
                           "thread_binding \"threadIdx.x\"", "extern \"C\" __global__", "kernel_gemm(",
                           "__syncthreads();", "// launch kernel_gemm: grid"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part;
  }
}

// --sketch: a sketch's hand-picked schedule; a depthwise convolution's cuda.direct one reads its
// windows from global memory. An unknown sketch, one that does not apply, or --sketch with --trace:
// one line, status 2.
TEST(Cli, ShowTheHandPickedScheduleOfASketch) {
  const std::string dw = "--op conv2d --shape N=1,C=32,H=14,W=14,K=32,R=3,S=3,pad=1,groups=32 --target cuda";
  auto direct = RunCli("show " + dw + " --sketch cuda.direct");
  ASSERT_EQ(direct.status, 0) << direct.err;
  EXPECT_EQ(direct.out.find("__shared__"), std::string::npos) << direct.out;
  EXPECT_EQ(direct.out.find("cache_read"), std::string::npos) << direct.out;
  auto tiled = RunCli("show " + dw + " --sketch cuda.tiled");
  ASSERT_EQ(tiled.status, 0) << tiled.err;
  EXPECT_NE(tiled.out.find("cache_read"), std::string::npos) << tiled.out;
  const std::pair<std::string, std::string> bad[] = {
      {"show " + dw + " --sketch cuda.nope", "unknown sketch 'cuda.nope'"},
      {"show --op gemm --shape M=16,N=24,K=64 --target cuda --sketch cuda.direct", "does not apply"},
      {"show " + dw + " --sketch cpu.tiled", "does not apply"},
      {"show " + dw + " --sketch cuda.direct --trace t.json", "excludes"},
      {std::string("measure ") + kGemm + " --target cpu --sketch cuda.split_k", "does not apply"}};
  for (const auto& [args, expect] : bad) {
    auto r = RunCli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
  }
}

// No GPU needed: NVRTC compiles for a named architecture and reports what ptxas says.
TEST(Cli, ShowCompilesForCudaWithoutAGpu) {
  auto t = RunCli("targets --json");
  ASSERT_EQ(t.status, 0);
  if (!nlohmann::json::parse(t.out)[1]["compile"].get<bool>()) GTEST_SKIP() << "built without NVRTC";
  auto r = RunCli(std::string("show ") + kGemm + " --target cuda --compile --arch sm_90");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("NVRTC (sm_90): cubin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("registers per thread"), std::string::npos);
  auto bad = RunCli(std::string("show ") + kGemm + " --target cuda --compile --arch sm_9x");
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_EQ(Lines(bad.err), 1) << bad.err;
}

TEST(Cli, MeasureWritesAJsonReportAndReplaysItsTrace) {
  const std::string report = TempPath("report.json");
  auto r = RunCli(std::string("measure ") + kGemm + " --epilogue relu --target cpu --repeats 2 --min-repeat-ms 1 --json " + report);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("correct"), std::string::npos);
  std::ifstream in(report);
  auto j = nlohmann::json::parse(in);
  EXPECT_TRUE(j["correct"].get<bool>());
  EXPECT_TRUE(j["error"].is_null());
  EXPECT_GT(j["latency_ms"].get<double>(), 0);
  EXPECT_GT(j["gflops"].get<double>(), 0);
  EXPECT_EQ(j["latencies_ms"].size(), 2u);
  EXPECT_LE(j["max_rel_error"].get<double>(), 1e-4);
  EXPECT_EQ(j["workload"], "gemm[M=16,N=24,K=8]+relu");
  // The report's trace measures again, the same schedule.
  auto again = RunCli(std::string("measure ") + kGemm + " --epilogue relu --target cpu --min-repeat-ms 1 --trace " +
                      report + " --json -");
  ASSERT_EQ(again.status, 0) << again.err;
  auto j2 = nlohmann::json::parse(again.out);  // stdout is the JSON alone: the result line went to stderr
  EXPECT_EQ(j2["trace"], j["trace"]);
  EXPECT_NE(again.err.find("correct"), std::string::npos) << again.err;
}

TEST(Cli, SavedGpuTraceReplaysOnTheCpuPath) {
  const std::string trace = TempPath("gpu_trace.json");
  auto s = RunCli("show --op conv2d --shape N=1,C=4,H=9,W=9,K=8,R=3,S=3,pad=1 --target cuda --save-trace " + trace);
  ASSERT_EQ(s.status, 0) << s.err;
  // A GPU schedule replayed for the cpu target runs through the C path with serialized threads.
  auto m = RunCli("measure --op conv2d --shape N=1,C=4,H=9,W=9,K=8,R=3,S=3,pad=1 --target cpu --min-repeat-ms 1 --trace " + trace);
  EXPECT_EQ(m.status, 0) << m.err << m.out;
}

}  // namespace
