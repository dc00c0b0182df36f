// batch_matmul: C[B, M, N] = A[B, M, K] x B[B, K, N], float32.
#include <fmt/format.h>

#include "tir/ops/builtin_operators.h"
#include "tir/ops/epilogue.h"
#include "tir/te/compute_dag.h"

namespace autotune::tir {
namespace {

class BatchMatmulOperator : public OperatorDef {
 public:
  std::string Name() const override { return "batch_matmul"; }
  std::string Summary() const override { return "batched matrix multiply C[B,M,N] = A[B,M,K] x B[B,K,N]"; }
  bool TakesPrecision() const override { return true; }
  std::vector<ParamSpec> Params() const override {
    return {{"B", std::nullopt, "batch size"},
            {"M", std::nullopt, "rows of A and C"},
            {"N", std::nullopt, "columns of B and C"},
            {"K", std::nullopt, "reduction length"}};
  }

  Result<void> Validate(const ShapeParams& p) const override {
    for (const auto& [k, v] : p) {
      if (v < 1) return MakeError(fmt::format("{}={} must be at least 1", k, v));
    }
    int64_t Bt = p[0].second, M = p[1].second, N = p[2].second, K = p[3].second;
    for (auto r : {CheckTensorSize("A", {Bt, M, K}), CheckTensorSize("B", {Bt, K, N}), CheckTensorSize("C", {Bt, M, N})}) {
      if (!r) return r;
    }
    return {};
  }

  Workload Build(const ShapeParams& p, const Epilogue& epilogue, DType dtype, Precision precision) const override {
    const int64_t Bt = p[0].second, M = p[1].second, N = p[2].second, K = p[3].second;
    std::vector<te::Operation> inputs = {te::Placeholder("A", {Bt, M, K}, dtype), te::Placeholder("B", {Bt, K, N}, dtype)};
    auto k = te::ReduceAxis(K, "k");
    auto C = te::Compute("C", {Bt, M, N}, {"b", "i", "j"}, [&](const std::vector<Var>& v) {
      return te::Sum(ProductAt(ReadFloat32(inputs[0], {v[0], v[1], k.var}), ReadFloat32(inputs[1], {v[0], k.var, v[2]}),
                               precision),
                     {k});
    });
    std::vector<te::Operation> computes;
    AddEpilogue(C, 2, epilogue, dtype, inputs, computes);

    Workload w = StagedWorkload(Name(), p, epilogue, "A[B,M,K] B[B,K,N] -> C[B,M,N]", inputs, computes);
    w.flops = 2.0 * Bt * M * N * K + EpilogueFlops(epilogue, 1.0 * Bt * M * N);
    w.min_bytes = TensorBytes(dtype, {1.0 * Bt * M * K, 1.0 * Bt * K * N, 1.0 * Bt * M * N}) +
                  EpilogueInputBytes(epilogue, dtype, 1.0 * N, 1.0 * Bt * M * N);
    w.reference = [Bt, M, N, K, epilogue](const std::vector<const float*>& in, float* out) {
      std::vector<double> row(N);
      for (int64_t b = 0; b < Bt; ++b) {
        const float* a = in[0] + b * M * K;
        const float* bm = in[1] + b * K * N;
        float* o = out + b * M * N;
        for (int64_t i = 0; i < M; ++i) {
          std::fill(row.begin(), row.end(), 0.0);
          for (int64_t kk = 0; kk < K; ++kk) {
            const double av = a[i * K + kk];
            for (int64_t j = 0; j < N; ++j) row[j] += av * bm[kk * N + j];
          }
          for (int64_t j = 0; j < N; ++j) o[i * N + j] = static_cast<float>(row[j]);
        }
      }
      ApplyEpilogueReference(epilogue, {Bt, M, N}, 2, in.data() + 2, out);
    };
    w.reference = ReferenceAt(precision, {Bt * M * K, Bt * K * N}, std::move(w.reference));
    w.precision = precision;
    return w;
  }
};

}  // namespace

std::unique_ptr<OperatorDef> MakeBatchMatmulOperator() { return std::make_unique<BatchMatmulOperator>(); }

}  // namespace autotune::tir
