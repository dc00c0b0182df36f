// A workload: one operator at one shape with one epilogue. It carries the compute definition that
// schedules are applied to, and what measurement needs: argument specs, FLOPs, minimum bytes moved
// and a naive reference that accumulates in double.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tir/ops/precision.h"
#include "tir/ops/tensor_spec.h"

namespace autotune::tir {

namespace te {
struct ComputeDAG;
}

// Parameters in the operator's canonical order, e.g. {{"M",128},{"N",64},{"K",32}}.
using ShapeParams = std::vector<std::pair<std::string, int64_t>>;
// "M=128,N=64,K=32": what --shape takes back.
std::string ShapeText(const ShapeParams& shape);
// "op[K=v,...]" plus "+epilogue", plus ":float16", ":bfloat16", ":tf32" or ":3xtf32" (float32 is not
// named, so float32 keys stay what they were): how users see a workload, and the start of its key.
std::string CanonicalWorkloadText(const std::string& op, const ShapeParams& shape, const std::string& epilogue,
                                  const std::string& dtype);
// How far apart two shapes of one operator are: the sum over their parameters of |log a - log b|, so
// that doubling any one dimension counts the same at every size.
double ShapeDistance(const ShapeParams& a, const ShapeParams& b);

struct Workload {
  std::string op;
  ShapeParams shape;
  std::string epilogue;  // "" or its parts in order, e.g. "bias,relu" (Epilogue::Text)
  // How the tensors are laid out in memory (row-major, dimension order as written), e.g.
  // "A[M,K] B[K,N] -> C[M,N]". Part of the database key: a new layout is a different workload.
  std::string layout;
  std::vector<TensorSpec> inputs;
  TensorSpec output;
  // Tensors written besides the output (add_rms_norm's sum), of the output's element type: kernel
  // arguments after the inputs, before the output.
  std::vector<TensorSpec> side_outputs;
  Precision precision = Precision::kIEEE;  // of its products (float32 workloads; part of the key)
  double flops = 0;      // multiply-adds count two
  double min_bytes = 0;  // every input read once and the output written once
  // Computes the output from the inputs (float32 data, row-major; 16-bit inputs hold values already
  // rounded to their type) accumulating in double. With side outputs it writes all of Outputs(), one
  // after the other.
  std::function<void(const std::vector<const float*>& inputs, float* output)> reference;
  std::shared_ptr<const te::ComputeDAG> dag;

  // The number type's name: the output's element type, or the precision when not ieee (NumberType).
  std::string TypeName() const;
  // CanonicalWorkloadText of this workload.
  std::string CanonicalText() const;
  // What the database key hashes: the canonical text, element type and layout
  // ("gemm[M=..]+relu;float32;A[M,K] B[K,N] -> C[M,N]"). Changing it orphans stored records.
  std::string KeyText() const;
  // SHA-256 (hex) of KeyText(): the workload's persistent key.
  std::string Key() const;
  int64_t Param(const std::string& name) const;
  // The side outputs, then the output: what a kernel writes, in argument order.
  std::vector<TensorSpec> Outputs() const;
  // The elements of all Outputs().
  int64_t OutputElements() const;
  // The tensors a kernel takes: the inputs and Outputs().
  size_t NumTensors() const { return inputs.size() + side_outputs.size() + 1; }
};

}  // namespace autotune::tir
