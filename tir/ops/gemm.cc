// gemm: C[M, N] = A[M, K] x B[K, N].
#include <fmt/format.h>

#include "tir/ops/builtin_operators.h"
#include "tir/ops/epilogue.h"
#include "tir/te/compute_dag.h"

namespace autotune::tir {
namespace {

class GemmOperator : public OperatorDef {
 public:
  std::string Name() const override { return "gemm"; }
  std::string Summary() const override { return "matrix multiply C[M,N] = A[M,K] x B[K,N]"; }
  bool TakesPrecision() const override { return true; }
  std::vector<ParamSpec> Params() const override {
    return {{"M", std::nullopt, "rows of A and C"}, {"N", std::nullopt, "columns of B and C"},
            {"K", std::nullopt, "reduction length"}};
  }

  Result<void> Validate(const ShapeParams& p) const override {
    for (const auto& [k, v] : p) {
      if (v < 1) return MakeError(fmt::format("{}={} must be at least 1", k, v));
    }
    int64_t M = p[0].second, N = p[1].second, K = p[2].second;
    for (auto r : {CheckTensorSize("A", {M, K}), CheckTensorSize("B", {K, N}), CheckTensorSize("C", {M, N})}) {
      if (!r) return r;
    }
    return {};
  }

  Workload Build(const ShapeParams& p, const Epilogue& epilogue, DType dtype, Precision precision) const override {
    const int64_t M = p[0].second, N = p[1].second, K = p[2].second;
    std::vector<te::Operation> inputs = {te::Placeholder("A", {M, K}, dtype), te::Placeholder("B", {K, N}, dtype)};
    auto k = te::ReduceAxis(K, "k");
    auto C = te::Compute("C", {M, N}, {"i", "j"}, [&](const std::vector<Var>& v) {
      return te::Sum(ProductAt(ReadFloat32(inputs[0], {v[0], k.var}), ReadFloat32(inputs[1], {k.var, v[1]}), precision), {k});
    });
    std::vector<te::Operation> computes;
    AddEpilogue(C, 1, epilogue, dtype, inputs, computes);

    Workload w = StagedWorkload(Name(), p, epilogue, "A[M,K] B[K,N] -> C[M,N]", inputs, computes);
    w.flops = 2.0 * M * N * K + EpilogueFlops(epilogue, 1.0 * M * N);
    w.min_bytes = TensorBytes(dtype, {1.0 * M * K, 1.0 * K * N, 1.0 * M * N}) +
                  EpilogueInputBytes(epilogue, dtype, 1.0 * N, 1.0 * M * N);
    w.reference = [M, N, K, epilogue](const std::vector<const float*>& in, float* out) {
      const float* a = in[0];
      const float* b = in[1];
      std::vector<double> row(N);
      for (int64_t i = 0; i < M; ++i) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int64_t kk = 0; kk < K; ++kk) {
          const double av = a[i * K + kk];
          const float* brow = b + kk * N;
          for (int64_t j = 0; j < N; ++j) row[j] += av * brow[j];
        }
        for (int64_t j = 0; j < N; ++j) out[i * N + j] = static_cast<float>(row[j]);
      }
      ApplyEpilogueReference(epilogue, {M, N}, 1, in.data() + 2, out);
    };
    w.reference = ReferenceAt(precision, {M * K, K * N}, std::move(w.reference));
    w.precision = precision;
    return w;
  }
};

}  // namespace

std::unique_ptr<OperatorDef> MakeGemmOperator() { return std::make_unique<GemmOperator>(); }

}  // namespace autotune::tir
