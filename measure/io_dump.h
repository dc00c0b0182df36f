// Saving what a measurement computed on, for other tools (`autotune measure --save-io DIR`): the
// workload's random inputs and the candidate's checked output, as NumPy .npy files, so that a peer
// (scripts/peer_bench.py --inputs DIR) can run its own operator on the very same data and compare.
//
// Layout of DIR:
//   input0.npy, input1.npy, ...  the inputs in the workload's input order (MakeRandomInputs(seed)
//                                rounded to their element types: the data every runner and the
//                                CUDA executor use)
//   output.npy                   the output of the candidate's checked run (written by the runner's
//                                child process when MeasureConfig::save_outputs is set)
//   output_<name>.npy            each side output (add_rms_norm's output_sum.npy), likewise
//   io.json                      {"format": "autotune-io-1", "workload", "op", "shape" (an object),
//                                 "shape_text" (canonical order: "M=..,N=..,K=.."), "epilogue",
//                                 "seed", "dtype" (the workload's element type), "flops", "precision"
//                                 (ieee, tf32 or 3xtf32: how float32 products are computed),
//                                 "min_bytes", "tensors": [{"file", "role" ("input"|"output"),
//                                 "name", "shape", "dtype"}, ...]} (the measure command adds the
//                                 run's verdict)
// Files are .npy format 1.0: little-endian float32 ('<f4'), C order, with the tensor's shape; 16-bit
// tensors are widened exactly, so a peer converts them back to their type without loss.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/measure_config.h"
#include "tir/ops/workload.h"
#include "support/result.h"

namespace autotune::measure {

inline constexpr const char* kSavedOutputFile = "output.npy";
inline constexpr const char* kIoManifestFile = "io.json";

// The file name of input i ("input0.npy", ...).
std::string SavedInputFile(size_t i);
// The file name of output i of Workload::Outputs(): the output's is kSavedOutputFile.
std::string SavedOutputFile(const tir::Workload& w, size_t i);

// Writes n floats with this shape (its product must be n; empty: 1-D) to `path` as .npy.
Result<void> WriteNpy(const std::string& path, const float* data, int64_t n, const std::vector<int64_t>& shape);

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
};
// Reads a little-endian float32, C-order .npy (what WriteNpy and numpy.save write).
Result<NpyArray> ReadNpy(const std::string& path);

// Writes the workload's inputs for `seed` as DIR/input<i>.npy (DIR is created if missing).
Result<void> SaveInputs(const tir::Workload& w, uint64_t seed, const std::string& dir);

// Writes the outputs of a checked run, `values` holding them one after the other (OutputLayout).
Result<void> WriteSavedOutputs(const std::vector<MeasureConfig::SavedOutput>& files, const float* values);

// The io.json manifest of a saved workload (inputs, and the outputs when `with_output`).
nlohmann::json IoManifest(const tir::Workload& w, uint64_t seed, bool with_output);

}  // namespace autotune::measure
