// Hand-built lowered kernels and workloads for codegen and measurement tests (the lowering pipeline
// makes these in production). All buffers are flat float32 params, inputs first, output last.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "measure/measure_config.h"
#include "tir/ops/workload.h"
#include "tir/prim_func.h"
#include "tir/stmt.h"

namespace autotune::test_kernels {

using namespace autotune::tir;

// Measurement settings for tests that check answers, not speed: one short repeat, no cache flush,
// compiled candidates cached in `cache_dir`.
inline measure::MeasureConfig QuickCpuConfig(const std::string& cache_dir, int threads = 2) {
  measure::MeasureConfig c;
  c.cache_dir = cache_dir;
  c.repeats = 1;
  c.warmup = 0;
  c.min_repeat_ms = 0.1;
  c.flush_cache = false;
  c.build_threads = threads;
  c.num_threads = threads;
  return c;
}

inline Expr I(int64_t v) { return IntImm(v); }
inline Expr F(double v) { return FloatImm(v); }
inline Buffer Flat(const std::string& name, int64_t n, Scope scope = Scope::kGlobal) {
  return MakeBuffer(name, DType::kFloat32, {I(n)}, scope);
}
inline Stmt Loop(const Var& v, int64_t extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return For(v, I(0), I(extent), kind, std::move(body));
}
inline Stmt ThreadLoop(const Var& v, int64_t extent, ThreadTag tag, Stmt body) {
  return For(v, I(0), I(extent), ForKind::kThreadBinding, std::move(body), tag);
}

// C[M, N] = A[M, K] x B[K, N], reference accumulating in double.
inline Workload GemmWorkload(int64_t M, int64_t N, int64_t K) {
  Workload w;
  w.op = "test_gemm";
  w.shape = {{"M", M}, {"N", N}, {"K", K}};
  w.inputs = {{"A", DType::kFloat32, {M, K}}, {"B", DType::kFloat32, {K, N}}};
  w.output = {"C", DType::kFloat32, {M, N}};
  w.flops = 2.0 * M * N * K;
  w.min_bytes = 4.0 * (M * K + K * N + M * N);
  w.reference = [M, N, K](const std::vector<const float*>& in, float* out) {
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += static_cast<double>(in[0][i * K + k]) * in[1][k * N + j];
        out[i * N + j] = static_cast<float>(acc);
      }
    }
  };
  return w;
}

// Naive gemm with a local accumulator. `init` and `rows` let tests make wrong kernels: a wrong
// initial value, or rows left unwritten.
inline PrimFunc NaiveGemm(int64_t M, int64_t N, int64_t K, double init = 0.0, int64_t rows = -1) {
  Buffer A = Flat("A", M * K), B = Flat("B", K * N), C = Flat("C", M * N);
  Buffer acc = Flat("acc", 1, Scope::kLocal);
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k");
  Stmt update = Store(acc, Load(acc, {I(0)}) + Load(A, {i * K + k}) * Load(B, {k * N + j}), {I(0)});
  Stmt body = Allocate(acc, Seq({Store(acc, F(init), {I(0)}), Loop(k, K, update),
                                 Store(C, Load(acc, {I(0)}), {i * N + j})}));
  return PrimFunc{"gemm_naive", {A, B, C}, Loop(i, rows < 0 ? M : rows, Loop(j, N, body))};
}

// CPU schedule: parallel over row tiles, a 4 x 16 register tile, vectorized columns, unrolled rows.
// Needs M % 4 == 0 and N % 16 == 0.
inline PrimFunc CpuTiledGemm(int64_t M, int64_t N, int64_t K) {
  constexpr int64_t TI = 4, TJ = 16;
  Buffer A = Flat("A", M * K), B = Flat("B", K * N), C = Flat("C", M * N);
  Buffer acc = Flat("acc", TI * TJ, Scope::kLocal);
  Var io = MakeVar("i_outer"), jo = MakeVar("j_outer"), k = MakeVar("k");
  auto tile = [&](auto make) {
    Var ii = MakeVar("i_inner"), ji = MakeVar("j_inner");
    return Loop(ii, TI, Loop(ji, TJ, make(ii, ji), ForKind::kVectorized), ForKind::kUnrolled);
  };
  auto row = [&](const Expr& ii) { return io * TI + ii; };
  auto col = [&](const Expr& ji) { return jo * TJ + ji; };
  Stmt init = tile([&](const Var& ii, const Var& ji) { return Store(acc, F(0), {ii * TJ + ji}); });
  Stmt update = Loop(k, K, tile([&](const Var& ii, const Var& ji) {
                       Expr prod = Load(A, {row(ii) * K + k}) * Load(B, {k * N + col(ji)});
                       return Store(acc, Load(acc, {ii * TJ + ji}) + prod, {ii * TJ + ji});
                     }));
  Stmt write = tile([&](const Var& ii, const Var& ji) {
    return Store(C, Load(acc, {ii * TJ + ji}), {row(ii) * N + col(ji)});
  });
  Stmt body = Loop(io, M / TI, Loop(jo, N / TJ, Allocate(acc, Seq({init, update, write}))), ForKind::kParallel);
  return PrimFunc{"gemm_cpu_tiled", {A, B, C}, body};
}

// Two rows (threadIdx.y) of 8 threads: Y[t] = X[t] + X[t ^ 2] within a row, through a warp shuffle.
inline PrimFunc ShuffleRows() {
  Buffer X = Flat("X", 16), Y = Flat("Y", 16), L = Flat("L", 1, Scope::kLocal);
  Var ty = MakeVar("ty"), tx = MakeVar("tx");
  Stmt per_thread = Allocate(L, Seq({Store(L, Load(X, {ty * 8 + tx}), {I(0)}),
                                     Store(L, Load(L, {I(0)}) + ShuffleXor(Load(L, {I(0)}), 2), {I(0)}),
                                     Store(Y, Load(L, {I(0)}), {ty * 8 + tx})}));
  return PrimFunc{"shuffle", {X, Y},
                  ThreadLoop(ty, 2, ThreadTag::kThreadIdxY, ThreadLoop(tx, 8, ThreadTag::kThreadIdxX, per_thread))};
}

// GPU schedule (as written for CUDA): 16 x 16 output tiles per block, 8 x 8 threads computing 2 x 2
// each, K in steps of 8 through shared tiles loaded cooperatively between barriers, a local
// accumulator array. Needs M % 16 == 0, N % 16 == 0, K % 8 == 0.
inline PrimFunc GpuTiledGemm(int64_t M, int64_t N, int64_t K) {
  Buffer A = Flat("A", M * K), B = Flat("B", K * N), C = Flat("C", M * N);
  Buffer As = Flat("A_shared", 16 * 8, Scope::kShared), Bs = Flat("B_shared", 8 * 16, Scope::kShared);
  Buffer acc = Flat("C_local", 4, Scope::kLocal);
  Var by = MakeVar("by"), bx = MakeVar("bx"), ty = MakeVar("ty"), tx = MakeVar("tx");
  Var ko = MakeVar("k_outer"), ki = MakeVar("k_inner"), l = MakeVar("l"), ii = MakeVar("ii"), jj = MakeVar("jj");
  Var ii2 = MakeVar("ii"), jj2 = MakeVar("jj"), ii3 = MakeVar("ii"), jj3 = MakeVar("jj"), l2 = MakeVar("l");
  Expr tid = ty * 8 + tx;  // 0..63; each thread loads 2 of the 128 elements of each tile
  Expr ia = tid * 2 + l, ib = tid * 2 + l2;
  Stmt load_a = Loop(l, 2, IfThenElse(LT(ia, I(128)),  // a thread-dependent predicate (always true here)
                                      Store(As, Load(A, {(by * 16 + FloorDiv(ia, I(8))) * K + ko * 8 + FloorMod(ia, I(8))}),
                                            {ia})),
                     ForKind::kUnrolled);
  Stmt load_b = Loop(l2, 2, Store(Bs, Load(B, {(ko * 8 + FloorDiv(ib, I(16))) * N + bx * 16 + FloorMod(ib, I(16))}),
                                  {ib}),
                     ForKind::kUnrolled);
  Stmt compute = Loop(ki, 8, Loop(ii, 2, Loop(jj, 2, Store(acc, Load(acc, {ii * 2 + jj}) +
                                                                    Load(As, {(ty * 2 + ii) * 8 + ki}) *
                                                                        Load(Bs, {ki * 16 + tx * 2 + jj}),
                                                           {ii * 2 + jj}))),
                      ForKind::kUnrolled);
  Stmt init = Loop(ii2, 2, Loop(jj2, 2, Store(acc, F(0), {ii2 * 2 + jj2})));
  Stmt reduce = Loop(ko, K / 8, Seq({Barrier(), load_a, load_b, Barrier(), compute}));
  Stmt write = Loop(ii3, 2, Loop(jj3, 2, Store(C, Load(acc, {ii3 * 2 + jj3}),
                                               {(by * 16 + ty * 2 + ii3) * N + bx * 16 + tx * 2 + jj3})));
  Stmt per_thread = Allocate(acc, Seq({init, reduce, Barrier(), write}));
  Stmt threads = ThreadLoop(ty, 8, ThreadTag::kThreadIdxY, ThreadLoop(tx, 8, ThreadTag::kThreadIdxX, per_thread));
  Stmt block = Allocate(As, Allocate(Bs, threads));
  Stmt body = ThreadLoop(by, M / 16, ThreadTag::kBlockIdxY, ThreadLoop(bx, N / 16, ThreadTag::kBlockIdxX, block));
  return PrimFunc{"gemm_gpu_tiled", {A, B, C}, body};
}

}  // namespace autotune::test_kernels
