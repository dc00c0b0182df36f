// `autotune model train`, `autotune model eval` and `autotune tune --model` as a user meets them, on
// the cpu target. The data is made here: one database from two small `autotune tune --target cpu`
// jobs (gemm and batch_matmul), built once for the suite and copied by the tests that write to it.
// CPU timings are noisy: the figures are checked for form and range, never for ranking quality.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "costmodel/program_features.h"
#include "tests/cli/run_cli.h"
#include "tests/temp_path.h"

namespace {

using autotune::testing::Lines;
using autotune::testing::RunCli;
using autotune::testing::RunResult;
using nlohmann::json;
namespace fs = std::filesystem;

// Fast measurement: one timed repeat of at least 1 ms, no warm-up, one thread.
const std::string kFast = " --target cpu --repeats 1 --min-repeat-ms 1 --warmup 0 --threads 1 --population 32";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

json ParseJson(const std::string& text) { return json::parse(text, nullptr, /*allow_exceptions=*/false); }

std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// What `model train` and `model eval` print while they read a database, before they can know that
// the records selected do not do.
bool IsReadingProgress(const std::string& line) {
  return line.find("reading and featurizing") != std::string::npos || line.find("valid records of") != std::string::npos;
}

// Exit status 2 and one line saying what is wrong, containing `expect`; at most the reading progress
// before it (`after_reading`: the problem shows only once the records are read).
void ExpectUserError(const RunResult& r, const std::string& args, const std::string& expect, bool after_reading = false) {
  SCOPED_TRACE(args);
  EXPECT_EQ(r.status, 2) << r.err;
  const std::vector<std::string> lines = SplitLines(r.err);
  ASSERT_FALSE(lines.empty()) << "no message";
  EXPECT_EQ(Lines(r.err), static_cast<int>(lines.size())) << "every line ends:\n" << r.err;
  EXPECT_NE(lines.back().find(expect), std::string::npos) << r.err;
  EXPECT_EQ(lines.back().rfind("autotune: ", 0), 0u) << r.err;
  if (after_reading) {
    for (size_t i = 0; i + 1 < lines.size(); ++i) EXPECT_TRUE(IsReadingProgress(lines[i])) << r.err;
  } else {
    EXPECT_EQ(lines.size(), 1u) << r.err;
  }
}

class ModelCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = autotune::testing::TestTempPath("autotune_model_cli", "files") + "/";
    std::error_code ec;
    fs::remove_all(dir_, ec);
    fs::create_directories(dir_, ec);
    db_ = dir_ + "tuned.db";
    model_ = dir_ + "model.json";
    error_.clear();
    // Two workloads, enough records of each for the model to have something to learn: a cpu tune of
    // gemm 32^3 (64 trials) and batch_matmul B=2,16^3 (48 trials) with kFast's settings, exported
    // once. (Every test is its own process under ctest: tuning here cost minutes of CI per test.)
    const std::string records = std::string(AUTOTUNE_TEST_DATA_DIR) + "/data/model_cli_records.jsonl";
    if (auto r = RunCli("db import --db " + db_ + " --in " + records); r.status != 0) {
      error_ = "db import " + records + " failed:\n" + r.err;
      return;
    }
    auto stats = RunCli("db stats --json --db " + db_);
    const json j = ParseJson(stats.out);
    if (stats.status != 0 || j.is_discarded() || j["targets"].size() != 1) {
      error_ = "db stats:\n" + stats.out + stats.err;
      return;
    }
    valid_ = j["targets"][0]["valid"].get<int64_t>();
    workloads_ = j["workloads"].get<int>();
    if (valid_ < 32 || workloads_ != 2) {
      error_ = "too few valid records to learn from:\n" + stats.out;
      return;
    }
    auto train = RunCli("model train --db " + db_ + " --target cpu --out " + model_);
    if (train.status != 0) error_ = "model train:\n" + train.err;
  }

  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void SetUp() override { ASSERT_TRUE(error_.empty()) << error_; }

  // A copy of the suite's database (with its write-ahead log), for a test that writes to it.
  static std::string CopyDb(const std::string& name) {
    const std::string path = dir_ + name;
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
    fs::copy_file(db_, path);
    if (fs::exists(db_ + "-wal")) fs::copy_file(db_ + "-wal", path + "-wal");
    return path;
  }

  static json DbStats(const std::string& db) {
    auto r = RunCli("db stats --json --db " + db);
    EXPECT_EQ(r.status, 0) << r.err;
    return ParseJson(r.out);
  }

  // The suite's model with `from` replaced by `to` in its JSON text.
  static std::string EditedModel(const std::string& name, const std::string& from, const std::string& to) {
    std::string text = ReadFile(model_);
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from << " not in the model";
    if (at != std::string::npos) text.replace(at, from.size(), to);
    const std::string path = dir_ + name;
    std::ofstream(path) << text;
    return path;
  }

  // The metrics of one result are numbers in their ranges, over every valid record.
  static void CheckResult(const json& r, int64_t records) {
    SCOPED_TRACE(r.dump());
    ASSERT_TRUE(r.is_object());
    for (const char* key : {"pairwise_accuracy", "spearman", "top_k_recall"}) ASSERT_TRUE(r[key].is_number()) << key;
    EXPECT_GE(r["pairwise_accuracy"].get<double>(), 0.0);
    EXPECT_LE(r["pairwise_accuracy"].get<double>(), 1.0);
    EXPECT_GE(r["spearman"].get<double>(), -1.0);
    EXPECT_LE(r["spearman"].get<double>(), 1.0);
    EXPECT_GE(r["top_k_recall"].get<double>(), 0.0);
    EXPECT_LE(r["top_k_recall"].get<double>(), 1.0);
    EXPECT_EQ(r["records"].get<int64_t>(), records);
    EXPECT_GT(r["pairs"].get<int64_t>(), 0);
    EXPECT_TRUE(r["model"].is_string());
    EXPECT_TRUE(r["split"].is_string());
    EXPECT_TRUE(r["folds"].is_number_integer());
  }

  // `model eval ... --json -`: exit 0, the report on stdout and only the report.
  static json Eval(const std::string& args) {
    auto r = RunCli("model eval --db " + db_ + " --target cpu " + args + " --json -");
    EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
    const json j = ParseJson(r.out);
    EXPECT_FALSE(j.is_discarded()) << args << "\n" << r.out;
    if (j.is_discarded()) return json::object();
    EXPECT_EQ(j["target"], "cpu");
    EXPECT_EQ(j["db"], db_);
    EXPECT_EQ(j["feature_version"], autotune::costmodel::kFeatureVersion);
    EXPECT_TRUE(j["results"].is_array()) << j.dump(2);
    return j;
  }

  static std::string dir_, db_, model_, error_;
  static int64_t valid_;
  static int workloads_;
};

std::string ModelCli::dir_, ModelCli::db_, ModelCli::model_, ModelCli::error_;
int64_t ModelCli::valid_ = 0;
int ModelCli::workloads_ = 0;

TEST(ModelCliHelp, CommandAndSubcommandsExplainTheirOptions) {
  auto group = RunCli("model --help");
  EXPECT_EQ(group.status, 0) << group.err;
  for (const char* word : {"train", "eval"}) EXPECT_NE(group.out.find(word), std::string::npos) << word;

  auto train = RunCli("model train --help");
  EXPECT_EQ(train.status, 0) << train.err;
  for (const char* opt : {"--db", "--op", "--target", "--objective", "--rounds", "--seed", "--out", "--save-as"}) {
    EXPECT_NE(train.out.find(opt), std::string::npos) << opt << "\n" << train.out;
  }
  auto eval = RunCli("model eval --help");
  EXPECT_EQ(eval.status, 0) << eval.err;
  for (const char* opt :
       {"--db", "--op", "--target", "--objective", "--model", "--split", "--folds", "--top-k", "--json"}) {
    EXPECT_NE(eval.out.find(opt), std::string::npos) << opt << "\n" << eval.out;
  }
  auto tune = RunCli("tune --help");
  EXPECT_EQ(tune.status, 0) << tune.err;
  for (const char* opt : {"--model", "--cost-model"}) EXPECT_NE(tune.out.find(opt), std::string::npos) << opt;
}

TEST_F(ModelCli, TrainWritesAModelFileOrStoresItInTheDatabase) {
  {
    SCOPED_TRACE("--out");
    const std::string out = dir_ + "trained.json";
    auto r = RunCli("model train --db " + db_ + " --target cpu --out " + out);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find(out), std::string::npos) << "says where the model went:\n" << r.err;
    ASSERT_TRUE(fs::exists(out));
    const json j = ParseJson(ReadFile(out));
    ASSERT_FALSE(j.is_discarded()) << "XGBoost JSON";
    ASSERT_TRUE(j.contains("learner")) << j.dump().substr(0, 500);
    const json& attrs = j["learner"]["attributes"];
    EXPECT_EQ(attrs["autotune_feature_version"], autotune::costmodel::kFeatureVersion) << attrs.dump();
    EXPECT_EQ(attrs["autotune_target"], "cpu") << attrs.dump();
    EXPECT_EQ(attrs["autotune_objective"], "weighted-regression") << attrs.dump();
    EXPECT_EQ(attrs["autotune_records"], std::to_string(valid_)) << "learned from every valid record";
  }
  {
    SCOPED_TRACE("--objective pairwise --rounds --seed, to stdout");
    auto r = RunCli("model train --db " + db_ + " --target cpu --objective pairwise --rounds 5 --seed 7 --out -");
    ASSERT_EQ(r.status, 0) << r.err;
    const json j = ParseJson(r.out);
    ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 500);
    EXPECT_EQ(j["learner"]["attributes"]["autotune_objective"], "pairwise");
  }
  {
    SCOPED_TRACE("--leave-out");
    auto r = RunCli("model train --db " + db_ + " --target cpu --leave-out batch_matmul:B=2,M=16,N=16,K=16 --out -");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("of 1 workload "), std::string::npos) << "the gemm records only:\n" << r.err;
    const json j = ParseJson(r.out);
    ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 500);
    const int64_t records = std::stoll(j["learner"]["attributes"]["autotune_records"].get<std::string>());
    EXPECT_GT(records, 0);
    EXPECT_LT(records, valid_);
  }
  {
    SCOPED_TRACE("--save-as");
    const std::string db = CopyDb("save_as.db");
    EXPECT_EQ(DbStats(db)["cost_models"], 0);
    auto r = RunCli("model train --db " + db + " --target cpu --objective regression --save-as base");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("'base'"), std::string::npos) << r.err;
    const json stats = DbStats(db);
    EXPECT_EQ(stats["cost_models"], 1) << stats.dump(2);
    EXPECT_EQ(stats["records"], valid_) << "the records are left as they were";
    // The stored model is what `eval --model NAME` scores with.
    auto eval = RunCli("model eval --db " + db + " --target cpu --model base --json -");
    ASSERT_EQ(eval.status, 0) << eval.err;
    const json j = ParseJson(eval.out);
    ASSERT_FALSE(j.is_discarded()) << eval.out;
    ASSERT_EQ(j["results"].size(), 1u);
    EXPECT_EQ(j["results"][0]["folds"], 0);
    EXPECT_NE(j["results"][0]["model"].get<std::string>().find("base"), std::string::npos);
    EXPECT_NE(j["results"][0]["model"].get<std::string>().find("regression"), std::string::npos);
  }
}

TEST_F(ModelCli, EvalCrossValidatesAndScoresAGivenModel) {
  {
    SCOPED_TRACE("--split random");
    const json j = Eval("--split random --top-k 5");
    EXPECT_EQ(j["records"], valid_);
    EXPECT_EQ(j["workloads"], workloads_);
    EXPECT_EQ(j["op"], "");
    ASSERT_EQ(j["results"].size(), 1u) << j.dump(2);
    const json& r = j["results"][0];
    CheckResult(r, valid_);
    EXPECT_EQ(r["model"], "weighted-regression");
    EXPECT_EQ(r["split"], "random");
    EXPECT_EQ(r["folds"], 5);
    EXPECT_EQ(r["k"], 5);
  }
  {
    SCOPED_TRACE("--objective all");
    const json j = Eval("--split random --objective all --folds 3");
    ASSERT_EQ(j["results"].size(), 3u) << j.dump(2);
    std::vector<std::string> models;
    for (const auto& r : j["results"]) {
      CheckResult(r, valid_);
      EXPECT_EQ(r["folds"], 3);
      models.push_back(r["model"]);
    }
    EXPECT_EQ(models, (std::vector<std::string>{"pairwise", "regression", "weighted-regression"}));
  }
  {
    SCOPED_TRACE("--split workload (the default) with 2 workloads");
    const json j = Eval("");
    ASSERT_EQ(j["results"].size(), 1u) << j.dump(2);
    const json& r = j["results"][0];
    CheckResult(r, valid_);
    EXPECT_EQ(r["split"], "workload");
    EXPECT_EQ(r["folds"], 2) << "one fold per workload when there are fewer workloads than folds";
    EXPECT_EQ(r["workloads"], workloads_);
  }
  {
    SCOPED_TRACE("--split workload with one workload's records");
    const std::string args = "model eval --db " + db_ + " --target cpu --op gemm --split workload";
    ExpectUserError(RunCli(args), args, "split by workload", /*after_reading=*/true);
    // At random, the same records do.
    const json j = Eval("--op gemm --split random");
    EXPECT_EQ(j["op"], "gemm");
    EXPECT_EQ(j["workloads"], 1);
    ASSERT_EQ(j["results"].size(), 1u);
    EXPECT_GT(j["results"][0]["records"].get<int64_t>(), 0);
    EXPECT_LT(j["results"][0]["records"].get<int64_t>(), valid_);
  }
  {
    SCOPED_TRACE("--model FILE");
    const json j = Eval("--model " + model_);
    EXPECT_EQ(j["records"], valid_);
    ASSERT_EQ(j["results"].size(), 1u) << j.dump(2);
    const json& r = j["results"][0];
    CheckResult(r, valid_);
    EXPECT_EQ(r["folds"], 0) << "scores the given model, no cross-validation";
    EXPECT_NE(r["model"].get<std::string>().find(model_), std::string::npos) << r.dump();
  }
  {
    SCOPED_TRACE("a table without --json");
    auto r = RunCli("model eval --db " + db_ + " --target cpu --split random --top-k 3");
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char* word : {"model", "split", "folds", "records", "pairwise", "spearman", "top-3",
                             "weighted-regression", "random"}) {
      EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << r.out;
    }
    EXPECT_EQ(Lines(r.out), 2) << r.out;
  }
}

// Every fold of a random split holds records of every workload: each still counts once.
TEST_F(ModelCli, EvalAtRandomCountsEachWorkloadOnce) {
  const json j = Eval("--split random");
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["workloads"], j["workloads"]) << j.dump(2);
}

// Candidates are tuned briefly: TuneFromAModelMeasuresOnCpu checks that they are measured.
const std::string kBriefTune = " --trials 2 --batch-size 2 --run-timeout 1";

TEST_F(ModelCli, TuneStartsFromAModelFileOrAStoredModel) {
  const std::string db = CopyDb("tune_model.db");
  const int64_t before = DbStats(db)["records"];
  {
    SCOPED_TRACE("--model FILE");
    const std::string report = dir_ + "tune_file.json";
    auto r = RunCli("tune --op gemm --shape M=16,N=16,K=16" + kFast + kBriefTune + " --db " + db + " --model " +
                    model_ + " --json " + report);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("starting from the weighted-regression cost model '" + model_ + "'"), std::string::npos)
        << r.err;
    const json j = ParseJson(ReadFile(report));
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["cost_model"], "xgboost") << "--model implies --cost-model xgboost";
    EXPECT_EQ(j["model"], model_);
    ASSERT_EQ(j["tasks"].size(), 1u);
    EXPECT_EQ(j["tasks"][0]["trials"], 2);
    EXPECT_EQ(j["interrupted"], false);
  }
  {
    SCOPED_TRACE("--model NAME");
    auto save = RunCli("model train --db " + db + " --target cpu --save-as cpu-base");
    ASSERT_EQ(save.status, 0) << save.err;
    const std::string report = dir_ + "tune_name.json";
    auto r = RunCli("tune --op batch_matmul --shape B=1,M=16,N=16,K=8" + kFast + kBriefTune + " --db " + db +
                    " --model cpu-base --cost-model xgboost --json " + report);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("starting from the weighted-regression cost model 'cpu-base'"), std::string::npos) << r.err;
    const json j = ParseJson(ReadFile(report));
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["cost_model"], "xgboost");
    EXPECT_EQ(j["model"], "cpu-base");
    ASSERT_EQ(j["tasks"].size(), 1u);
    EXPECT_EQ(j["tasks"][0]["trials"], 2);
  }
  {
    SCOPED_TRACE("--model none");
    const std::string report = dir_ + "tune_none.json";
    auto r = RunCli("tune --op gemm --shape M=16,N=16,K=32" + kFast + kBriefTune + " --db " + db +
                    " --model none --json " + report);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("starting from"), std::string::npos) << "a cold start loads no model:\n" << r.err;
    const json j = ParseJson(ReadFile(report));
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["cost_model"], "xgboost");
    EXPECT_TRUE(j["model"].is_null()) << j.dump(2);
  }
  EXPECT_EQ(DbStats(db)["records"], before + 6) << "the three jobs stored their measurements";
}

// A loaded model's XGBoost (OpenMP) threads must not reach the runner's forked children: every
// candidate is measured.
TEST_F(ModelCli, TuneFromAModelMeasuresOnCpu) {
  const std::string db = CopyDb("tune_model_measures.db"), report = dir_ + "tune_measures.json";
  auto r = RunCli("tune --op gemm --shape M=16,N=32,K=16" + kFast + " --trials 8 --batch-size 8 --run-timeout 5 --db " +
                  db + " --model " + model_ + " --json " + report);
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = ParseJson(ReadFile(report));
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["tasks"].size(), 1u);
  EXPECT_EQ(j["tasks"][0]["failed"], 0) << r.err;
  EXPECT_TRUE(j["tasks"][0]["best_latency_ms"].is_number()) << j["tasks"][0].dump();
}

TEST_F(ModelCli, TuneRefusesABadModelBeforeMeasuring) {
  const std::string db = CopyDb("tune_bad_model.db");
  const int64_t before = DbStats(db)["records"];
  const std::string garbage = dir_ + "garbage_model.json";
  std::ofstream(garbage) << "these are notes, not a model\n";
  const std::string old_version = EditedModel(
      "old_features.json", std::string("\"autotune_feature_version\":\"") + autotune::costmodel::kFeatureVersion + "\"",
      "\"autotune_feature_version\":\"v0-older\"");
  const std::string cuda_model =
      EditedModel("cuda_model.json", "\"autotune_target\":\"cpu\"", "\"autotune_target\":\"cuda:sm_90\"");
  struct Case {
    std::string args, expect;
  };
  const std::string tune = "tune --op gemm --shape M=8,N=8,K=8" + kFast + " --trials 4 --batch-size 4 --db " + db;
  const std::vector<Case> cases = {
      {tune + " --model " + dir_ + "missing-model.json", "missing-model.json"},
      {tune + " --model no-such-name", "no-such-name"},
      {tune + " --model " + garbage, "not an XGBoost model"},
      {tune + " --model " + old_version, "retrain"},
      {tune + " --model " + cuda_model, "cuda:sm_90"},
      {tune + " --model " + model_ + " --cost-model random", "--cost-model xgboost"},
      {tune + " --cost-model forest", "unknown cost model 'forest'"},
  };
  for (const auto& c : cases) {
    auto r = RunCli(c.args);
    ExpectUserError(r, c.args, c.expect);
    EXPECT_EQ(r.err.find("tuning 1 task"), std::string::npos) << c.args << "\n" << r.err;
  }
  EXPECT_EQ(DbStats(db)["records"], before) << "nothing was measured";
  {
    const std::string args = tune + " --model " + old_version;
    auto r = RunCli(args);
    EXPECT_NE(r.err.find("autotune model train"), std::string::npos) << "says how to retrain:\n" << r.err;
    EXPECT_NE(r.err.find("v0-older"), std::string::npos) << r.err;
  }
}

TEST_F(ModelCli, BuiltinListsTheModelsAndWritesOneOut) {
  auto list = RunCli("model builtin");
  ASSERT_EQ(list.status, 0) << list.err;
  EXPECT_NE(list.out.find("cuda:sm_90"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find(autotune::costmodel::kFeatureVersion), std::string::npos) << "it loads:\n" << list.out;
  const std::string out = dir_ + "builtin_sm90.json";
  auto r = RunCli("model builtin --target cuda:sm_90 --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = ParseJson(ReadFile(out));
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["learner"]["attributes"]["autotune_target"], "cuda:sm_90");
}

// The GPU records kept in the repository (costmodel/pretrained/records: what the built-in model is
// retrained from) import, and every one of them still replays and featurizes with this build: a
// change to the trace format or the schedule rules that breaks them fails here, not when the model
// has to be retrained.
TEST(ModelCliRecords, KeptRecordsImportAndTrainWithThisBuild) {
  const fs::path dir = AUTOTUNE_RECORDS_DIR;
  if (!fs::is_directory(dir)) GTEST_SKIP() << dir << " is not here (a bundle on another machine)";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".xz") continue;
    ++files;
    SCOPED_TRACE(entry.path().string());
    const std::string jsonl = autotune::testing::TestTempPath("autotune_records", std::to_string(files) + ".jsonl");
    const std::string db = autotune::testing::TestTempPath("autotune_records", std::to_string(files) + ".db");
    ASSERT_EQ(std::system(("xz -dc '" + entry.path().string() + "' > '" + jsonl + "'").c_str()), 0);
    auto imported = RunCli("db import --json --db " + db + " --in " + jsonl);
    ASSERT_EQ(imported.status, 0) << imported.err;
    const json counts = ParseJson(imported.out);
    ASSERT_FALSE(counts.is_discarded()) << imported.out;
    EXPECT_GT(counts.value("added", 0), 0) << imported.out;
    auto trained = RunCli("model train --db " + db + " --target cuda:sm_90 --out " + db + ".model");
    ASSERT_EQ(trained.status, 0) << trained.err;
    EXPECT_NE(trained.err.find(" 0 no longer replay"), std::string::npos) << trained.err;
  }
  EXPECT_GT(files, 0) << "no .jsonl.xz in " << dir;
}

TEST_F(ModelCli, BadInputIsOneClearLineAndStatusTwo) {
  const std::string garbage = dir_ + "not_a_model.json";
  std::ofstream(garbage) << "{\"this\": \"is json, but not a model\"}\n";
  const std::string text_file = dir_ + "notes.txt";
  std::ofstream(text_file) << "these are notes, not a model\n";
  const std::string old_version = EditedModel(
      "old_features_eval.json",
      std::string("\"autotune_feature_version\":\"") + autotune::costmodel::kFeatureVersion + "\"",
      "\"autotune_feature_version\":\"v1-plain-25\"");
  const std::string missing_db = dir_ + "missing.db";
  const std::string out = dir_ + "bad_out.json";
  const std::string train = "model train --db " + db_ + " --target cpu";
  const std::string eval = "model eval --db " + db_ + " --target cpu";
  struct Case {
    std::string args, expect;
    bool after_reading = false;
  };
  const std::vector<Case> cases = {
      {train, "--out"},
      {train + " --objective lambdamart --out " + out, "unknown objective 'lambdamart'"},
      {eval + " --objective lambdamart", "unknown objective 'lambdamart'"},
      {eval + " --split fold", "unknown split 'fold'"},
      {"model train --db " + missing_db + " --target cpu --out " + out, missing_db},
      {"model eval --db " + missing_db + " --target cpu", missing_db},
      {"model train --db " + db_ + " --target gpu --out " + out, "gpu"},
      {"model train --db " + db_ + " --target cuda --out " + out, "no valid cuda records", true},
      {"model eval --db " + db_ + " --target cuda", "no valid cuda records", true},
      {train + " --op conv2d --out " + out, "conv2d"},
      {eval + " --op conv2d", "conv2d"},
      {eval + " --model " + text_file, "not an XGBoost model"},
      {eval + " --model " + garbage, garbage},
      {eval + " --model " + old_version, "retrain"},
      {eval + " --model " + dir_ + "missing-model.json", "missing-model.json"},
      {eval + " --folds 1", "--folds"},
      {"model train --db " + missing_db + " --target cpu --save-as m", missing_db},
      {"model eval --db " + db_ + " --target cuda --model " + model_, "trained on cpu records, not cuda"},
      {"model --db " + db_, "subcommand"},
      {train + " --leave-out gemm --out " + out, "expected OP:SHAPE"},
      {"model builtin --target cuda:sm_80 --out " + out, "no built-in cost model of 'cuda:sm_80'"},
      {"model builtin --out " + out, "--out and --target go together"},
      {train + " --leave-out gemm:M=32,N=32 --out " + out, "missing parameter K"},
      {train + " --leave-out gemm:M=8,N=8,K=8 --out " + out, "no records of that workload"},
  };
  for (const auto& c : cases) ExpectUserError(RunCli(c.args), c.args, c.expect, c.after_reading);
  EXPECT_FALSE(fs::exists(out)) << "no model file is written for a command line that is wrong";
  EXPECT_FALSE(fs::exists(missing_db)) << "reading a database that is not there does not make one";
}

}  // namespace
