#include "measure/parallel_build.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <thread>

#include "tir/analysis/unrolled_size.h"

namespace autotune::measure {

std::vector<size_t> LargestFirst(const std::vector<BuildInput>& inputs) {
  std::vector<int64_t> size(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) size[i] = tir::UnrolledStatementCount(inputs[i].func.body);
  std::vector<size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return size[a] > size[b]; });
  return order;
}

std::vector<BuildResult> BuildInParallel(const std::vector<BuildInput>& inputs, int threads,
                                         const std::function<BuildResult(const BuildInput&)>& build_one) {
  std::vector<BuildResult> results(inputs.size());
  if (inputs.empty()) return results;
  const std::vector<size_t> order = LargestFirst(inputs);
  size_t n = threads > 0 ? static_cast<size_t>(threads) : std::thread::hardware_concurrency();
  n = std::max<size_t>(1, std::min(n, inputs.size()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1)) < order.size();) results[order[k]] = build_one(inputs[order[k]]);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return results;
}

}  // namespace autotune::measure
