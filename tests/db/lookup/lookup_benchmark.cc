// Google Benchmark of exact lookups through the C ABI, answered from memory (the figure in
// docs/BENCHMARKS.md). Usage: lookup_benchmark FIXTURE_DB [benchmark flags]; the database is the one
// make_lookup_db writes.
#include <autotune/lookup.h>
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

namespace {

autotune_db* g_db = nullptr;

// The same exact query again and again: the steady state of a compiler asking for its kernels.
void BM_ExactLookup(benchmark::State& state) {
  const autotune_kernel* k = nullptr;
  for (auto _ : state) {
    autotune_status s = autotune_lookup(g_db, "gemm", "M=256,N=256,K=256", "", "cuda:sm_90", AUTOTUNE_LOOKUP_EXACT, &k);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(k);
  }
  if (!k) state.SkipWithError("lookup failed");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExactLookup);
BENCHMARK(BM_ExactLookup)->Threads(2);

// Cycling through every workload of the fixture, cpu and cuda.
void BM_ExactLookupMixed(benchmark::State& state) {
  struct Q {
    const char* op;
    const char* shape;
    const char* target;
  };
  static const Q queries[] = {{"gemm", "M=64,N=64,K=64", "cpu"},
                              {"gemm", "M=128,N=128,K=128", "cpu"},
                              {"gemm", "M=256,N=256,K=64", "cpu"},
                              {"gemm", "M=256,N=256,K=256", "cuda:sm_90"},
                              {"gemm", "M=1024,N=1024,K=1024", "cuda:sm_90"},
                              {"conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", "cuda:sm_90"}};
  size_t i = 0;
  const autotune_kernel* k = nullptr;
  for (auto _ : state) {
    const Q& q = queries[i++ % (sizeof queries / sizeof queries[0])];
    autotune_status s = autotune_lookup(g_db, q.op, q.shape, "", q.target, AUTOTUNE_LOOKUP_EXACT, &k);
    if (s != AUTOTUNE_OK) state.SkipWithError(autotune_last_error());
    benchmark::DoNotOptimize(k);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExactLookupMixed);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: lookup_benchmark FIXTURE_DB [--benchmark_* flags]\n");
    return 2;
  }
  if (autotune_db_open(argv[1], &g_db) != AUTOTUNE_OK) {
    std::fprintf(stderr, "lookup_benchmark: %s\n", autotune_last_error());
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  autotune_db_close(g_db);
  return 0;
}
