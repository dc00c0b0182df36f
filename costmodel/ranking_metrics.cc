#include "costmodel/ranking_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace autotune::costmodel {
namespace {

// Ranks 1..n with ties given their average rank.
std::vector<double> AverageRanks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t t = i; t <= j; ++t) ranks[order[t]] = rank;
    i = j + 1;
  }
  return ranks;
}

double Pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n;
  const double mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

// The indices of the k largest values (ties broken by position, so the result is deterministic).
std::vector<size_t> TopK(const std::vector<double>& v, size_t k) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] > v[b]; });
  order.resize(std::min(k, order.size()));
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace

RankingMetrics EvaluateRanking(const std::vector<double>& scores, const std::vector<double>& latencies_ms,
                               const std::vector<std::string>& groups, int k) {
  RankingMetrics m;
  m.k = k;
  std::map<std::string, std::vector<size_t>> members;
  for (size_t i = 0; i < groups.size() && i < scores.size() && i < latencies_ms.size(); ++i) {
    members[groups[i]].push_back(i);
  }
  double right = 0, spearman_sum = 0, recall_sum = 0;
  int spearman_groups = 0;
  for (const auto& [group, idx] : members) {
    if (idx.size() < 2) continue;
    ++m.groups;
    m.records += static_cast<int64_t>(idx.size());
    std::vector<double> s, speed;
    for (size_t i : idx) {
      s.push_back(scores[i]);
      speed.push_back(1.0 / latencies_ms[i]);
    }
    for (size_t a = 0; a < idx.size(); ++a) {
      for (size_t b = a + 1; b < idx.size(); ++b) {
        if (speed[a] == speed[b]) continue;
        ++m.pairs;
        if (s[a] == s[b]) {
          right += 0.5;
        } else if ((s[a] > s[b]) == (speed[a] > speed[b])) {
          right += 1;
        }
      }
    }
    if (idx.size() >= 3) {
      spearman_sum += Pearson(AverageRanks(s), AverageRanks(speed));
      ++spearman_groups;
    }
    const size_t kk = std::min<size_t>(std::max(1, k), idx.size());
    const auto best = TopK(speed, kk), picked = TopK(s, kk);
    std::vector<size_t> both;
    std::set_intersection(best.begin(), best.end(), picked.begin(), picked.end(), std::back_inserter(both));
    recall_sum += static_cast<double>(both.size()) / static_cast<double>(kk);
  }
  if (m.pairs > 0) m.pairwise_accuracy = right / static_cast<double>(m.pairs);
  if (spearman_groups > 0) m.spearman = spearman_sum / spearman_groups;
  if (m.groups > 0) m.top_k_recall = recall_sum / m.groups;
  return m;
}

}  // namespace autotune::costmodel
