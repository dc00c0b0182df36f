// How well scores rank records: what `autotune model eval` reports on held-out records. Rankings are
// only compared within a group (one workload on one device): latencies of different workloads are
// not comparable, and the search only ever ranks candidates of one workload.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace autotune::costmodel {

struct RankingMetrics {
  // Share of pairs of one group with different latencies that the scores order right (a tie in the
  // scores counts half).
  double pairwise_accuracy = 0;
  int64_t pairs = 0;
  // Spearman's rank correlation of score and speed (1 / latency), averaged over groups of 3 or more.
  double spearman = 0;
  // Share of each group's true k fastest found among its k best-scored, averaged over groups.
  double top_k_recall = 0;
  int k = 0;
  int64_t records = 0;
  int groups = 0;
};

// `scores`: higher = predicted faster. Groups smaller than 2 records have no pairs and are skipped.
RankingMetrics EvaluateRanking(const std::vector<double>& scores, const std::vector<double>& latencies_ms,
                               const std::vector<std::string>& groups, int k);

}  // namespace autotune::costmodel
