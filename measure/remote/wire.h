// What travels between a tuning job and a measurement worker (proto/measurement.proto), converted
// to and from the measure module's own types, with the protocol's limits checked on the way in: a
// request that breaks them is refused as a whole (the caller answers INVALID_ARGUMENT or
// RESOURCE_EXHAUSTED), never half-measured.
#pragma once

#include <autotune/proto/measurement.pb.h>

#include <cstddef>
#include <string>

#include "measure/builder.h"
#include "measure/measure_config.h"
#include "measure/measure_result.h"
#include "support/result.h"

namespace autotune::measure::remote {

inline constexpr size_t kMaxMessageBytes = size_t{64} << 20;  // a request or a reply
inline constexpr size_t kMaxSourceBytes = size_t{4} << 20;    // one candidate's source
inline constexpr int kMaxCandidates = 4096;                   // per request
inline constexpr int kMaxKernels = 64;                        // per candidate (cuda)
inline constexpr int64_t kMaxPackedElements = int64_t{1} << 32;  // a packed input (cpu): 16 GiB of float32
inline constexpr int kMaxRepeats = 1000;

// ---- job side ----
// A generated, not yet compiled candidate (what CodegenBuilder makes) as a request's candidate.
void ToWire(const BuildResult& generated, rpc::Candidate* out);
void ToWire(const MeasureConfig& config, rpc::Settings* out);
// A worker's result; an unknown error kind or a malformed value is a RUN_ERROR naming the worker.
MeasureResult FromWire(const rpc::CandidateResult& r);

// ---- worker side ----
// A request's candidate as a build input; errors name what is wrong.
Result<BuildInput> FromWire(const rpc::Candidate& c, bool cuda);
// The job's settings over the worker's own configuration; timeouts never exceed the worker's.
Result<MeasureConfig> ApplySettings(const rpc::Settings& s, const MeasureConfig& worker);
void ToWire(int index, const MeasureResult& result, const BuildResult* build, rpc::CandidateResult* out);

}  // namespace autotune::measure::remote
