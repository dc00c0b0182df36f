// The cost models built into autotune: each loads with this build's features (a change of the
// features must come with retrained models), says what it was trained on, and ranks.
#include "costmodel/pretrained_models.h"

#include <gtest/gtest.h>

#include <set>

#include "costmodel/program_features.h"
#include "costmodel/xgboost_model.h"
#include "search/default_schedule.h"
#include "tir/ops/operator.h"
#include "tir/schedule/schedule.h"

namespace autotune::costmodel {
namespace {

TEST(PretrainedModels, EachLoadsWithThisBuildsFeaturesAndNamesItsTarget) {
  ASSERT_FALSE(PretrainedModels().empty());
  for (const PretrainedModel& m : PretrainedModels()) {
    SCOPED_TRACE(std::string(m.target));
    XGBoostConfig config;
    config.threads = 1;
    XGBoostCostModel model(config);
    auto info = model.Load(std::string(m.bytes));
    ASSERT_TRUE(info) << info.error().message
                      << "\n(retrain it: costmodel/pretrained/README.md says from what and how)";
    EXPECT_EQ(info->feature_version, kFeatureVersion);
    EXPECT_EQ(info->target, m.target);
    EXPECT_GE(info->records, 10000);
    EXPECT_TRUE(model.Steers()) << "a loaded model ranks from the first round";
  }
}

TEST(PretrainedModels, FoundByTargetOnly) {
  ASSERT_TRUE(FindPretrainedModel("cuda:sm_90").has_value());
  EXPECT_EQ(FindPretrainedModel("cuda:sm_90")->target, "cuda:sm_90");
  EXPECT_FALSE(FindPretrainedModel("cuda:sm_80").has_value()) << "another GPU generation: no model, a cold start";
  EXPECT_FALSE(FindPretrainedModel("cuda").has_value());
  EXPECT_FALSE(FindPretrainedModel("cpu:x86_64").has_value());
}

// Sampled CUDA schedules of a shape outside the records get many distinct scores, not a constant.
TEST(PretrainedModels, TheH200ModelTellsSchedulesApart) {
  XGBoostConfig config;
  config.threads = 1;
  XGBoostCostModel model(config);
  ASSERT_TRUE(model.Load(std::string(FindPretrainedModel("cuda:sm_90")->bytes)));
  const tir::Workload w = *tir::MakeWorkload("gemm", "M=768,N=2048,K=512");
  std::vector<tir::Schedule> schedules;
  for (uint64_t seed = 1; schedules.size() < 40 && seed < 400; ++seed) {
    auto s = search::RandomSchedule(w, tir::TargetKind::kCuda, seed);
    if (s) schedules.push_back(std::move(*s));
  }
  ASSERT_GE(schedules.size(), 40u);
  std::vector<const tir::Schedule*> ptrs;
  for (const auto& s : schedules) ptrs.push_back(&s);
  const std::vector<double> scores = model.Predict(w, ptrs);
  ASSERT_EQ(scores.size(), schedules.size());
  EXPECT_GE(std::set<double>(scores.begin(), scores.end()).size(), 20u);
}

}  // namespace
}  // namespace autotune::costmodel
