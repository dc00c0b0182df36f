// Shares one trial budget among the tasks of a job: each round goes to the task whose next round is
// expected to reduce the weighted total latency (sum of weight * best latency) the most, after every
// task got a first round (Ansor's gradient-based task scheduler is the reference point).
//
// A round counts from when it is proposed (Start), not only once its result is in (Record): with
// overlapping rounds, two or three are out at once, and a rule that saw only recorded rounds would
// give a task whose first round is still being measured its second and third at once. (It did: a
// 16-layer network of 2,000 trials in rounds of 64 gave the first ten layers three rounds each and
// the last five none.)
//
// The rule Next() follows, deterministic (no randomness; ties go to the lower index), over the
// tasks that are not finished:
//  1. A task that has had no round yet (none proposed): the first such task, in order.
//  2. A task with no valid latency yet (+infinity) that has had fewer than kNoResultPriorityRounds
//     rounds: the one with the fewest rounds. Such a task makes the objective infinite, so it gets a
//     few rounds before anything else, but not forever: a workload whose every candidate fails must
//     not eat the budget of the others. A task none of whose rounds is recorded yet is not known to
//     lack a latency: it waits for its first result.
//  3. Otherwise the task with the largest expected reduction of weight * latency from one more
//     round: weight * (recent + kOptimism * optimistic), where
//       recent     = the backward-window gradient: the drop of its best latency per trial over its
//                    last kBackwardWindow rounds (counting only rounds that had a latency), times the
//                    trials of one of its rounds (its trials so far / its rounds);
//       optimistic = latency / rounds so far: the per-round gain if the latency kept falling to zero
//                    at its average rate so far (Ansor's forward estimate). It shrinks as the task gets
//                    rounds, so a stalled task still gets one now and then, and is never starved.
//     Ansor adds the two with weights 0.2 and 0.8; we weight the optimistic term by 0.1 so that a task
//     that is improving gets more rounds than a stalled one of the same weight. Rounds still out
//     count in `rounds so far` (their gain is not known yet, but they are spent).
//     A task still without a latency after its priority rounds competes with the optimistic term
//     alone, using as its latency the largest best latency of any task (the worst case we know);
//     when no task has a latency at all, the unfinished task with the fewest rounds goes next, and so
//     does it when every unfinished task waits for its first result.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace autotune::search {

// The size of a task's first round: `batch_size`, unless the `trials_left` would then not reach the
// `tasks_without_round` (this one included) with a round each; then an equal share of them (at least
// 1). A network of 24 layers at 1,000 trials in rounds of 64 gives every layer 41 instead of the last
// eight none.
int FirstRoundSize(int trials_left, int tasks_without_round, int batch_size);

class TaskScheduler {
 public:
  // weights[i] > 0: how often task i occurs.
  explicit TaskScheduler(std::vector<double> weights);

  // The task of the next round; -1 when every task is finished (see Finish).
  int Next() const;
  // A round of `task` was proposed; it counts as a round whose result is not in until its Record.
  void Start(int task);
  // After a round of `task` (it ends one started round, if any): its best latency so far (ms;
  // +infinity while nothing valid was measured) and the trials it has used in all (never fewer than
  // before). A best latency above the one recorded before (a re-measured best that came out slower)
  // keeps the earlier one.
  void Record(int task, double best_latency_ms, int trials);
  // A task whose space is exhausted (nothing new to measure) gets no more rounds.
  void Finish(int task);
  // The objective: sum over tasks of weight * best latency (+infinity while a task has none).
  // Finished tasks count with their last best latency.
  double WeightedLatency() const;

  // Rounds of `task` so far: recorded and still out.
  int Rounds(int task) const;
  // What rule 3 above expects one more round of `task` to gain (weight * ms); +infinity for a task
  // that rules 1 or 2 would pick; 0 for a task without a latency while no task has one, and for a task
  // whose first round is still out. For progress displays and tests.
  double ExpectedGain(int task) const;

  static constexpr int kBackwardWindow = 3;
  static constexpr double kOptimism = 0.1;
  static constexpr int kNoResultPriorityRounds = 3;

 private:
  std::vector<double> weights_;
  std::vector<std::vector<std::pair<int, double>>> history_;  // per task: (trials, best ms) after each round
  std::vector<bool> finished_;
  std::vector<int> out_;  // per task: rounds started and not recorded yet

  double WorstKnownLatency() const;
  bool HasPriority(int task) const;  // rules 1 and 2
  double Gain(int task, double worst_known) const;  // rule 3
};

}  // namespace autotune::search
