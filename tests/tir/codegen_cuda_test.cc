// CUDA code generation: golden text of a hand-scheduled gemm, launch configurations, every construct
// (thread loops, block-level code, shared memory static and dynamic, local arrays, barriers, unrolling,
// vectorization, multi-kernel modules with workspaces), error values, and the default and random
// schedules of every operator. Where the CUDA toolkit is installed, the generated code is compiled
// for sm_90 with nvcc (a syntax and resource check; running it needs a GPU: tests/measure).
#include "tir/codegen/codegen_cuda.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "search/default_schedule.h"
#include "search/sketch.h"
#include "tests/measure/test_kernels.h"
#include "tir/analysis/gpu_validity.h"
#include "tir/functor.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/schedule/schedule.h"

namespace autotune::tir {
namespace {

using namespace autotune::test_kernels;

// ---- helpers -------------------------------------------------------------------------------------

struct OpShape {
  std::string op, shape, epilogue;
};

// Every operator, with and without epilogues: plain, odd, strided, padded, dilated, grouped and
// depthwise shapes.
std::vector<OpShape> AllOperatorShapes() {
  return {
      {"gemm", "M=256,N=256,K=256", ""},
      {"gemm", "M=100,N=75,K=33", "bias,relu"},
      {"gemm", "M=1,N=96,K=50", "relu"},
      {"batch_matmul", "B=4,M=64,N=64,K=64", ""},
      {"batch_matmul", "B=3,M=17,N=24,K=9", "bias,relu"},
      {"conv2d", "N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1", ""},
      {"conv2d", "N=2,C=4,H=11,W=9,K=6,R=3,S=3,stride=2,pad=1", "bias,relu"},
      {"conv2d", "N=1,C=3,H=12,W=12,K=4,R=3,S=3,pad=2,dilation=2", "relu"},
      {"conv2d", "N=1,C=8,H=7,W=7,K=8,R=3,S=3,pad=1,groups=4", "bias"},
      {"conv2d", "N=1,C=32,H=14,W=14,K=32,R=3,S=3,stride=2,pad=1,groups=32", "bias,relu"},
      {"conv2d", "N=1,C=16,H=5,W=5,K=8,R=1,S=1", ""},
  };
}

PrimFunc LowerState(const ScheduleState& state, const std::string& name) {
  LowerOptions o;
  o.name = name;
  auto f = Lower(state, o);
  EXPECT_TRUE(f) << (f ? "" : f.error().message);
  return f ? *f : PrimFunc{name, {}, Seq({})};
}

// The default schedule (seed < 0) or a random one, lowered.
PrimFunc LowerCuda(const OpShape& s, int64_t seed, const std::string& name = "kernel") {
  auto w = MakeWorkload(s.op, s.shape, s.epilogue);
  EXPECT_TRUE(w) << s.op << " " << s.shape << ": " << (w ? "" : w.error().message);
  if (!w) return PrimFunc{name, {}, Seq({})};
  auto sch = seed < 0 ? search::DefaultSchedule(*w, TargetKind::kCuda)
                      : search::RandomSchedule(*w, TargetKind::kCuda, static_cast<uint64_t>(seed));
  EXPECT_TRUE(sch) << (sch ? "" : sch.error().message);
  return sch ? LowerState(sch->state(), name) : PrimFunc{name, {}, Seq({})};
}

CudaModule Gen(const PrimFunc& f) {
  auto m = CodegenCuda(f);
  EXPECT_TRUE(m) << (m ? "" : m.error().message);
  return m ? *m : CudaModule{};
}

std::string GenCode(const PrimFunc& f) { return Gen(f).code; }

void ExpectError(const PrimFunc& f, const std::string& what) {
  auto m = CodegenCuda(f);
  ASSERT_FALSE(m) << m->code;
  EXPECT_NE(m.error().message.find(what), std::string::npos) << m.error().message;
}

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

const char* Nvcc() {
  static const char* path = "/usr/local/cuda/bin/nvcc";
  return access(path, X_OK) == 0 ? path : nullptr;
}

// Compiles modules to one sm_90 cubin with nvcc, each module in a namespace of its own (their
// entries must differ). Returns "" or the compiler's output.
std::string NvccCompile(const std::vector<std::string>& modules) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "codegen_cuda_test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return "cannot make a temporary directory";
  const std::filesystem::path dir = tmpl;
  {
    std::ofstream cu(dir / "all.cu");
    for (size_t i = 0; i < modules.size(); ++i) cu << "namespace m" << i << " {\n" << modules[i] << "}\n";
  }
  // ptxas without optimization: whether the code compiles is the question here, and the optimizer
  // can take minutes on a heavily unrolled sample (one cooperative fetch unrolled 387 times took
  // 250 s; 14 s at -O0). How long candidates take to build is the tuner's concern (BUILD_TIMEOUT).
  const std::string cmd = fmt::format("{} -arch=sm_90 -cubin -Xptxas -O0 -o {} {} > {} 2>&1", Nvcc(), (dir / "all.cubin").string(),
                                      (dir / "all.cu").string(), (dir / "log.txt").string());
  const int rc = std::system(cmd.c_str());
  std::ifstream in(dir / "log.txt");
  std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  return rc == 0 ? "" : (log.empty() ? std::string("nvcc failed") : log);
}

// With nvcc installed: `code` compiles for sm_90.
void ExpectCompiles(const std::string& code) {
  if (!Nvcc()) return;
  EXPECT_EQ(NvccCompile({code}), "") << code;
}

// ---- golden text ---------------------------------------------------------------------------------

// gemm 10x8x6 + bias, relu: 3 blocks of 4 threads, each thread a 2x4 register tile (the last block's
// rows are partial), K in steps of 3 through shared copies of A (scalar) and B (float2 loads).
PrimFunc HandScheduledGemm(bool double_buffer = false) {
  auto w = MakeWorkload("gemm", "M=10,N=8,K=6", "bias,relu");
  EXPECT_TRUE(w);
  Schedule s(*w, TargetKind::kCuda);
  auto C = *s.GetStage("C");
  auto local = *s.CacheWrite(C, Scope::kLocal);
  auto As = *s.CacheReadInput("A", Scope::kShared, {local});
  auto Bs = *s.CacheReadInput("B", Scope::kShared, {local});
  EXPECT_TRUE(s.ReverseComputeInline(*s.GetStage("C_bias_relu")));
  auto l = *s.GetLoops(C);
  auto i = *s.Split(l[0], {std::monostate{}, int64_t{2}, int64_t{2}});  // 3 x 2 x 2 = 12 rows for 10
  auto j = *s.Split(l[1], {std::monostate{}, int64_t{4}});
  EXPECT_TRUE(s.Reorder({i[0], i[1], j[0], i[2], j[1]}));
  EXPECT_TRUE(s.Bind(i[0], ThreadTag::kBlockIdxX));
  auto tx = *s.Fuse({i[1], j[0]});
  EXPECT_TRUE(s.Bind(tx, ThreadTag::kThreadIdxX));
  EXPECT_TRUE(s.ComputeAt(local, tx));
  auto ll = *s.GetLoops(local);
  auto k = *s.Split(ll[2], {std::monostate{}, int64_t{3}});
  EXPECT_TRUE(s.Reorder({k[0], k[1], ll[0], ll[1]}));
  EXPECT_TRUE(s.ComputeAt(As, k[0]));
  auto al = *s.GetLoops(As);
  auto a_parts = *s.Split(*s.Fuse({al[0], al[1]}), {std::monostate{}, int64_t{4}});
  EXPECT_TRUE(s.Bind(a_parts[1], ThreadTag::kThreadIdxX));
  EXPECT_TRUE(s.ComputeAt(Bs, k[0]));
  auto bl = *s.GetLoops(Bs);
  auto b_parts = *s.Split(*s.Fuse({bl[0], bl[1]}), {std::monostate{}, int64_t{4}, int64_t{2}});
  EXPECT_TRUE(s.Bind(b_parts[1], ThreadTag::kThreadIdxX));
  EXPECT_TRUE(s.Vectorize(b_parts[2]));
  EXPECT_TRUE(s.AnnotateUnroll(i[0], int64_t{16}));
  if (double_buffer) {
    EXPECT_TRUE(s.DoubleBuffer(As, int64_t{1}));
    EXPECT_TRUE(s.DoubleBuffer(Bs, int64_t{1}));
  }
  return LowerState(s.state(), "gemm_tiled");
}

TEST(CodegenCuda, GoldenHandScheduledGemm) {
  CudaModule m = Gen(HandScheduledGemm());
  EXPECT_EQ(m.code, R"(// Generated by autotune (CUDA backend). Kernels: gemm_tiled.

extern "C" __global__ void __launch_bounds__(4) gemm_tiled(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ bias, float* __restrict__ C_bias_relu) {
  __shared__ __align__(16) float A_shared[12];
  __shared__ __align__(16) float B_shared[24];
  const int i_0 = (int)blockIdx.x;
  const int i_1_j_0 = (int)threadIdx.x;
  float C_local[8];
  #pragma unroll
  for (int i = 0; i < 2; ++i) {
    #pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (i_0 * 4 + (i_1_j_0 >> 1) * 2 + i < 10) {
        C_local[i * 4 + j] = 0.0f;
      }
    }
  }
  for (int k_0 = 0; k_0 < 2; ++k_0) {
    __syncthreads();
    #pragma unroll
    for (int ax0_ax1_0 = 0; ax0_ax1_0 < 3; ++ax0_ax1_0) {
      if (i_0 * 4 + (ax0_ax1_0 * 4 + i_1_j_0) / 3 < 10) {
        A_shared[ax0_ax1_0 * 4 + i_1_j_0] = A[i_0 * 24 + (ax0_ax1_0 * 4 + i_1_j_0) / 3 * 6 + k_0 * 3 + (ax0_ax1_0 * 4 + i_1_j_0) % 3];
      }
    }
    for (int ax0_ax1_0_1 = 0; ax0_ax1_0_1 < 3; ++ax0_ax1_0_1) {
      const float2 B_v = *reinterpret_cast<const float2*>(&B[k_0 * 24 + ax0_ax1_0_1 * 8 + i_1_j_0 * 2]);
      *reinterpret_cast<float2*>(&B_shared[ax0_ax1_0_1 * 8 + i_1_j_0 * 2]) = B_v;
    }
    __syncthreads();
    for (int k_1 = 0; k_1 < 3; ++k_1) {
      #pragma unroll
      for (int i = 0; i < 2; ++i) {
        #pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (i_0 * 4 + (i_1_j_0 >> 1) * 2 + i < 10) {
            C_local[i * 4 + j] = C_local[i * 4 + j] + A_shared[(i_1_j_0 >> 1) * 6 + i * 3 + k_1] * B_shared[k_1 * 8 + (i_1_j_0 & 1) * 4 + j];
          }
        }
      }
    }
  }
  #pragma unroll
  for (int i_2 = 0; i_2 < 2; ++i_2) {
    #pragma unroll
    for (int j_1 = 0; j_1 < 4; ++j_1) {
      if (i_0 * 2 + (i_1_j_0 >> 1) < 5) {
        C_bias_relu[i_0 * 32 + (i_1_j_0 >> 1) * 16 + i_2 * 8 + (i_1_j_0 & 1) * 4 + j_1] = fmaxf(C_local[i_2 * 4 + j_1] + bias[(i_1_j_0 & 1) * 4 + j_1], 0.0f);
      }
    }
  }
}
)");
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].entry, "gemm_tiled");
  EXPECT_EQ(m.kernels[0].grid, (std::array<int64_t, 3>{3, 1, 1}));
  EXPECT_EQ(m.kernels[0].block, (std::array<int64_t, 3>{4, 1, 1}));
  EXPECT_EQ(m.kernels[0].dynamic_shared_bytes, 0);
  EXPECT_EQ(m.num_params, 4);
  EXPECT_TRUE(m.workspace_bytes.empty());
}

// Double-buffered copies: twice the shared memory; the tile of k_0 + 1 is copied with cp.async
// (scalar under the row guard, float2 where the fill was vectorized) while k_0 is computed, one
// barrier an iteration (the pipeline's: code generation adds none for its buffers).
TEST(CodegenCuda, DoubleBufferedCopiesAreAsynchronousAndOneIterationAhead) {
  const std::string code = GenCode(HandScheduledGemm(true));
  EXPECT_TRUE(Has(code, "__shared__ __align__(16) float A_shared[24];")) << code;
  EXPECT_TRUE(Has(code, "__shared__ __align__(16) float B_shared[48];")) << code;
  // The first tile before the loop, the next one inside it, each copy once in each place.
  EXPECT_EQ(Count(code, "at_cp_async_4(&A_shared["), 2u) << code;
  EXPECT_EQ(Count(code, "at_cp_async_8(&B_shared["), 2u) << code;
  EXPECT_TRUE(Has(code, "if (k_0 < 1) {")) << code;
  // Two iterations: the copy ahead (k_0 = 0) goes to the second half; k_0 reads half k_0.
  EXPECT_TRUE(Has(code, "at_cp_async_8(&B_shared[ax0_ax1_0_1 * 8 + i_1_j_0 * 2 + 24], &B[")) << code;
  EXPECT_TRUE(Has(code, "B_shared[k_1 * 8 + (i_1_j_0 & 1) * 4 + j + k_0 * 24]")) << code;
  EXPECT_EQ(Count(code, "at_cp_async_wait<0>();\n    __syncthreads();"), 1u) << code;
  EXPECT_EQ(Count(code, "at_cp_async_wait<"), 1u) << code;
  EXPECT_EQ(Count(code, "__syncthreads();"), 2u) << code;  // before the first copies, and in the loop
  EXPECT_FALSE(Has(code, "const float2 B_v")) << code;  // no synchronous copy is left
  ExpectCompiles(code);
}

// A padded input's double-buffered copy (each element `inside ? data[i] : 0`) is asynchronous too:
// cp.async with a zero fill where the element is padding, so it overlaps the computation as a plain
// copy does; no synchronous store into the tile is left.
TEST(CodegenCuda, PaddedDoubleBufferedCopiesAreAsynchronousWithZeroFill) {
  auto w = MakeWorkload("conv2d", "N=1,C=64,H=5,W=5,K=8,R=3,S=3,pad=1", "");
  ASSERT_TRUE(w) << w.error().message;
  const Schedule fresh(*w, TargetKind::kCuda);
  const search::SketchSpec* tiled = search::FindSketch("cuda.tiled");
  ASSERT_NE(tiled, nullptr);
  search::SketchDecisions d = search::DefaultDecisions(fresh, *tiled);
  d.double_buffer = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 1; };
  d.vector = [](const std::vector<int64_t>&) -> std::optional<int64_t> { return 0; };  // scalar fetches
  Schedule sch(*w, TargetKind::kCuda);
  ASSERT_TRUE(search::ApplySketch(sch, *tiled, d));
  const std::string code = GenCode(LowerState(sch.state(), "conv"));
  // Before the loop and one iteration ahead inside it.
  EXPECT_EQ(Count(code, "at_cp_async_4_or_zero(&pad_shared["), 2u) << code;
  EXPECT_TRUE(Has(code, ", data, ")) << code;  // the element's index is passed, not formed out of bounds
  EXPECT_FALSE(std::regex_search(code, std::regex(R"(pad_shared\[[^;]*\] = )"))) << code;
  EXPECT_TRUE(Has(code, "cp.async.ca.shared.global [%0], [%1], 4, %2;")) << code;
  ExpectCompiles(code);
}

TEST(CodegenCuda, OutputIsDeterministic) {
  const PrimFunc f = HandScheduledGemm();
  EXPECT_EQ(GenCode(f), GenCode(f));
  EXPECT_EQ(GenCode(f), GenCode(HandScheduledGemm()));
}

// ---- launch configurations -----------------------------------------------------------------------

// The thread extents of a lowered function, per axis, found independently of the code generator.
std::array<int64_t, 6> ThreadExtents(const Stmt& s) {
  std::array<int64_t, 6> dims{1, 1, 1, 1, 1, 1};
  class Finder : public IRVisitor {
   public:
    explicit Finder(std::array<int64_t, 6>* d) : d_(d) {}
    void Visit_(const ForNode* op) override {
      if (op->for_kind == ForKind::kThreadBinding && op->tag != ThreadTag::kVThread) {
        auto& d = (*d_)[static_cast<int>(op->tag) - static_cast<int>(ThreadTag::kBlockIdxX)];
        d = std::max(d, *AsConstInt(op->extent));
      }
      VisitFields(op);
    }

   private:
    std::array<int64_t, 6>* d_;
  } finder(&dims);
  finder.Visit(s);
  return dims;
}

TEST(CodegenCuda, LaunchConfigOfDefaultGemm) {
  CudaModule m = Gen(LowerCuda({"gemm", "M=256,N=256,K=256", "bias,relu"}, -1, "gemm"));
  ASSERT_EQ(m.kernels.size(), 1u);
  // 128 x 128 output tiles per block, 256 threads of 8 x 8 outputs.
  EXPECT_EQ(m.kernels[0].grid, (std::array<int64_t, 3>{4, 1, 1}));
  EXPECT_EQ(m.kernels[0].block, (std::array<int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(m.kernels[0].dynamic_shared_bytes, 0);
  EXPECT_TRUE(Has(m.code, "__launch_bounds__(256) gemm("));
  EXPECT_EQ(m.num_params, 4);
}

TEST(CodegenCuda, LaunchConfigsOfDefaultSchedulesOfEveryOperator) {
  for (const auto& s : AllOperatorShapes()) {
    SCOPED_TRACE(s.op + " " + s.shape + " " + s.epilogue);
    PrimFunc f = LowerCuda(s, -1);
    CudaModule m = Gen(f);
    ASSERT_EQ(m.kernels.size(), 1u);
    const auto dims = ThreadExtents(f.body);
    EXPECT_EQ(m.kernels[0].grid, (std::array<int64_t, 3>{dims[0], dims[1], dims[2]}));
    EXPECT_EQ(m.kernels[0].block, (std::array<int64_t, 3>{dims[3], dims[4], dims[5]}));
    const int64_t threads = dims[3] * dims[4] * dims[5];
    EXPECT_GT(threads, 1);
    EXPECT_TRUE(Has(m.code, fmt::format("__launch_bounds__({})", threads)));
    EXPECT_EQ(m.num_params, s.epilogue.find("bias") != std::string::npos ? 4 : 3);
    EXPECT_TRUE(m.workspace_bytes.empty());
    auto usage = CheckGpuValidity(f);
    EXPECT_TRUE(usage) << usage.error().message;
  }
}

// ---- every operator: default and random schedules --------------------------------------------------

TEST(CodegenCuda, DefaultAndRandomSchedulesOfEveryOperatorGenerate) {
  constexpr int kRandoms = 20;
  std::vector<std::string> compile;
  int generated = 0;
  for (size_t si = 0; si < AllOperatorShapes().size(); ++si) {
    const OpShape s = AllOperatorShapes()[si];
    auto w = MakeWorkload(s.op, s.shape, s.epilogue);
    ASSERT_TRUE(w) << w.error().message;
    int randoms = 0;
    // The default schedule, then random ones until kRandoms could be sampled (the template may
    // reject a rare sample: that is the search's business, not codegen's).
    for (int64_t seed = -1; randoms < kRandoms && seed < 5 * kRandoms; ++seed) {
      SCOPED_TRACE(fmt::format("{} {} {} seed {}", s.op, s.shape, s.epilogue, seed));
      auto sch = seed < 0 ? search::DefaultSchedule(*w, TargetKind::kCuda)
                          : search::RandomSchedule(*w, TargetKind::kCuda, static_cast<uint64_t>(1000 * si + seed));
      if (seed >= 0 && !sch) continue;
      ASSERT_TRUE(sch) << sch.error().message;
      const std::string name = fmt::format("k{}_{}", si, seed < 0 ? std::string("default") : std::to_string(seed));
      PrimFunc f = LowerState(sch->state(), name);
      auto m = CodegenCuda(f);
      ASSERT_TRUE(m) << m.error().message << "\n" << sch->trace().ToText();
      ++generated;
      randoms += seed >= 0;
      EXPECT_GE(m->kernels.size(), 1u);
      // A module of several kernels (split-K: partial sums, then their sum) numbers its entries.
      EXPECT_EQ(m->kernels[0].entry, m->kernels.size() == 1 ? name : name + "_k0");
      EXPECT_EQ(m->code, CodegenCuda(f)->code);
      // Compile the default schedules and some random ones the check accepts (a rejected one, e.g.
      // with thousands of registers, could take NVCC minutes to unroll).
      if (CheckGpuValidity(f) && (seed < 0 || seed % 4 == 0)) compile.push_back(m->code);
    }
    EXPECT_EQ(randoms, kRandoms) << s.op << " " << s.shape;
  }
  EXPECT_EQ(generated, static_cast<int>(AllOperatorShapes().size()) * (kRandoms + 1));
  EXPECT_GE(compile.size(), AllOperatorShapes().size());
  if (!Nvcc()) GTEST_SKIP() << "no nvcc: generated code not compiled";
  EXPECT_EQ(NvccCompile(compile), "");
}

// ---- multi-kernel modules ----------------------------------------------------------------------------

// conv2d whose padding and epilogue are not inlined: padding is a kernel of its own with 1-D blocks,
// the convolution a kernel with blockIdx.y, the epilogue (no thread bindings) a <<<1,1>>> kernel;
// the padded input and the convolution's output are workspaces.
PrimFunc MultiKernelConv() {
  auto w = MakeWorkload("conv2d", "N=1,C=4,H=8,W=8,K=8,R=3,S=3,pad=1", "bias,relu");
  EXPECT_TRUE(w);
  Schedule s(*w, TargetKind::kCuda);
  auto pad = *s.GetStage("pad");
  auto pp = *s.Split(*s.Fuse(*s.GetLoops(pad)), {std::monostate{}, int64_t{64}});
  EXPECT_TRUE(s.Bind(pp[0], ThreadTag::kBlockIdxX));
  EXPECT_TRUE(s.Bind(pp[1], ThreadTag::kThreadIdxX));
  auto conv = *s.GetStage("conv");
  auto cl = *s.GetLoops(conv);
  EXPECT_TRUE(s.Bind(*s.Fuse({cl[0], cl[1]}), ThreadTag::kBlockIdxY));
  EXPECT_TRUE(s.Bind(*s.Fuse({cl[2], cl[3]}), ThreadTag::kThreadIdxX));
  return LowerState(s.state(), "conv_multi");
}

TEST(CodegenCuda, MultiKernelModuleWithWorkspaces) {
  CudaModule m = Gen(MultiKernelConv());
  ASSERT_EQ(m.kernels.size(), 3u);
  EXPECT_EQ(m.kernels[0].entry, "conv_multi_k0");
  EXPECT_EQ(m.kernels[0].grid, (std::array<int64_t, 3>{7, 1, 1}));  // 400 padded elements by 64
  EXPECT_EQ(m.kernels[0].block, (std::array<int64_t, 3>{64, 1, 1}));
  EXPECT_EQ(m.kernels[1].entry, "conv_multi_k1");
  EXPECT_EQ(m.kernels[1].grid, (std::array<int64_t, 3>{1, 8, 1}));
  EXPECT_EQ(m.kernels[1].block, (std::array<int64_t, 3>{64, 1, 1}));
  EXPECT_EQ(m.kernels[2].entry, "conv_multi_k2");
  EXPECT_EQ(m.kernels[2].grid, (std::array<int64_t, 3>{1, 1, 1}));
  EXPECT_EQ(m.kernels[2].block, (std::array<int64_t, 3>{1, 1, 1}));
  EXPECT_EQ(m.num_params, 4);
  EXPECT_EQ(m.workspace_bytes, (std::vector<int64_t>{4 * 400, 4 * 512}));
  // Every kernel takes all params and workspaces; each writes only its own output.
  EXPECT_TRUE(Has(m.code, "__launch_bounds__(64) conv_multi_k0(const float* __restrict__ data, const float* __restrict__ "
                          "weight, const float* __restrict__ bias, const float* __restrict__ conv_bias_relu, float* "
                          "__restrict__ pad, const float* __restrict__ conv)"))
      << m.code;
  EXPECT_TRUE(Has(m.code, "__launch_bounds__(1) conv_multi_k2(const float* __restrict__ data, const float* __restrict__ "
                          "weight, const float* __restrict__ bias, float* __restrict__ conv_bias_relu, const float* "
                          "__restrict__ pad, const float* __restrict__ conv)"))
      << m.code;
  EXPECT_TRUE(Has(m.code, "  const int n_k = (int)blockIdx.y;\n")) << m.code;
  ExpectCompiles(m.code);
}

TEST(CodegenCuda, StatementsWithoutThreadsAreSingleThreadKernels) {
  Buffer X = Flat("X", 8), Y = Flat("Y", 8), T = Flat("T", 8);
  Var i = MakeVar("i"), j = MakeVar("j"), tx = MakeVar("tx");
  Stmt body = Allocate(T, Seq({Loop(i, 8, Store(T, Load(X, {i}) * F(2), {i})),
                               ThreadLoop(tx, 8, ThreadTag::kThreadIdxX, Store(Y, Load(T, {I(7) - tx}), {tx})),
                               Loop(j, 8, Store(Y, Load(Y, {j}) + F(1), {j}))}));
  CudaModule m = Gen(PrimFunc{"three", {X, Y}, body});
  ASSERT_EQ(m.kernels.size(), 3u);
  EXPECT_EQ(m.kernels[0].block, (std::array<int64_t, 3>{1, 1, 1}));
  EXPECT_EQ(m.kernels[1].block, (std::array<int64_t, 3>{8, 1, 1}));
  EXPECT_EQ(m.kernels[2].block, (std::array<int64_t, 3>{1, 1, 1}));
  EXPECT_EQ(m.workspace_bytes, (std::vector<int64_t>{32}));
  EXPECT_TRUE(Has(m.code, R"(extern "C" __global__ void __launch_bounds__(1) three_k0(const float* __restrict__ X, const float* __restrict__ Y, float* __restrict__ T) {
  for (int i = 0; i < 8; ++i) {
    T[i] = X[i] * 2.0f;
  }
}
)")) << m.code;
  ExpectCompiles(m.code);
}

TEST(CodegenCuda, SharedOrLocalAllocationSpanningKernelsIsAWorkspace) {
  Buffer X = Flat("X", 4), Y = Flat("Y", 4), S = Flat("S", 4, Scope::kShared);
  Var t1 = MakeVar("t"), t2 = MakeVar("t");
  Stmt body = Allocate(S, Seq({ThreadLoop(t1, 4, ThreadTag::kThreadIdxX, Store(S, Load(X, {t1}), {t1})),
                               ThreadLoop(t2, 4, ThreadTag::kBlockIdxX, Store(Y, Load(S, {I(3) - t2}), {t2}))}));
  CudaModule m = Gen(PrimFunc{"span", {X, Y}, body});
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.workspace_bytes, (std::vector<int64_t>{16}));
  EXPECT_FALSE(Has(m.code, "__shared__")) << m.code;
}

// ---- shared memory -------------------------------------------------------------------------------

PrimFunc SharedCopy(int64_t n_a, int64_t n_b) {
  Buffer X = Flat("X", 256), Y = Flat("Y", 256);
  Buffer Sa = Flat("Sa", n_a, Scope::kShared), Sb = MakeBuffer("Sb", DType::kFloat32, {I(n_b)}, Scope::kShared);
  Var bx = MakeVar("bx"), tx = MakeVar("tx");
  Stmt inner = Seq({Store(Sa, Load(X, {tx}), {tx * 3}), Store(Sb, Load(X, {tx}), {tx}), Barrier(),
                    Store(Y, Load(Sa, {(I(255) - tx) * 3}) + Load(Sb, {I(255) - tx}), {tx})});
  Stmt body = ThreadLoop(bx, 2, ThreadTag::kBlockIdxX, Allocate(Sa, Allocate(Sb, ThreadLoop(tx, 256, ThreadTag::kThreadIdxX, inner))));
  return PrimFunc{"smem", {X, Y}, body};
}

TEST(CodegenCuda, StaticSharedMemoryUpTo48KB) {
  // 4 * 1023 bytes, then 16-byte alignment: 4096 + 4 * 11264 = 49152 bytes exactly.
  CudaModule m = Gen(SharedCopy(1023, 11264));
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].dynamic_shared_bytes, 0);
  EXPECT_TRUE(Has(m.code, "  __shared__ __align__(16) float Sa[1023];\n  __shared__ __align__(16) float Sb[11264];\n"))
      << m.code;
  EXPECT_FALSE(Has(m.code, "extern __shared__"));
}

TEST(CodegenCuda, DynamicSharedMemoryAbove48KB) {
  CudaModule m = Gen(SharedCopy(1023, 11265));
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].dynamic_shared_bytes, 4096 + 4 * 11265);
  EXPECT_TRUE(Has(m.code, "  extern __shared__ __align__(16) unsigned char at_shared[];\n"
                          "  float* Sa = reinterpret_cast<float*>(at_shared + 0);  // 1023 elements\n"
                          "  float* Sb = reinterpret_cast<float*>(at_shared + 4096);  // 11265 elements\n"))
      << m.code;
  EXPECT_TRUE(Has(m.code, "  Sb[tx] = X[tx];\n  __syncthreads();\n")) << m.code;
  ExpectCompiles(m.code);
}

// ---- thread loops and block-level code -------------------------------------------------------------

TEST(CodegenCuda, EveryThreadAxisAndLoopMinimum) {
  Buffer Y = Flat("Y", 2 * 3 * 4 * 5 * 6 * 7);
  std::vector<Var> v;
  for (const char* n : {"bz", "by", "bx", "tz", "ty", "tx"}) v.push_back(MakeVar(n));
  Expr idx = ((((v[0] * 3 + v[1]) * 4 + v[2]) * 5 + v[3]) * 6 + v[4]) * 7 + v[5];
  Stmt s = Store(Y, F(1), {idx - 1});
  s = For(v[5], I(1), I(7), ForKind::kThreadBinding, s, ThreadTag::kThreadIdxX);
  s = ThreadLoop(v[4], 6, ThreadTag::kThreadIdxY, s);
  s = ThreadLoop(v[3], 5, ThreadTag::kThreadIdxZ, s);
  s = ThreadLoop(v[2], 4, ThreadTag::kBlockIdxX, s);
  s = ThreadLoop(v[1], 3, ThreadTag::kBlockIdxY, s);
  s = ThreadLoop(v[0], 2, ThreadTag::kBlockIdxZ, s);
  CudaModule m = Gen(PrimFunc{"axes", {Y}, s});
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].grid, (std::array<int64_t, 3>{4, 3, 2}));
  EXPECT_EQ(m.kernels[0].block, (std::array<int64_t, 3>{7, 6, 5}));
  EXPECT_TRUE(Has(m.code, "__launch_bounds__(210) axes(float* __restrict__ Y) {\n"
                          "  const int bz = (int)blockIdx.z;\n"
                          "  const int by = (int)blockIdx.y;\n"
                          "  const int bx = (int)blockIdx.x;\n"
                          "  const int tz = (int)threadIdx.z;\n"
                          "  const int ty = (int)threadIdx.y;\n"
                          "  const int tx = (int)threadIdx.x + 1;\n"))
      << m.code;
}

TEST(CodegenCuda, SiblingThreadLoopsOfDifferentExtentsAreGuarded) {
  Buffer X = Flat("X", 64), Y = Flat("Y", 64), S = Flat("S", 32, Scope::kShared);
  Var bx = MakeVar("bx"), t1 = MakeVar("t"), t2 = MakeVar("t");
  Stmt body = ThreadLoop(
      bx, 2, ThreadTag::kBlockIdxX,
      Allocate(S, Seq({ThreadLoop(t1, 16, ThreadTag::kThreadIdxX,
                                  Seq({Store(S, Load(X, {bx * 32 + t1 * 2}), {t1 * 2}),
                                       Store(S, Load(X, {bx * 32 + t1 * 2 + 1}), {t1 * 2 + 1})})),
                       ThreadLoop(t2, 32, ThreadTag::kThreadIdxX, Store(Y, Load(S, {I(31) - t2}), {bx * 32 + t2}))})));
  CudaModule m = Gen(PrimFunc{"sib", {X, Y}, body});
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].block, (std::array<int64_t, 3>{32, 1, 1}));
  // The first loop is guarded, and a barrier separates the loops (the second reads what the first
  // wrote).
  EXPECT_TRUE(Has(m.code, R"(  const int bx = (int)blockIdx.x;
  if (threadIdx.x < 16) {
    const int t = (int)threadIdx.x;
    S[t * 2] = X[bx * 32 + t * 2];
    S[t * 2 + 1] = X[bx * 32 + t * 2 + 1];
  }
  __syncthreads();
  const int t_1 = (int)threadIdx.x;
  Y[bx * 32 + t_1] = S[31 - t_1];
)")) << m.code;
  ExpectCompiles(m.code);
}

// A warp shuffle becomes __shfl_xor_sync; under a thread-dependent condition, or where blockDim.x
// would split a row's lanes across warps, it is refused rather than generated wrong.
TEST(CodegenCuda, WarpShufflesAndWhereTheyAreRefused) {
  Buffer X = Flat("X", 64), Y = Flat("Y", 64), L = Flat("L", 1, Scope::kLocal);
  Var tx = MakeVar("tx");
  auto butterfly = [&](int64_t threads, Stmt tail) {
    return ThreadLoop(tx, threads, ThreadTag::kThreadIdxX,
                      Allocate(L, Seq({Store(L, Load(X, {tx}), {I(0)}),
                                       Store(L, Load(L, {I(0)}) + ShuffleXor(Load(L, {I(0)}), 2), {I(0)}), tail})));
  };
  const Stmt store = Store(Y, Load(L, {I(0)}), {tx});
  CudaModule m = Gen(PrimFunc{"shfl", {X, Y}, butterfly(64, store)});
  EXPECT_TRUE(Has(m.code, "L[0] = L[0] + __shfl_xor_sync(0xffffffffu, L[0], 2);")) << m.code;
  ExpectCompiles(m.code);
  EXPECT_TRUE(Has(Gen(PrimFunc{"shfl", {X, Y}, butterfly(8, store)}).code, "__shfl_xor_sync"));
  ExpectError(PrimFunc{"f", {X, Y}, butterfly(48, store)}, "in a block 48 threads wide");
  Var t2 = MakeVar("t2"), bx = MakeVar("bx");
  const Stmt wider = ThreadLoop(t2, 64, ThreadTag::kThreadIdxX, Store(Y, F(0), {t2}));
  // One kernel whose block is wider than the shuffling loop: that loop is guarded, so it diverges.
  ExpectError(PrimFunc{"f", {X, Y}, ThreadLoop(bx, 1, ThreadTag::kBlockIdxX, Seq({butterfly(16, store), wider}))},
              "thread-dependent condition");
  ExpectError(PrimFunc{"f", {X, Y},
                       ThreadLoop(tx, 32, ThreadTag::kThreadIdxX,
                                  IfThenElse(LT(tx, I(4)), Store(Y, ShuffleXor(Load(X, {tx}), 1), {tx})))},
              "thread-dependent condition");
}

TEST(CodegenCuda, SiblingLoopsOfOneVariableDeclareItInScopes) {
  // Lowering reuses a loop variable in sibling nests (a reduction's init and update nests). The
  // block loop's variable is not used: it is not declared.
  Buffer Y = Flat("Y", 32);
  Var t = MakeVar("t"), bx = MakeVar("bx");
  Stmt body = Seq({ThreadLoop(t, 32, ThreadTag::kThreadIdxX, Store(Y, F(0), {t})),
                   ThreadLoop(t, 32, ThreadTag::kThreadIdxX, Store(Y, Load(Y, {t}) + F(1), {t}))});
  CudaModule m = Gen(PrimFunc{"reuse", {Y}, ThreadLoop(bx, 1, ThreadTag::kBlockIdxX, body)});
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_TRUE(Has(m.code, R"(reuse(float* __restrict__ Y) {
  {
    const int t = (int)threadIdx.x;
    Y[t] = 0.0f;
  }
  __syncthreads();
  const int t = (int)threadIdx.x;
  Y[t] = Y[t] + 1.0f;
}
)")) << m.code;
  ExpectCompiles(m.code);
}

TEST(CodegenCuda, BlockLevelWritesRunOnOneThread) {
  Buffer X = Flat("X", 64), Y = Flat("Y", 64), S = Flat("S", 1, Scope::kShared), L = Flat("L", 1, Scope::kLocal);
  Var bx = MakeVar("bx"), tx = MakeVar("tx");
  Stmt body = ThreadLoop(
      bx, 2, ThreadTag::kBlockIdxX,
      Allocate(S, Allocate(L, Seq({Store(S, Load(X, {bx * 32}), {I(0)}), Store(L, Load(X, {bx * 32 + 1}), {I(0)}),
                                   ThreadLoop(tx, 32, ThreadTag::kThreadIdxX,
                                              Store(Y, Load(S, {I(0)}) + Load(L, {I(0)}) + Load(X, {bx * 32 + tx}),
                                                    {bx * 32 + tx}))}))));
  CudaModule m = Gen(PrimFunc{"blk", {X, Y}, body});
  // S is written once per block (by thread 0) before the threads read it; every thread has its own L.
  EXPECT_TRUE(Has(m.code, R"(  const int bx = (int)blockIdx.x;
  float L[1];
  if (threadIdx.x == 0) {
    S[0] = X[bx * 32];
  }
  L[0] = X[bx * 32 + 1];
  __syncthreads();
  const int tx = (int)threadIdx.x;
  Y[bx * 32 + tx] = S[0] + L[0] + X[bx * 32 + tx];
)")) << m.code;
  ExpectCompiles(m.code);
}

TEST(CodegenCuda, BlockLevelLoopAroundThreadLoopsSynchronizesIterations) {
  Buffer X = Flat("X", 64), Y = Flat("Y", 8), S = Flat("S", 8, Scope::kShared);
  Var k = MakeVar("k"), t1 = MakeVar("t"), t2 = MakeVar("t");
  Stmt body = Allocate(S, Loop(k, 8, Seq({ThreadLoop(t1, 8, ThreadTag::kThreadIdxX, Store(S, Load(X, {k * 8 + t1}), {t1})),
                                          ThreadLoop(t2, 8, ThreadTag::kThreadIdxX,
                                                     Store(Y, Load(Y, {t2}) + Load(S, {I(7) - t2}), {t2}))})));
  CudaModule m = Gen(PrimFunc{"iter", {X, Y}, body});
  EXPECT_EQ(Count(m.code, "__syncthreads();"), 2u) << m.code;
  EXPECT_TRUE(Has(m.code, "    Y[t_1] = Y[t_1] + S[7 - t_1];\n    __syncthreads();\n  }\n")) << m.code;
}

// A block-level loop whose iterations each write their own elements of a buffer they do not read
// (a row kernel's output, 8 threads an iteration) needs no barrier between iterations; one whose
// iterations may write an element again (k * 4 + t: iterations 8 elements wide, 4 apart; k / 2 * 8
// + t: two iterations a row) keeps it.
TEST(CodegenCuda, BlockLevelLoopWritingApartNeedsNoBarrier) {
  Buffer X = Flat("X", 64), Y = Flat("Y", 64);
  auto loop_of = [&](auto index) {
    Var k = MakeVar("k"), t = MakeVar("t");
    return Loop(k, 8, ThreadLoop(t, 8, ThreadTag::kThreadIdxX, Store(Y, Load(X, {k * 8 + t}), {index(k) + t})));
  };
  CudaModule apart = Gen(PrimFunc{"apart", {X, Y}, loop_of([](const Var& k) { return k * 8; })});
  EXPECT_EQ(Count(apart.code, "__syncthreads();"), 0u) << apart.code;
  ExpectCompiles(apart.code);
  for (const Stmt& body : {loop_of([](const Var& k) { return k * 4; }), loop_of([](const Var& k) { return FloorDiv(k, I(2)) * 8; })}) {
    CudaModule overlapping = Gen(PrimFunc{"overlapping", {X, Y}, body});
    EXPECT_EQ(Count(overlapping.code, "__syncthreads();"), 1u) << overlapping.code;
  }
}

// ---- unrolling, local arrays, vectorization ---------------------------------------------------------

TEST(CodegenCuda, LoopsIndexingLocalArraysAreFullyUnrolled) {
  Buffer X = Flat("X", 64), Y = Flat("Y", 64), acc = Flat("acc", 4, Scope::kLocal);
  Var tx = MakeVar("tx"), i = MakeVar("i"), k = MakeVar("k"), i2 = MakeVar("i"), big = MakeVar("big");
  Stmt body = ThreadLoop(
      tx, 16, ThreadTag::kThreadIdxX,
      Allocate(acc, Seq({Loop(i, 4, Store(acc, F(0), {i})),
                         Loop(k, 100, Loop(i2, 4, Store(acc, Load(acc, {i2}) + Load(X, {FloorMod(k + i2, I(64))}), {i2}),
                                           ForKind::kUnrolled)),
                         Loop(big, 4, Store(Y, Load(acc, {big}), {tx * 4 + big}), ForKind::kParallel)})));
  std::string code = GenCode(PrimFunc{"unroll", {X, Y}, body});
  EXPECT_TRUE(Has(code, "  #pragma unroll\n  for (int i = 0; i < 4; ++i) {\n")) << code;
  EXPECT_TRUE(Has(code, "  for (int k = 0; k < 100; ++k) {\n    #pragma unroll\n    for (int i_1 = 0; i_1 < 4; ++i_1) {\n"))
      << code;
  EXPECT_TRUE(Has(code, "  #pragma unroll\n  for (int big = 0; big < 4; ++big) {\n")) << code;
  EXPECT_EQ(Count(code, "#pragma unroll"), 3u) << code;
  EXPECT_TRUE(Has(code, "X[(k + i_1) & 63]")) << code;
}

TEST(CodegenCuda, LargeOrNonLocalLoopsStayRolled) {
  Buffer Y = Flat("Y", 1024), acc = Flat("acc", 128, Scope::kLocal);
  Var i = MakeVar("i"), j = MakeVar("j");
  std::string code = GenCode(PrimFunc{"rolled", {Y}, Allocate(acc, Seq({Loop(i, 128, Store(acc, F(0), {i})),
                                                                         Loop(j, 16, Store(Y, Load(acc, {I(0)}), {j}))}))});
  EXPECT_EQ(Count(code, "#pragma unroll"), 0u) << code;
}

TEST(CodegenCuda, AlignedVectorizedLoopsUseFloat4) {
  Buffer X = Flat("X", 1024), Y = Flat("Y", 1024), b = Flat("b", 4);
  Var tx = MakeVar("tx"), v = MakeVar("v");
  // Y[tx*4 + v] = max(X[tx*4 + v] * 2 + b[v], 0): aligned load, aligned store, an aligned load of b.
  Stmt body = ThreadLoop(tx, 256, ThreadTag::kThreadIdxX,
                         Loop(v, 4, Store(Y, Max(Load(X, {tx * 4 + v}) * F(2) + Load(b, {v}), F(0)), {tx * 4 + v}),
                              ForKind::kVectorized));
  std::string code = GenCode(PrimFunc{"vec", {X, b, Y}, body});
  EXPECT_TRUE(Has(code, R"(  const int tx = (int)threadIdx.x;
  const float4 X_v = *reinterpret_cast<const float4*>(&X[tx * 4]);
  const float4 b_v = *reinterpret_cast<const float4*>(&b[0]);
  *reinterpret_cast<float4*>(&Y[tx * 4]) = make_float4(fmaxf(X_v.x * 2.0f + b_v.x, 0.0f), fmaxf(X_v.y * 2.0f + b_v.y, 0.0f), fmaxf(X_v.z * 2.0f + b_v.z, 0.0f), fmaxf(X_v.w * 2.0f + b_v.w, 0.0f));
)")) << code;
  ExpectCompiles(code);
}

TEST(CodegenCuda, VectorizedLoopsOfWidthTwoAndLocalTargets) {
  Buffer X = Flat("X", 1024), Y = Flat("Y", 1024), S = Flat("S", 64, Scope::kShared), L = Flat("L", 2, Scope::kLocal);
  Var tx = MakeVar("tx"), v = MakeVar("v"), w = MakeVar("w");
  // An aligned float2 copy from global to shared (the index has a non-linear term with an even
  // coefficient), and a local target: per-lane stores from one float2 load of shared memory.
  Stmt body = ThreadLoop(
      tx, 32, ThreadTag::kThreadIdxX,
      Allocate(S, Allocate(L, Seq({Loop(v, 2, Store(S, Load(X, {FloorDiv(tx, I(3)) * 6 + v + 8}), {tx * 2 + v}),
                                        ForKind::kVectorized),
                                   Barrier(),
                                   Loop(w, 2, Store(L, Load(S, {(I(31) - tx) * 2 + w}), {w}), ForKind::kVectorized),
                                   Store(Y, Load(L, {I(0)}) + Load(L, {I(1)}), {tx})}))));
  std::string code = GenCode(PrimFunc{"vec2", {X, Y}, body});
  EXPECT_TRUE(Has(code, R"(  {
    const float2 X_v = *reinterpret_cast<const float2*>(&X[tx / 3 * 6 + 8]);
    *reinterpret_cast<float2*>(&S[tx * 2]) = X_v;
  }
  __syncthreads();
  {
    const float2 S_v = *reinterpret_cast<const float2*>(&S[tx * -2 + 62]);
    L[0] = S_v.x;
    L[1] = S_v.y;
  }
)")) << code;
  ExpectCompiles(code);
}

TEST(CodegenCuda, UnalignedOrUnsafeVectorizedLoopsAreScalarUnrolledLoops) {
  Buffer X = Flat("X", 1024), Y = Flat("Y", 1024);
  Var tx = MakeVar("tx");
  auto vec_loop = [&](Stmt (*make)(const Buffer&, const Buffer&, const Var&, const Var&)) {
    Var v = MakeVar("v");
    return GenCode(PrimFunc{"s", {X, Y}, ThreadLoop(tx, 64, ThreadTag::kThreadIdxX, make(X, Y, tx, v))});
  };
  // Base tx * 3 + 1 is not a multiple of 4 (and the load has stride 2).
  std::string unaligned = vec_loop([](const Buffer& X, const Buffer& Y, const Var& tx, const Var& v) {
    return Loop(v, 4, Store(Y, Load(X, {tx * 2 + v * 2}), {tx * 3 + v + 1}), ForKind::kVectorized);
  });
  EXPECT_TRUE(Has(unaligned, "  #pragma unroll\n  for (int v = 0; v < 4; ++v) {\n    Y[tx * 3 + v + 1] = X[tx * 2 + v * 2];\n"))
      << unaligned;
  // Reads an element another lane writes: lanes must run in order.
  std::string hazard = vec_loop([](const Buffer& X, const Buffer& Y, const Var& tx, const Var& v) {
    return Loop(v, 4, Store(Y, Load(Y, {tx * 4 + v + 1}), {tx * 4 + v}), ForKind::kVectorized);
  });
  EXPECT_FALSE(Has(hazard, "float4")) << hazard;
  // A vectorized reduction (every lane stores one element).
  std::string reduction = vec_loop([](const Buffer& X, const Buffer& Y, const Var& tx, const Var& v) {
    return Loop(v, 4, Store(Y, Load(Y, {tx}) + Load(X, {tx * 4 + v}), {tx}), ForKind::kVectorized);
  });
  EXPECT_FALSE(Has(reduction, "float4")) << reduction;
  // Extent 8 is scalar too.
  std::string wide = vec_loop([](const Buffer& X, const Buffer& Y, const Var& tx, const Var& v) {
    return Loop(v, 8, IfThenElse(LT(tx, I(60)), Store(Y, Load(X, {tx * 8 + v}), {tx * 8 + v})), ForKind::kVectorized);
  });
  EXPECT_TRUE(Has(wide, "  #pragma unroll\n  for (int v = 0; v < 8; ++v) {\n")) << wide;
  // A guard that depends on the lane, or has an else branch, keeps the lanes apart.
  std::string per_lane = vec_loop([](const Buffer& X, const Buffer& Y, const Var& tx, const Var& v) {
    return Loop(v, 4, IfThenElse(LT(tx * 4 + v, I(250)), Store(Y, Load(X, {tx * 4 + v}), {tx * 4 + v})),
                ForKind::kVectorized);
  });
  EXPECT_FALSE(Has(per_lane, "float4")) << per_lane;
  std::string with_else = vec_loop([](const Buffer& X, const Buffer& Y, const Var& tx, const Var& v) {
    return Loop(v, 4,
                IfThenElse(LT(tx, I(60)), Store(Y, Load(X, {tx * 4 + v}), {tx * 4 + v}), Store(Y, F(0), {tx * 4 + v})),
                ForKind::kVectorized);
  });
  EXPECT_FALSE(Has(with_else, "float4")) << with_else;
  // A load under a select (a convolution's padding) runs only where the condition holds: hoisted
  // into a vector load it would read out of bounds at the border (an illegal address on the GPU).
  std::string padded = vec_loop([](const Buffer& X, const Buffer& Y, const Var& tx, const Var& v) {
    return Loop(v, 4, Store(Y, Select(GE(tx, I(1)), Load(X, {tx * 4 + v - 4}), F(0)), {tx * 4 + v}),
                ForKind::kVectorized);
  });
  EXPECT_FALSE(Has(padded, "X_v")) << padded;
  // The condition is the same for the 4 lanes (an aligned base against a multiple of 4): the whole
  // vector is loaded under it, or zeroed.
  EXPECT_TRUE(Has(padded, "= tx >= 1 ? *reinterpret_cast<const uint4*>(&X[tx * 4 - 4]) : uint4{};")) << padded;
  // Per lane where the lanes may differ (a bound that is no multiple of the width).
  std::string ragged = vec_loop([](const Buffer& X, const Buffer& Y, const Var& tx, const Var& v) {
    return Loop(v, 4, Store(Y, Select(LT(tx * 4 + v, I(37)), Load(X, {tx * 4 + v}), F(0)), {tx * 4 + v}),
                ForKind::kVectorized);
  });
  EXPECT_TRUE(Has(ragged, "*reinterpret_cast<float4*>(&Y[tx * 4]) = make_float4(")) << ragged;
  EXPECT_TRUE(Has(ragged, "tx < 10 ? X[tx * 4] : 0.0f, tx < 9 ? X[tx * 4 + 1] : 0.0f")) << ragged;
  // Likewise the right operand of && and ||.
  std::string guarded = vec_loop([](const Buffer& X, const Buffer& Y, const Var& tx, const Var& v) {
    return Loop(v, 4, Store(Y, Select(And(GE(tx, I(1)), GT(Load(X, {tx * 4 + v - 4}), F(0))), F(1), F(0)), {tx * 4 + v}),
                ForKind::kVectorized);
  });
  EXPECT_FALSE(Has(guarded, "X_v")) << guarded;
  ExpectCompiles(padded);
}

TEST(CodegenCuda, GuardOfEveryLaneGoesAroundTheVectorAccess) {
  // A cooperative fetch's tail: the threads past the tile's end skip the whole vector.
  Buffer X = Flat("X", 1024), S = Flat("S", 1000, Scope::kShared), Y = Flat("Y", 1024);
  Var tx = MakeVar("tx"), v = MakeVar("v");
  Stmt body = ThreadLoop(
      tx, 256, ThreadTag::kThreadIdxX,
      Allocate(S, Seq({Loop(v, 4, IfThenElse(LT(tx, I(250)), Store(S, Load(X, {tx * 4 + v}), {tx * 4 + v})),
                            ForKind::kVectorized),
                       Barrier(), Store(Y, Load(S, {FloorMod(tx, I(250)) * 4}), {tx})})));
  std::string code = GenCode(PrimFunc{"guarded", {X, Y}, body});
  EXPECT_TRUE(Has(code, R"(  if (tx < 250) {
    const float4 X_v = *reinterpret_cast<const float4*>(&X[tx * 4]);
    *reinterpret_cast<float4*>(&S[tx * 4]) = X_v;
  }
  __syncthreads();
)")) << code;
  ExpectCompiles(code);
}

// ---- expressions ----------------------------------------------------------------------------------

TEST(CodegenCuda, ExpressionsUseCudaForms) {
  Buffer X = Flat("X", 64), Y = Flat("Y", 64);
  Buffer Iy = MakeBuffer("Iy", DType::kInt64, {I(4)});
  Var tx = MakeVar("tx");
  Expr x = Load(X, {tx});
  Expr d = tx - 32;
  Stmt body = ThreadLoop(
      tx, 64, ThreadTag::kThreadIdxX,
      Seq({Store(Y,
                 Call(DType::kFloat32, "sigmoid", {x}) + Call(DType::kFloat32, "rsqrt", {x}) +
                     Min(x, F(INFINITY)) + Max(x, F(-INFINITY)) + Call(DType::kFloat32, "exp", {x}) +
                     Cast(DType::kFloat32, FloorDiv(d, I(5)) + FloorMod(d, I(6)) + Min(d, I(3)) + Max(tx, I(2))) +
                     Select(GT(x, F(0.1)), F(1e-10), Cast(DType::kFloat32, FloorDiv(d, I(8)))),
                 {tx}),
           IfThenElse(EQ(tx, I(0)), Store(Iy, Cast(DType::kInt64, tx) + IntImm(5000000000LL, DType::kInt64), {I(0)}))}));
  std::string code = GenCode(PrimFunc{"exprs", {X, Iy, Y}, body});
  EXPECT_TRUE(Has(code, R"(// Generated by autotune (CUDA backend). Kernels: exprs.

__device__ __forceinline__ int at_floordiv_i32(int a, int b) {
  int q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ int at_floormod_i32(int a, int b) {
  int r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__device__ __forceinline__ float at_sigmoid_f32(float x) { return 1.0f / (1.0f + expf(-x)); }

extern "C" __global__ void __launch_bounds__(64) exprs(const float* __restrict__ X, long long* __restrict__ Iy, float* __restrict__ Y) {
  const int tx = (int)threadIdx.x;
  Y[tx] = at_sigmoid_f32(X[tx]) + rsqrtf(X[tx]) + fminf(X[tx], __int_as_float(0x7f800000)) + fmaxf(X[tx], -__int_as_float(0x7f800000)) + expf(X[tx]) + (float)(at_floordiv_i32(tx - 32, 5) + at_floormod_i32(tx - 32, 6) + min(tx - 32, 3) + max(tx, 2)) + (X[tx] > 0.100000001f ? 1.00000001e-10f : (float)((tx - 32) >> 3));
  if (tx == 0) {
    Iy[0] = (long long)tx + 5000000000LL;
  }
}
)")) << code;
  ExpectCompiles(code);
}

TEST(CodegenCuda, NamesAreValidAndDistinct) {
  Buffer A = MakeBuffer("A.shared", DType::kFloat32, {I(4)}), Y = Flat("threadIdx", 16);
  Var a = MakeVar("class"), b = MakeVar("__x"), c = MakeVar("i");
  Stmt body = ThreadLoop(a, 4, ThreadTag::kThreadIdxX, Loop(b, 2, Loop(c, 2, Store(Y, Load(A, {a}), {a * 4 + b * 2 + c}))));
  CudaModule m = Gen(PrimFunc{"2d-kernel", {A, Y}, body});
  EXPECT_TRUE(Has(m.code, "v2d_kernel(const float* __restrict__ A_shared, float* __restrict__ threadIdx_1)")) << m.code;
  EXPECT_TRUE(Has(m.code, "const int class_1 = (int)threadIdx.x;")) << m.code;
  EXPECT_TRUE(Has(m.code, "for (int v__x = 0;")) << m.code;
  EXPECT_EQ(m.kernels[0].entry, "v2d_kernel");
  ExpectCompiles(m.code);
}

// ---- errors --------------------------------------------------------------------------------------

TEST(CodegenCuda, WhatCannotBeGeneratedIsAnErrorValue) {
  Buffer X = Flat("X", 16), Y = Flat("Y", 16), S = Flat("S", 16, Scope::kShared), L = Flat("L", 1, Scope::kLocal);
  Var tx = MakeVar("tx"), ty = MakeVar("ty"), bx = MakeVar("bx"), k = MakeVar("k"), vt = MakeVar("vt");
  auto threads = [&](Stmt s) { return ThreadLoop(tx, 16, ThreadTag::kThreadIdxX, s); };
  ExpectError(PrimFunc{"f", {X, Y}, Allocate(S, threads(IfThenElse(LT(tx, I(8)), Seq({Store(S, F(1), {tx}), Barrier()}))))},
              "barrier under a thread-dependent condition");
  ExpectError(PrimFunc{"f", {X, Y}, Allocate(S, threads(For(k, I(0), tx, ForKind::kSerial, Barrier())))},
              "barrier under a thread-dependent condition or loop bound");
  ExpectError(PrimFunc{"f", {X, Y}, threads(Allocate(L, Seq({Store(L, Load(X, {tx}), {I(0)}),
                                                           IfThenElse(GT(Load(L, {I(0)}), F(0)), Barrier())})))},
              "barrier under a thread-dependent condition");
  ExpectError(PrimFunc{"f", {X, Y}, threads(ThreadLoop(ty, 2, ThreadTag::kThreadIdxX, Store(Y, F(0), {tx})))},
              "nested in another loop bound to threadIdx.x");
  ExpectError(PrimFunc{"f", {X, Y}, threads(ThreadLoop(bx, 2, ThreadTag::kBlockIdxX, Store(Y, F(0), {tx})))},
              "inside a threadIdx loop");
  ExpectError(PrimFunc{"f", {X, Y}, ThreadLoop(vt, 2, ThreadTag::kVThread, Store(Y, F(0), {vt}))}, "vthread");
  ExpectError(PrimFunc{"f", {X, Y}, For(tx, I(0), Cast(DType::kInt32, Load(X, {I(0)})), ForKind::kThreadBinding,
                                          Store(Y, F(0), {tx}), ThreadTag::kThreadIdxX)},
              "not constant");
  // Work outside the blockIdx loops is fine as a kernel of its own, not inside a multi-block one.
  EXPECT_EQ(Gen(PrimFunc{"f", {X, Y}, Seq({Store(Y, F(0), {I(0)}), ThreadLoop(bx, 4, ThreadTag::kBlockIdxX,
                                                                           Store(Y, F(1), {bx}))})})
                .kernels.size(),
            2u);
  ExpectError(PrimFunc{"f", {X, Y}, Loop(k, 2, Seq({Store(Y, F(0), {k}), ThreadLoop(bx, 4, ThreadTag::kBlockIdxX,
                                                                                      Store(Y, F(1), {bx}))}))},
              "outside the blockIdx loops");
  ExpectError(PrimFunc{"f", {X, Y}, threads(Store(Y, Call(DType::kFloat32, "frobnicate", {Load(X, {tx})}), {tx}))},
              "frobnicate");
  Buffer X2 = MakeBuffer("X2", DType::kFloat32, {I(2), I(2)});
  ExpectError(PrimFunc{"f", {X2, Y}, Store(Y, Load(X2, {I(0), I(1)}), {I(0)})}, "not flattened");
  ExpectError(PrimFunc{"f", {X, Y}, Seq({})}, "computes nothing");
}

}  // namespace
}  // namespace autotune::tir
