// A CPU library's operator on the inputs `autotune measure --save-io` saved: what tools/cpu_peer
// times next to autotune's kernel. A library may offer several ways to call it on the same tensors
// (oneDNN: on the plain layouts, or on its own blocked ones with the reorders timed); each is a
// variant, and the fastest is the library's figure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/io_dump.h"
#include "support/result.h"
#include "tir/ops/operator.h"

namespace autotune::cpu_peer {

// The saved workload: its io.json and its inputs, in the workload's input order.
struct SavedWorkload {
  nlohmann::json manifest;
  std::vector<measure::NpyArray> inputs;
  std::vector<int64_t> out_shape;
  tir::Epilogue epilogue;
  int64_t Param(const std::string& name) const;  // a shape parameter (0 when absent)
};

struct PeerVariant {
  std::string name;           // e.g. "sgemm", "plain layouts", "blocked layouts + reorders"
  std::function<void()> call;  // one run: the saved inputs to `out`
};

struct PeerKernel {
  std::string library;  // name and version
  std::vector<PeerVariant> variants;
};

// OpenBLAS's cblas_sgemm for gemm and batch_matmul (one call per batch), the epilogue applied by a
// pass over the output. Fails for other operators or where autotune was built without OpenBLAS.
Result<PeerKernel> MakeOpenBlasKernel(const SavedWorkload& w, float* out);

// oneDNN's convolution (conv1d, conv2d, conv3d; groups, stride, padding and dilation), the
// epilogue as its bias and post-ops. Fails for other operators or without oneDNN.
Result<PeerKernel> MakeOneDnnKernel(const SavedWorkload& w, float* out);

// Applies the epilogue's parts in order to out[rows x channels x inner] in place, each part one pass,
// with `inputs` the epilogue's inputs in the order of its parts (per-channel or of the output's shape).
void ApplyEpilogue(const tir::Epilogue& epilogue, const std::vector<const float*>& inputs, int64_t rows,
                   int64_t channels, int64_t inner, float* out);

}  // namespace autotune::cpu_peer
