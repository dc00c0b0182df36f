#include "db/lookup/kernel_lookup.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "db/database.h"
#include "measure/c_builder.h"
#include "measure/cpu_runner.h"
#include "search/default_schedule.h"
#include "tests/db/lookup/lookup_fixture.h"
#include "tir/ops/operator.h"

namespace autotune::db {
namespace {

namespace fs = std::filesystem;

class KernelLookupTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("kernel_lookup_test_" + std::to_string(getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    auto ok = testing::WriteLookupFixture(db_path());
    ASSERT_TRUE(ok) << ok.error().message;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string db_path() { return (*dir_ / "fixture.db").string(); }
  static fs::path* dir_;
};
fs::path* KernelLookupTest::dir_ = nullptr;

TEST_F(KernelLookupTest, ExactAnswerIsTheFastestValidRecordReplayed) {
  auto lookup = KernelLookup::Open(db_path());
  ASSERT_TRUE(lookup) << lookup.error().message;
  auto db = TuningDatabase::Open(db_path(), OpenMode::kReadOnly);
  ASSERT_TRUE(db);
  auto w = tir::MakeWorkload("gemm", "M=64,N=64,K=64");
  ASSERT_TRUE(w);
  auto best = (*db)->Best(w->Key(), TargetQuery{"cpu", ""}, 1);
  ASSERT_TRUE(best && best->size() == 1u);
  LookupResult r = (*lookup)->Find({"gemm", "M=64,N=64,K=64", "", "cpu", false});
  ASSERT_EQ(r.status, LookupStatus::kOk) << r.message;
  EXPECT_TRUE(r.answer->exact);
  EXPECT_DOUBLE_EQ(r.answer->latency_ms, 0.2);
  EXPECT_EQ(r.answer->trace_json, (*best)[0].trace_json);  // same schedule, not the wrong answer
  EXPECT_EQ(r.answer->kernel.language, "c");
  EXPECT_EQ(r.answer->target, testing::kTestCpu.Text());
}

TEST_F(KernelLookupTest, NearestAnswersRunCorrectlyOnTheirNewShape) {
  auto lookup = KernelLookup::Open(db_path());
  ASSERT_TRUE(lookup);
  measure::MeasureConfig config;
  config.repeats = 1;
  config.min_repeat_ms = 0;
  config.num_threads = 2;
  auto builder = measure::MakeCBuilder(config);
  auto runner = measure::MakeCpuRunner(config);
  struct Case {
    const char* op;
    const char* shape;
  };
  for (const Case& c : {Case{"gemm", "M=96,N=48,K=200"}, Case{"conv2d", "N=1,C=16,H=16,W=16,K=24,R=3,S=3,pad=1"}}) {
    LookupResult r = (*lookup)->Find({c.op, c.shape, "", "cpu", true});
    ASSERT_EQ(r.status, LookupStatus::kOk) << r.message;
    EXPECT_FALSE(r.answer->exact);
    EXPECT_GT(r.answer->shape_distance, 0);
    auto w = tir::MakeWorkload(c.op, c.shape);
    ASSERT_TRUE(w);
    EXPECT_EQ(r.answer->requested, w->CanonicalText());
    auto source = measure::BuildInput::FromSource(r.answer->kernel.code, r.answer->kernel.launches[0].entry,
                                                  r.answer->kernel.num_params);
    for (const KernelPack& p : r.answer->kernel.packs) {  // the convolution's weights, packed by its tiles
      int64_t elements = 1;
      for (int64_t d : p.shape) elements *= d;
      source.packs.push_back({p.param, p.entry, elements});
    }
    EXPECT_EQ(source.packs.size(), std::string(c.op) == "conv2d" ? 1u : 0u);
    auto builds = builder->Build({source});
    ASSERT_TRUE(builds[0].ok()) << builds[0].error_message;
    auto result = runner->Run(*w, builds).at(0);
    EXPECT_TRUE(result.ok() && result.correct) << c.op << ": " << result.error_message;
  }
}

TEST_F(KernelLookupTest, ConcurrentQueriesGetOneAnswerEach) {
  auto lookup = KernelLookup::Open(db_path());
  ASSERT_TRUE(lookup);
  const LookupQuery queries[] = {
      {"gemm", "M=64,N=64,K=64", "", "cpu", false},
      {"gemm", "M=256,N=256,K=256", "", "cuda:sm_90", false},
      {"gemm", "M=256,N=256,K=256", "", "cuda", false},
      {"gemm", "M=300,N=256,K=256", "", "cuda", true},
      {"conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", "", "cuda:sm_90", false},
      {"gemm", "M=100,N=100,K=100", "", "cpu", false},  // not found
  };
  constexpr int kThreads = 4;
  std::vector<std::vector<const LookupAnswer*>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        for (const auto& q : queries) seen[t].push_back((*lookup)->Find(q).answer);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
  for (size_t i = 0; i < std::size(queries); ++i) EXPECT_EQ(seen[0][i] == nullptr, i + 1 == std::size(queries)) << i;
}

TEST_F(KernelLookupTest, BadQueriesAreInvalidArgumentsAndMissingOnesNotFound) {
  auto lookup = KernelLookup::Open(db_path());
  ASSERT_TRUE(lookup);
  EXPECT_EQ((*lookup)->Find({"softmax", "N=4", "", "cpu", false}).status, LookupStatus::kInvalidArgument);
  EXPECT_EQ((*lookup)->Find({"gemm", "M=-1,N=4,K=4", "", "cpu", false}).status, LookupStatus::kInvalidArgument);
  EXPECT_EQ((*lookup)->Find({"gemm", "M=4,N=4,K=4", "", "gpu", false}).status, LookupStatus::kInvalidArgument);
  LookupResult missing = (*lookup)->Find({"gemm", "M=4,N=4,K=4", "", "cuda:sm_100", true});
  EXPECT_EQ(missing.status, LookupStatus::kNotFound);
  EXPECT_NE(missing.message.find("no valid record of gemm[M=4,N=4,K=4] on cuda:sm_100"), std::string::npos)
      << missing.message;
  // The answer is remembered: asking again gives the same message.
  EXPECT_EQ((*lookup)->Find({"gemm", "M=4,N=4,K=4", "", "cuda:sm_100", true}).message, missing.message);
}

TEST_F(KernelLookupTest, AHandleIsASnapshotOfTheDatabaseAtOpen) {
  const std::string path = (*dir_ / "snapshot.db").string();
  fs::copy_file(db_path(), path);
  auto before = KernelLookup::Open(path);
  ASSERT_TRUE(before);
  auto w = tir::MakeWorkload("gemm", "M=32,N=32,K=32");
  ASSERT_TRUE(w);
  auto sch = search::DefaultSchedule(*w, tir::TargetKind::kCpu);
  ASSERT_TRUE(sch);
  {
    auto db = TuningDatabase::Open(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE((*db)->CommitBatch({testing::MakeRecord(*sch, testing::kTestCpu, 0.01)}));
  }
  EXPECT_EQ((*before)->Find({"gemm", "M=32,N=32,K=32", "", "cpu", false}).status, LookupStatus::kNotFound);
  auto after = KernelLookup::Open(path);
  ASSERT_TRUE(after);
  EXPECT_EQ((*after)->Find({"gemm", "M=32,N=32,K=32", "", "cpu", false}).status, LookupStatus::kOk);
}

TEST_F(KernelLookupTest, AFileThatIsNotADatabaseIsAnError) {
  const std::string path = (*dir_ / "garbage.db").string();
  std::ofstream(path) << "this is not a database, just some text that is long enough to look like a header";
  auto lookup = KernelLookup::Open(path);
  ASSERT_FALSE(lookup);
  EXPECT_NE(lookup.error().message.find(path), std::string::npos) << lookup.error().message;
  EXPECT_FALSE(KernelLookup::Open((*dir_ / "missing.db").string()));
}

}  // namespace
}  // namespace autotune::db
