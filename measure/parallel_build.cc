#include "measure/parallel_build.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <thread>

namespace autotune::measure {

std::vector<size_t> LargestFirst(const std::vector<BuildInput>& inputs, tir::LoopExpanded expanded) {
  std::vector<int64_t> size(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) size[i] = tir::UnrolledStatementCount(inputs[i].func.body, expanded);
  std::vector<size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return size[a] > size[b]; });
  return order;
}

std::vector<BuildResult> BuildInParallel(const std::vector<BuildInput>& inputs, CompileSlots& slots,
                                         const std::function<BuildResult(const BuildInput&)>& build_one,
                                         tir::LoopExpanded expanded, const Builder::OnBuilt& on_built) {
  std::vector<BuildResult> results(inputs.size());
  if (inputs.empty()) return results;
  const std::vector<size_t> order = LargestFirst(inputs, expanded);
  const size_t n = std::max<size_t>(1, std::min(static_cast<size_t>(slots.size()), inputs.size()));
  const uint64_t call = slots.Enter();
  std::atomic<size_t> next{0};
  auto work = [&] {
    if (next.load() >= order.size()) return;  // the others took every compile while this one started
    slots.Acquire(call);
    for (size_t k; (k = next.fetch_add(1)) < order.size();) {
      results[order[k]] = build_one(inputs[order[k]]);
      if (on_built) on_built(order[k], results[order[k]]);
      if (next.load() < order.size()) slots.Yield(call);  // an older batch's compiles go first
    }
    slots.Release();
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return results;
}

}  // namespace autotune::measure
