// The inputs of a multi-workload tuning job (task files and built-in networks) and the task scheduler
// that shares the trial budget among the tasks.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <limits>
#include <map>

#include "search/networks.h"
#include "search/task_file.h"
#include "search/task_scheduler.h"
#include "tir/ops/operator.h"

namespace autotune::search {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------------
// Task files

TEST(TaskFile, ParsesEntriesWithDefaults) {
  auto tasks = ParseTaskList(R"([
    {"op": "gemm", "shape": "M=64,N=64,K=64"},
    {"op": "conv2d", "shape": "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", "epilogue": "bias,relu",
     "weight": 2.5, "name": "layer1.0.conv1", "dtype": "float16"}
  ])",
                             "tasks.json");
  ASSERT_TRUE(tasks.ok()) << tasks.error().message;
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].op, "gemm");
  EXPECT_EQ((*tasks)[0].shape, "M=64,N=64,K=64");
  EXPECT_EQ((*tasks)[0].epilogue, "");
  EXPECT_EQ((*tasks)[0].weight, 1.0);
  EXPECT_EQ((*tasks)[0].name, "");
  EXPECT_EQ((*tasks)[0].dtype, "float32");
  EXPECT_EQ((*tasks)[1].dtype, "float16");
  EXPECT_EQ((*tasks)[1].op, "conv2d");
  EXPECT_EQ((*tasks)[1].epilogue, "bias,relu");
  EXPECT_EQ((*tasks)[1].weight, 2.5);
  EXPECT_EQ((*tasks)[1].name, "layer1.0.conv1");
}

TEST(TaskFile, MergesDuplicateWorkloadsByAddingWeights) {
  // Entries 1, 3 and 4 are the same workload: parameter order, whitespace, spelled-out defaults and
  // the "bias+relu" spelling do not change the key. Entry 2 differs in its epilogue.
  auto tasks = ParseTaskList(R"([
    {"op": "conv2d", "shape": "N=1,C=8,H=8,W=8,K=8,R=3,S=3,pad=1", "epilogue": "bias,relu", "weight": 2},
    {"op": "conv2d", "shape": "N=1,C=8,H=8,W=8,K=8,R=3,S=3,pad=1", "epilogue": "bias"},
    {"op": "conv2d", "shape": "K=8, N=1,C=8,H=8,W=8,R=3,S=3,pad=1,stride=1", "epilogue": "bias+relu",
     "name": "second"},
    {"op": "conv2d", "shape": "N=1,C=8,H=8,W=8,K=8,R=3,S=3,pad=1,groups=1", "epilogue": "bias,relu",
     "weight": 0.5, "name": "third"}
  ])",
                             "tasks.json");
  ASSERT_TRUE(tasks.ok()) << tasks.error().message;
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].weight, 3.5);
  EXPECT_EQ((*tasks)[0].epilogue, "bias,relu");
  EXPECT_EQ((*tasks)[0].shape, "N=1,C=8,H=8,W=8,K=8,R=3,S=3,pad=1");  // the first entry's text
  EXPECT_EQ((*tasks)[0].name, "second");  // the first non-empty name
  EXPECT_EQ((*tasks)[1].weight, 1.0);
  EXPECT_EQ((*tasks)[1].epilogue, "bias");
}

TEST(TaskFile, LoadsAFile) {
  const std::string path = testing::TempDir() + "/autotune_tasks_test.json";
  {
    std::ofstream out(path);
    out << R"([{"op": "batch_matmul", "shape": "B=2,M=16,N=16,K=16", "weight": 3}])";
  }
  auto tasks = LoadTaskFile(path);
  ASSERT_TRUE(tasks.ok()) << tasks.error().message;
  ASSERT_EQ(tasks->size(), 1u);
  EXPECT_EQ((*tasks)[0].op, "batch_matmul");
  EXPECT_EQ((*tasks)[0].weight, 3.0);
  std::filesystem::remove(path);
}

TEST(TaskFile, AWrittenListReadsBackTheSame) {
  auto net = NetworkTasks("resnet18", 2);
  ASSERT_TRUE(net.ok()) << net.error().message;
  std::vector<TuneTaskSpec> tasks = *net;
  tasks[0].weight = 0.25;  // a fractional weight keeps its digits
  tasks[1].name.clear();   // an unnamed task stays unnamed
  tasks[2].epilogue.clear();  // no epilogue: no key
  tasks[3].dtype = "bfloat16";  // float32 is not written; other types are
  const std::string text = TaskListJson(tasks);
  EXPECT_EQ(text.find(R"("dtype":"float32")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("weight":2,)"), std::string::npos) << text;  // a count reads as one
  EXPECT_EQ(text.find(R"("epilogue":"")"), std::string::npos) << text;
  auto back = ParseTaskList(text, "written");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    EXPECT_EQ((*back)[i].op, tasks[i].op) << i;
    EXPECT_EQ((*back)[i].shape, tasks[i].shape) << i;
    EXPECT_EQ((*back)[i].epilogue, tasks[i].epilogue) << i;
    EXPECT_EQ((*back)[i].dtype, tasks[i].dtype) << i;
    EXPECT_EQ((*back)[i].weight, tasks[i].weight) << i;
    EXPECT_EQ((*back)[i].name, tasks[i].name) << i;
  }
}

TEST(TaskFile, ErrorsNameTheFile) {
  const std::string missing = testing::TempDir() + "/no_such_dir/tasks.json";
  auto r = LoadTaskFile(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cannot read task file '" + missing + "'"), std::string::npos) << r.error().message;

  auto dir = LoadTaskFile(testing::TempDir());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().message.find("is a directory"), std::string::npos) << dir.error().message;

  const std::string bad = testing::TempDir() + "/autotune_bad_tasks.json";
  {
    std::ofstream out(bad);
    out << R"([{"op": "gemm", "shape": "M=1,N=1,K=1", "weight": -1}])";
  }
  auto e = LoadTaskFile(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, bad + ": entry 1: weight must be a positive number, not -1");
  std::filesystem::remove(bad);
}

struct BadList {
  const char* json;
  const char* expected;  // the start of the message, or a part of it after "..."
};

TEST(TaskFile, EveryKindOfErrorNamesTheEntry) {
  const std::string ok = R"({"op": "gemm", "shape": "M=8,N=8,K=8"})";
  const BadList cases[] = {
      {"[1, 2", "t.json: not valid JSON: parse error"},
      {"", "t.json: not valid JSON"},
      {R"({"op": "gemm"})", "t.json: expected a JSON array of tasks"},
      {"[]", "t.json: the task list is empty"},
      {"[OK, 3]", "t.json: entry 2: must be an object, not number"},
      {"[OK, [1]]", "t.json: entry 2: must be an object, not array"},
      {R"([OK, {"shape": "M=8,N=8,K=8"}])", "t.json: entry 2: missing \"op\""},
      {R"([{"op": "gemm"}])", "t.json: entry 1: missing \"shape\""},
      {R"([{"op": 1, "shape": "M=8,N=8,K=8"}])", "t.json: entry 1: op must be a string, not number"},
      {R"([{"op": "gemm", "shape": {"M": 8}}])", "t.json: entry 1: shape must be a string, not object"},
      {R"([{"op": "gemm", "shape": "M=8,N=8,K=8", "epilogue": null}])",
       "t.json: entry 1: epilogue must be a string, not null"},
      {R"([{"op": "gemm", "shape": "M=8,N=8,K=8", "name": 7}])", "t.json: entry 1: name must be a string, not number"},
      {R"([OK, OK, {"op": "gemm", "shape": "M=8,N=8,K=8", "wieght": 2}])",
       "t.json: entry 3: unknown key 'wieght' (expected op, shape, epilogue, dtype, weight, name)"},
      {R"([{"op": "gemm", "shape": "M=8,N=8,K=8", "dtype": "half"}])",
       "t.json: entry 1: unknown element type 'half' (expected float32, float16, bfloat16, tf32 or 3xtf32)"},
      {R"([{"op": "gemm", "shape": "M=8,N=8,K=8", "dtype": 16}])", "t.json: entry 1: dtype must be a string, not number"},
      {R"([{"op": "gemm", "shape": "M=8,N=8,K=8", "weight": 0}])",
       "t.json: entry 1: weight must be a positive number, not 0"},
      {R"([{"op": "gemm", "shape": "M=8,N=8,K=8", "weight": -2.5}])",
       "t.json: entry 1: weight must be a positive number, not -2.5"},
      {R"([{"op": "gemm", "shape": "M=8,N=8,K=8", "weight": "2"}])",
       "t.json: entry 1: weight must be a positive number, not string"},
      {R"([{"op": "gemm", "shape": "M=8,N=8,K=8", "weight": true}])",
       "t.json: entry 1: weight must be a positive number, not boolean"},
      {R"([{"op": "gemm", "shape": "M=8,N=8,K=8", "weight": 1e999}])",
       "t.json: not valid JSON: number overflow parsing '1e999'"},
      {R"([OK, {"op": "gemmm", "shape": "M=8,N=8,K=8", "name": "fc"}])",
       "t.json: entry 2 (fc): unknown operator 'gemmm'"},
      {R"([{"op": "gemm", "shape": "M=8,N=8"}])", "t.json: entry 1: shape of gemm is missing parameter K"},
      {R"([{"op": "gemm", "shape": "M=8,N=8,K=8,Q=1"}])", "t.json: entry 1: unknown shape parameter 'Q'"},
      {R"([{"op": "conv2d", "shape": "N=1,C=6,H=8,W=8,K=8,R=3,S=3,groups=4"}])",
       "t.json: entry 1: impossible conv2d shape: C=6 is not a multiple of groups=4"},
      {R"([{"op": "gemm", "shape": "M=8,N=8,K=8", "epilogue": "gelu,swish"}])", "t.json: entry 1: unknown epilogue 'swish'"},
  };
  for (const auto& c : cases) {
    std::string json = c.json;
    for (size_t at; (at = json.find("OK")) != std::string::npos;) json.replace(at, 2, ok);
    auto r = ParseTaskList(json, "t.json");
    ASSERT_FALSE(r.ok()) << json;
    EXPECT_EQ(r.error().message.rfind(c.expected, 0), 0u) << json << "\n  gave: " << r.error().message;
  }
}

// ---------------------------------------------------------------------------------------------
// Built-in networks

tir::Workload Build(const TuneTaskSpec& t) {
  auto w = tir::MakeWorkload(t.op, t.shape, t.epilogue);
  EXPECT_TRUE(w.ok()) << t.name << ": " << t.op << " " << t.shape << ": " << w.error().message;
  return std::move(w).value();
}

std::vector<TuneTaskSpec> Tasks(const std::string& network, int batch) {
  auto tasks = NetworkTasks(network, batch);
  EXPECT_TRUE(tasks.ok()) << tasks.error().message;
  return tasks.ok() ? std::move(tasks).value() : std::vector<TuneTaskSpec>{};
}

// Sum of weights per "op" and per "op+epilogue".
std::map<std::string, double> Counts(const std::vector<TuneTaskSpec>& tasks) {
  std::map<std::string, double> counts;
  for (const auto& t : tasks) {
    counts[t.op] += t.weight;
    counts[t.op + "+" + t.epilogue] += t.weight;
  }
  return counts;
}

TEST(Networks, EveryTaskBuildsAndIsDistinct) {
  ASSERT_EQ(NetworkNames(), (std::vector<std::string>{"resnet18", "resnet50", "mobilenet_v2", "bert_base", "llama_block", "dcgan"}));
  for (const auto& name : NetworkNames()) {
    for (int batch : {1, 4}) {
      SCOPED_TRACE(fmt::format("{} batch {}", name, batch));
      auto tasks = Tasks(name, batch);
      ASSERT_FALSE(tasks.empty());
      std::map<std::string, std::string> keys;
      for (const auto& t : tasks) {
        EXPECT_FALSE(t.name.empty());
        EXPECT_GE(t.weight, 1);
        EXPECT_EQ(t.weight, std::floor(t.weight));
        if (t.weight > 1) {
          EXPECT_NE(t.name.find(fmt::format("(x{})", t.weight)), std::string::npos) << t.name;
        }
        auto w = Build(t);
        auto [it, fresh] = keys.emplace(w.Key(), t.name);
        EXPECT_TRUE(fresh) << t.name << " repeats " << it->second;
      }
    }
  }
}

TEST(Networks, ResNet50LayerCounts) {
  auto tasks = Tasks("resnet50", 1);
  auto counts = Counts(tasks);
  EXPECT_EQ(counts["conv2d"], 53);
  EXPECT_EQ(counts["conv2d+bias,relu"], 33);  // stem + conv1, conv2 of 16 blocks
  EXPECT_EQ(counts["conv2d+bias"], 20);       // conv3 of 16 blocks + 4 downsamples
  EXPECT_EQ(counts["gemm"], 1);
  int gemms = 0;
  for (const auto& t : tasks) {
    if (t.op != "gemm") continue;
    ++gemms;
    EXPECT_EQ(t.shape, "M=1,N=1000,K=2048");
    EXPECT_EQ(t.epilogue, "bias");
  }
  EXPECT_EQ(gemms, 1);
  // The stem, and the 1x1 64->256 conv shared by layer1's three conv3 and its downsample.
  std::map<std::string, double> by_shape;
  for (const auto& t : tasks) by_shape[t.shape + "+" + t.epilogue] += t.weight;
  EXPECT_EQ((by_shape["N=1,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3+bias,relu"]), 1);
  EXPECT_EQ((by_shape["N=1,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0+bias"]), 4);
  EXPECT_EQ((by_shape["N=1,C=1024,H=14,W=14,K=2048,R=1,S=1,stride=2,pad=0+bias"]), 1);
  EXPECT_EQ((by_shape["N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1+bias,relu"]), 5);
}

TEST(Networks, ResNet18LayerCounts) {
  auto tasks = Tasks("resnet18", 1);
  auto counts = Counts(tasks);
  EXPECT_EQ(counts["conv2d"], 20);
  EXPECT_EQ(counts["conv2d+bias,relu"], 9);  // stem + conv1 of 8 blocks
  EXPECT_EQ(counts["conv2d+bias"], 11);      // conv2 of 8 blocks + 3 downsamples
  EXPECT_EQ(counts["gemm"], 1);
  for (const auto& t : tasks) {
    if (t.op == "gemm") { EXPECT_EQ(t.shape, "M=1,N=1000,K=512"); }
  }
}

TEST(Networks, MobileNetV2LayerCounts) {
  auto tasks = Tasks("mobilenet_v2", 1);
  auto counts = Counts(tasks);
  EXPECT_EQ(counts["conv2d"], 52);
  EXPECT_EQ(counts["conv2d+bias"], 17);  // the linear bottleneck projection of every block
  EXPECT_EQ(counts["gemm"], 1);
  double depthwise = 0;
  for (const auto& t : tasks) {
    if (t.op == "gemm") { EXPECT_EQ(t.shape, "M=1,N=1000,K=1280"); }
    if (t.op != "conv2d") continue;
    auto w = Build(t);
    if (w.Param("groups") == 1) continue;
    depthwise += t.weight;
    EXPECT_EQ(w.Param("groups"), w.Param("C")) << t.name;
    EXPECT_EQ(w.Param("groups"), w.Param("K")) << t.name;
    EXPECT_EQ(w.Param("R"), 3) << t.name;
    EXPECT_EQ(t.epilogue, "bias,relu") << t.name;
  }
  EXPECT_EQ(depthwise, 17);
}

TEST(Networks, BertBaseHasEveryPerLayerStageTwelveTimes) {
  auto tasks = Tasks("bert_base", 1);
  std::map<std::string, double> by_shape;
  for (const auto& t : tasks) {
    EXPECT_EQ(std::fmod(t.weight, 12.0), 0.0) << t.name;
    by_shape[t.op + "[" + t.shape + "]+" + t.epilogue] += t.weight;
  }
  EXPECT_EQ(by_shape.size(), 8u);
  EXPECT_EQ((by_shape["gemm[M=128,N=768,K=768]+bias"]), 36);  // query, key, value
  EXPECT_EQ((by_shape["gemm[M=128,N=768,K=768]+bias,residual"]), 12);
  EXPECT_EQ((by_shape["gemm[M=128,N=3072,K=768]+bias,gelu"]), 12);
  EXPECT_EQ((by_shape["gemm[M=128,N=768,K=3072]+bias,residual"]), 12);
  EXPECT_EQ((by_shape["batch_matmul[B=12,M=128,N=128,K=64]+"]), 12);
  EXPECT_EQ((by_shape["softmax[M=1536,N=128]+"]), 12);
  EXPECT_EQ((by_shape["batch_matmul[B=12,M=128,N=64,K=128]+"]), 12);
  EXPECT_EQ((by_shape["layer_norm[M=128,N=768]+"]), 24);
}

// The published multiply-accumulate counts (2 FLOPs each), within a few percent: a wrong or
// missing layer shows here.
TEST(Networks, TotalFlopsMatchThePublishedFigures) {
  const std::pair<const char*, double> expected[] = {
      {"resnet18", 1.82e9}, {"resnet50", 4.11e9}, {"mobilenet_v2", 0.30e9}, {"bert_base", 11.17e9},
      // LLaMA-7B's block on 128 tokens: 4 projections of 4096^2, 3 MLP matrices of 4096 x 11008,
      // and the two attention products of 32 heads.
      {"llama_block", 128 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008) + 2 * 32 * 128.0 * 128 * 128},
      // DCGAN by hand: 100*512*16 + 3 * (512*16*256*16) [the three doubling layers have equal
      // MACs] + 64*1024*3*16.
      {"dcgan", 100.0 * 512 * 16 + 3 * 512.0 * 16 * 256 * 16 + 64.0 * 1024 * 3 * 16}};
  for (const auto& [name, macs] : expected) {
    double flops = 0;
    for (const auto& t : Tasks(name, 1)) flops += t.weight * Build(t).flops;
    EXPECT_NEAR(flops / (2 * macs), 1.0, 0.03) << name << ": " << flops;
  }
}

TEST(Networks, BatchScalesTheBatchDimension) {
  for (const auto& name : NetworkNames()) {
    SCOPED_TRACE(name);
    auto one = Tasks(name, 1);
    auto three = Tasks(name, 3);
    ASSERT_EQ(one.size(), three.size());
    for (size_t i = 0; i < one.size(); ++i) {
      EXPECT_EQ(one[i].weight, three[i].weight);
      EXPECT_EQ(one[i].name, three[i].name);
      auto a = Build(one[i]);
      auto b = Build(three[i]);
      const bool rows = a.op == "softmax" || a.op == "layer_norm" || a.op == "rms_norm";
      const std::string batched = a.op == "gemm" || rows ? "M" : a.op == "batch_matmul" ? "B" : "N";
      ASSERT_EQ(a.shape.size(), b.shape.size());
      for (size_t p = 0; p < a.shape.size(); ++p) {
        const int64_t factor = a.shape[p].first == batched ? 3 : 1;
        EXPECT_EQ(a.shape[p].second * factor, b.shape[p].second) << one[i].name << " " << a.shape[p].first;
      }
    }
  }
  // bert: M is batch * sequence length, B is batch * heads.
  auto bert = Tasks("bert_base", 2);
  EXPECT_EQ(Build(bert[0]).Param("M"), 256);
  EXPECT_EQ(Build(bert[1]).Param("B"), 24);
}

TEST(Networks, UnknownNetworkAndBadBatchAreErrors) {
  auto unknown = NetworkTasks("resnet101", 1);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "unknown network 'resnet101' (known: resnet18, resnet50, mobilenet_v2, bert_base, llama_block, dcgan)");
  for (int batch : {0, -1}) {
    auto bad = NetworkTasks("resnet50", batch);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message, fmt::format("batch must be at least 1, not {}", batch));
  }
  // A batch so large that a tensor passes 2^31 elements names the layer.
  auto huge = NetworkTasks("resnet50", 1 << 20);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().message.rfind("resnet50 at batch 1048576: layer conv1: impossible conv2d shape", 0), 0u)
      << huge.error().message;
}

// ---------------------------------------------------------------------------------------------
// Task scheduler

// latency(task, round) of the task's round-th round (1-based): what its best would be after it.
using Curve = std::function<double(int task, int round)>;

// Runs `rounds` rounds of `trials` each, recording `curve`; returns the order of the rounds.
std::vector<int> Simulate(TaskScheduler& s, int num_tasks, int rounds, const Curve& curve, int trials = 64) {
  std::vector<int> order, done(num_tasks, 0);
  for (int r = 0; r < rounds; ++r) {
    const int t = s.Next();
    if (t < 0) break;
    order.push_back(t);
    ++done[t];
    s.Record(t, curve(t, done[t]), done[t] * trials);
  }
  return order;
}

std::vector<int> RoundsPerTask(const std::vector<int>& order, int num_tasks) {
  std::vector<int> n(num_tasks, 0);
  for (int t : order) ++n[t];
  return n;
}

TEST(TaskScheduler, FirstRoundsGoInOrder) {
  TaskScheduler s({1, 5, 2, 1});
  auto order = Simulate(s, 4, 4, [](int task, int) { return 1.0 + task; });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  for (int t = 0; t < 4; ++t) EXPECT_EQ(s.Rounds(t), 1);

  TaskScheduler skip({1, 1, 1});
  skip.Finish(1);
  EXPECT_EQ(Simulate(skip, 3, 2, [](int, int) { return 1.0; }), (std::vector<int>{0, 2}));
}

// As Simulate, with `out` rounds started (Start) before the oldest is recorded, as the tuner does with
// overlapping rounds.
std::vector<int> SimulateOverlapped(TaskScheduler& s, int num_tasks, int rounds, int out, const Curve& curve,
                                    int trials = 64) {
  std::vector<int> order, done(num_tasks, 0);
  std::deque<int> started;
  auto record_oldest = [&] {
    const int t = started.front();
    started.pop_front();
    ++done[t];
    s.Record(t, curve(t, done[t]), done[t] * trials);
  };
  for (int r = 0; r < rounds; ++r) {
    if (static_cast<int>(started.size()) == out) record_oldest();
    const int t = s.Next();
    if (t < 0) break;
    order.push_back(t);
    s.Start(t);
    started.push_back(t);
  }
  while (!started.empty()) record_oldest();
  return order;
}

TEST(TaskScheduler, RoundsStillOutCount) {
  // A 16-layer network, 31 rounds, three out at once: every layer gets its first round, in order,
  // before any gets a second.
  TaskScheduler s(std::vector<double>(16, 1.0));
  auto order = SimulateOverlapped(s, 16, 31, 3, [](int task, int round) { return (1.0 + task) / round; });
  ASSERT_EQ(order.size(), 31u);
  for (int t = 0; t < 16; ++t) EXPECT_EQ(order[t], t);
  EXPECT_EQ(s.Rounds(0), RoundsPerTask(order, 16)[0]);

  // A task whose first round is out is not known to lack a latency: the failing task 0 gets its
  // priority rounds once its failure is in, never more than kNoResultPriorityRounds before others.
  TaskScheduler failing({1, 1, 1});
  auto f = SimulateOverlapped(failing, 3, 12, 3, [](int task, int round) { return task == 0 ? kInf : 1.0 / round; });
  EXPECT_EQ((std::vector<int>(f.begin(), f.begin() + 3)), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(std::count(f.begin(), f.begin() + 6, 0), TaskScheduler::kNoResultPriorityRounds);

  // Started and not recorded, a round counts in Rounds; its gain is not known yet.
  TaskScheduler one({1, 1});
  one.Start(0);
  EXPECT_EQ(one.Rounds(0), 1);
  EXPECT_EQ(one.ExpectedGain(0), 0);
  EXPECT_EQ(one.Next(), 1);
  one.Start(1);
  EXPECT_EQ(one.Next(), 0);  // both wait for their first result: the fewest rounds, the lower index
  one.Record(0, 2.0, 64);
  EXPECT_EQ(one.Rounds(0), 1);
  EXPECT_DOUBLE_EQ(one.ExpectedGain(0), TaskScheduler::kOptimism * 2.0);
}

TEST(TaskScheduler, ImprovingTaskGetsMoreRoundsThanAStalledOne) {
  // Same weight, same starting latency; task 0 stalls, task 1 gets 5% faster every round. The
  // improving task is the higher index so that ties do not help it.
  TaskScheduler s({1, 1});
  auto order = Simulate(s, 2, 60, [](int task, int round) { return task == 0 ? 1.0 : std::pow(0.95, round - 1); });
  auto n = RoundsPerTask(order, 2);
  EXPECT_GT(n[1], n[0]);
  EXPECT_GE(n[1], 2 * n[0]);
  EXPECT_GT(n[0], 1);  // the stalled task still gets rounds now and then
  // Once the improving task converges, the stalled one catches up (it is never starved).
  TaskScheduler converging({1, 1});
  auto later = RoundsPerTask(
      Simulate(converging, 2, 200, [](int task, int round) { return task == 0 ? 1.0 : std::max(0.5, 1.0 - 0.05 * round); }),
      2);
  EXPECT_GT(later[0], 40);
}

TEST(TaskScheduler, HeavierTaskGetsMoreRoundsAtEqualImprovement) {
  const auto curve = [](int, int round) { return 0.5 + 0.5 * std::pow(0.9, round - 1); };
  TaskScheduler s({1, 3});
  auto n = RoundsPerTask(Simulate(s, 2, 60, curve), 2);
  EXPECT_GT(n[1], n[0]);
  // Equal weights and curves: the rounds are shared evenly.
  TaskScheduler even({2, 2});
  auto e = RoundsPerTask(Simulate(even, 2, 60, curve), 2);
  EXPECT_LE(std::abs(e[0] - e[1]), 1);
}

TEST(TaskScheduler, PicksTheLargestExpectedGain) {
  TaskScheduler s({1, 1, 1});
  s.Record(0, 2.0, 64);
  s.Record(1, 2.0, 64);
  s.Record(2, 2.0, 64);
  EXPECT_EQ(s.Next(), 0);  // all equal: the lowest index
  EXPECT_DOUBLE_EQ(s.ExpectedGain(0), TaskScheduler::kOptimism * 2.0);
  s.Record(1, 1.0, 128);  // improved by 1 ms in 64 trials: gain 1 + 0.1 * 1 / 2
  EXPECT_DOUBLE_EQ(s.ExpectedGain(1), 1.0 + TaskScheduler::kOptimism * 1.0 / 2);
  EXPECT_EQ(s.Next(), 1);
  // The backward window: after kBackwardWindow rounds without improvement the drop is forgotten.
  for (int r = 3; r <= 2 + TaskScheduler::kBackwardWindow; ++r) s.Record(1, 1.0, 64 * r);
  EXPECT_DOUBLE_EQ(s.ExpectedGain(1), TaskScheduler::kOptimism * 1.0 / (2 + TaskScheduler::kBackwardWindow));
  EXPECT_EQ(s.Next(), 0);
}

TEST(TaskScheduler, TasksWithoutALatencyGoFirstButNotForever) {
  TaskScheduler s({1, 1});
  // Task 0 never gets a valid measurement; task 1 keeps improving.
  auto order = Simulate(s, 2, 40, [](int task, int round) { return task == 0 ? kInf : 1.0 / round; });
  ASSERT_GE(order.size(), 4u);
  EXPECT_EQ((std::vector<int>(order.begin(), order.begin() + 4)), (std::vector<int>{0, 1, 0, 0}));
  auto n = RoundsPerTask(order, 2);
  EXPECT_GT(n[1], n[0]);
  EXPECT_GT(n[0], TaskScheduler::kNoResultPriorityRounds);  // still a round now and then
  EXPECT_EQ(s.WeightedLatency(), kInf);
  // Optimism alone, with the worst latency known (task 1's) standing in for its own.
  EXPECT_DOUBLE_EQ(s.ExpectedGain(0), TaskScheduler::kOptimism * (1.0 / n[1]) / n[0]);

  // When no task has a latency, the rounds are shared evenly.
  TaskScheduler none({1, 5, 1});
  auto all_inf = Simulate(none, 3, 9, [](int, int) { return kInf; });
  EXPECT_EQ(all_inf, (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
}

TEST(TaskScheduler, FinishedTasksAreNeverReturned) {
  TaskScheduler s({1, 1, 1});
  std::vector<int> done(3, 0);
  s.Finish(1);
  for (int r = 0; r < 30; ++r) {
    const int t = s.Next();
    ASSERT_NE(t, 1);
    ASSERT_GE(t, 0);
    ++done[t];
    s.Record(t, 1.0 / done[t], 10 * done[t]);
    if (r == 10) s.Finish(0);
    if (t == 0) { EXPECT_LE(r, 10); }
  }
  s.Finish(2);
  EXPECT_EQ(s.Next(), -1);
  EXPECT_EQ(TaskScheduler({}).Next(), -1);
}

TEST(TaskScheduler, IsDeterministic) {
  const auto curve = [](int task, int round) {
    return (1.0 + task) * (0.4 + 0.6 / (1 + ((round * (task + 3)) % 7) * 0.1 * round));
  };
  std::vector<double> weights = {1, 2, 1, 3, 1};
  TaskScheduler a(weights), b(weights);
  auto first = Simulate(a, 5, 100, curve);
  auto second = Simulate(b, 5, 100, curve);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.size(), 100u);
}

TEST(TaskScheduler, WeightedLatencyAndRecord) {
  TaskScheduler s({1, 2});
  EXPECT_EQ(s.WeightedLatency(), kInf);
  EXPECT_EQ(s.ExpectedGain(0), kInf);
  s.Record(0, 3.0, 64);
  EXPECT_EQ(s.WeightedLatency(), kInf);
  s.Record(1, 0.5, 64);
  EXPECT_DOUBLE_EQ(s.WeightedLatency(), 3.0 + 2 * 0.5);
  s.Record(0, 4.0, 128);  // slower than before: the best so far stays 3
  EXPECT_DOUBLE_EQ(s.WeightedLatency(), 4.0);
  s.Finish(0);  // finished tasks still count
  EXPECT_DOUBLE_EQ(s.WeightedLatency(), 4.0);
  EXPECT_EQ(s.Rounds(0), 2);
}

}  // namespace
}  // namespace autotune::search
