// The random cost model: the search's ranking before a learned model exists (and a baseline to
// compare the learned one with). Its scores come from its own engine, so a search with it is as
// deterministic as the seed.
#include "costmodel/cost_model.h"

namespace autotune::costmodel {

namespace {

class RandomCostModel final : public CostModel {
 public:
  explicit RandomCostModel(uint64_t seed) : rng_(seed) {}
  std::string Name() const override { return "random"; }
  bool Steers() const override { return false; }
  std::vector<double> Predict(const tir::Workload&, const std::vector<const tir::Schedule*>& candidates) override {
    std::vector<double> scores(candidates.size());
    for (double& s : scores) s = rng_.UniformReal();
    return scores;
  }
  void Update(const tir::Workload&, const std::vector<const tir::Schedule*>&,
              const std::vector<std::optional<double>>&) override {}

 private:
  Random rng_;
};

}  // namespace

std::unique_ptr<CostModel> MakeRandomCostModel(uint64_t seed) { return std::make_unique<RandomCostModel>(seed); }

}  // namespace autotune::costmodel
