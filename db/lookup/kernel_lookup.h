// The lookup service behind the C library (include/autotune/lookup.h) and `autotune lookup`: opens a
// tuning database read-only, loads the best records of every workload into memory and closes it,
// then answers "best kernel for (operator, shape, epilogue, target)".
//
// Exact answers come from the best valid record of that workload on a matching target (the fastest,
// when several targets match, e.g. "cuda" with records from two GPUs). With `nearest`, a workload
// without records is answered approximately: the best traces of the same operator and epilogue at the
// kNearestShapes nearest shapes (distance: sum over shape parameters of |log a - log b|) are replayed
// on the requested shape (tir/schedule/replay_on_shape.h), those that lower, pass the GPU validity
// check and generate code are kept, and the first by (shape distance, then measured GFLOP/s) is
// returned, flagged approximate. Ranking by throughput alone would favour the largest shapes, whose
// kernels run at higher GFLOP/s whatever their fit; until a stored cost model can rank candidates on
// the requested shape, the nearest measured shape is the best evidence.
//
// Every answer, and every "not found", is computed once per distinct query text and then served from
// memory: a query is a hash lookup under a shared lock. Queries that spell one workload differently
// (parameter order, defaults written out) share one answer. Answers live until the KernelLookup is
// destroyed, so the pointers handed out stay valid that long. The database is a snapshot taken at
// Open; records added later are seen by a new KernelLookup.
#pragma once

#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "db/lookup/kernel_source.h"
#include "db/record.h"

namespace autotune::db {

struct LookupQuery {
  std::string_view op;        // "conv2d"
  std::string_view shape;     // "N=1,C=64,..." (parameter order and defaults as `autotune ops` lists)
  std::string_view epilogue;  // "", "bias", "relu", "bias,relu"
  std::string_view target;    // "cuda", "cuda:sm_90", "cpu"
  bool nearest = false;       // allow an approximate answer from nearby shapes
  std::string_view dtype = "float32";  // "float32", "float16", "bfloat16", "tf32", "3xtf32"
};

struct LookupAnswer {
  KernelSource kernel;
  bool exact = true;
  std::string requested;           // canonical text of the requested workload
  std::vector<tir::TensorSpec> tensors;  // the kernel's tensors: the inputs, then the outputs
  int num_outputs = 1;                   // the last tensors, which the kernel writes
  std::string measured;            // canonical text of the workload whose record this is
  std::string target;              // TargetInfo::Text() of the record's target
  double latency_ms = 0;           // that record's measured median (at the measured shape)
  double gflops = 0;               // that record's measured throughput
  double estimated_latency_ms = 0; // exact: latency_ms; approximate: the requested FLOPs at `gflops`
  double shape_distance = 0;       // 0 for exact answers
  std::string trace_json;          // the trace as replayed on the requested shape
};

enum class LookupStatus { kOk, kNotFound, kInvalidArgument };

struct LookupResult {
  LookupStatus status = LookupStatus::kOk;
  const LookupAnswer* answer = nullptr;  // set when kOk; owned by the KernelLookup
  std::string message;                   // why not, when not kOk
};

class KernelLookup {
 public:
  static constexpr int kNearestShapes = 4;
  static constexpr int kRecordsPerWorkload = 3;  // best records kept per (workload, target)

  static Result<std::unique_ptr<KernelLookup>> Open(const std::string& db_path);
  ~KernelLookup();

  // Thread-safe.
  LookupResult Find(const LookupQuery& query);
  size_t num_records() const { return records_.size(); }
  size_t num_workloads() const { return by_workload_.size(); }

  struct Entry;  // a cached answer or failure (defined in kernel_lookup.cc)

 private:
  KernelLookup() = default;
  std::shared_ptr<const Entry> Compute(const LookupQuery& query);
  std::shared_ptr<const Entry> Answer(const tir::Workload& w, const TargetQuery& target, bool nearest) const;
  std::unique_ptr<Entry> ExactAnswer(const tir::Workload& w, const TargetQuery& target,
                                     std::string& last_problem) const;
  struct Neighbour {
    double distance;
    const std::vector<size_t>* records;  // into by_workload_
  };
  std::vector<Neighbour> NearestShapes(const tir::Workload& w, const TargetQuery& target) const;
  std::unique_ptr<Entry> NearestAnswer(const tir::Workload& w, const TargetQuery& target,
                                       const std::string& missing) const;

  std::vector<TuningRecord> records_;
  // workload key -> indices into records_, fastest first
  std::unordered_map<std::string, std::vector<size_t>> by_workload_;
  // op -> workload keys of that op
  std::unordered_map<std::string, std::vector<std::string>> workloads_of_op_;

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const Entry>> cache_;      // query text -> entry
  std::unordered_map<std::string, std::shared_ptr<const Entry>> canonical_;  // workload key|target|nearest -> entry
  size_t cached_failures_ = 0;
};

}  // namespace autotune::db
