// Tensor-core schedules of 16-bit matrix products: the C path runs the intrinsics' descriptions and
// must give the reference's answer; the CUDA source holds mma.sync and ldmatrix and NVRTC compiles
// it for sm_80 and sm_90 where NVRTC is installed (no GPU needed).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "measure/c_builder.h"
#include "measure/cpu_runner.h"
#include "measure/nvrtc_builder.h"
#include "measure/nvrtc_compiler.h"
#include "search/tensor_core_schedule.h"
#include "tests/search/tensor_core_cases.h"
#include "tir/analysis/gpu_validity.h"
#include "tir/codegen/codegen_cuda.h"
#include "tir/lower/lower.h"
#include "tir/ops/operator.h"
#include "tir/printer.h"
#include "tir/analysis/tensor_intrinsics.h"
#include "tir/transform/simplify.h"
#include "tir/transform/substitute.h"

namespace autotune::search {
namespace {

size_t MmaCalls(const std::string& code, const std::string& helper) {
  size_t calls = 0;
  for (size_t at = code.find(helper); at != std::string::npos; at = code.find(helper, at + 1)) ++calls;
  return calls;
}

TEST(TensorCoreSchedule, ThroughTheCPathGivesTheReferenceAnswer) {
  auto builder = measure::MakeCBuilder(CorrectnessConfig());
  auto runner = measure::MakeCpuRunner(CorrectnessConfig());
  for (const Case& c : Cases()) ExpectCorrect(c, *builder, *runner);
}

TEST(TensorCoreSchedule, CudaUsesMmaAndLdmatrixAndCompiles) {
  std::vector<measure::BuildInput> inputs;
  std::vector<std::string> names;
  for (const Case& c : Cases()) {
    const std::optional<Lowered> lowered = LowerCase(c);
    if (!lowered) continue;
    const Lowered& l = *lowered;
    auto valid = tir::CheckGpuValidity(l.func);
    EXPECT_TRUE(valid) << l.name << "\n" << (valid ? "" : valid.error().message);
    auto m = tir::CodegenCuda(l.func);
    ASSERT_TRUE(m) << l.name << "\n" << m.error().message << "\n" << tir::ToString(l.func.body);
    const bool tf32 = c.dtype == "tf32" || c.dtype == "3xtf32";
    EXPECT_NE(m->code.find("at_ldmatrix_x4("), std::string::npos) << m->code;
    if (tf32) {
      EXPECT_NE(m->code.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
      EXPECT_NE(m->code.find("cvt.rna.tf32.f32"), std::string::npos);
      // Three mma per tile for 3xtf32 (the helper's definition names it once more), in every step of
      // the main loop (pipelined fragments unroll it).
      tir::LowerOptions one_step;
      one_step.pipeline_fragments = false;
      const std::optional<Lowered> rolled = LowerCase(c, one_step);
      ASSERT_TRUE(rolled);
      auto rolled_code = tir::CodegenCuda(rolled->func);
      ASSERT_TRUE(rolled_code) << rolled_code.error().message;
      const size_t per_tile = c.dtype == "3xtf32" ? 3 : 1;
      EXPECT_EQ(MmaCalls(rolled_code->code, "at_mma_m16n8k8_tf32("), per_tile + 1) << rolled_code->code;
      EXPECT_EQ((MmaCalls(m->code, "at_mma_m16n8k8_tf32(") - 1) % per_tile, 0u) << m->code;
    } else {
      EXPECT_NE(m->code.find("at_mma_m16n8k16_"), std::string::npos) << m->code;
      EXPECT_NE(m->code.find("mma.sync.aligned.m16n8k16.row.col.f32"), std::string::npos);
      // B from [k][n] rows: ldmatrix.trans; from [n][k] rows (a channels-last input copied along its
      // channels, 16 bytes at a time): ldmatrix without .trans. Two tiles at a time (.x4) where a
      // warp has an even number of them.
      const std::string b_load = fmt::format("ldmatrix.sync.aligned.m8n8.{}{}.shared.b16", c.tiling.tiles_n % 2 ? "x2" : "x4",
                                             c.tiling.b_n_rows ? "" : ".trans");
      EXPECT_NE(m->code.find(b_load), std::string::npos) << b_load << "\n" << m->code;
    }
    if (c.tiling.b_n_rows && c.tiling.stages > 1) {
      EXPECT_NE(m->code.find(c.shape.find("pad=") != std::string::npos ? "at_cp_async_16_or_zero(" : "at_cp_async_16("),
                std::string::npos) << m->code;
    }
    // An NCHW convolution's im2col copy gathers 16-bit elements one at a time, which CUDA cannot copy
    // asynchronously: pipelined, they load into registers before the step's mma and are stored after
    // them (tir/lower/register_staging.h), as a gemm's rows of 17 elements are. An aligned gemm's
    // copies are all cp.async.
    if (c.op == "conv2d" && c.shape == "N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1") {
      const size_t staged = m->code.find("stage[");
      EXPECT_NE(staged, std::string::npos) << m->code;
      EXPECT_LT(m->code.find("at_mma_m16n8k16_", staged), m->code.rfind("] = stage[")) << m->code;
    }
    if (c.op == "gemm") {
      EXPECT_EQ(m->code.find("stage[") != std::string::npos, c.shape == "M=33,N=17,K=40" && !tf32) << m->code;
    }
    // Staged gathers with fragments a step ahead: the stores into shared memory before the loop's
    // barrier with two stages, after the last mma with three.
    if (c.op == "conv2d" && c.tiling.k_steps == 2 && c.tiling.stages > 1 && c.dtype != "tf32") {
      EXPECT_NE(m->code.find("_odd["), std::string::npos) << tir::ToString(l.func.body);
      const size_t stores = m->code.rfind("] = stage[");
      const size_t wait = m->code.rfind("at_cp_async_wait<");
      const size_t last_mma = m->code.rfind("at_mma_m16n8k16_");
      EXPECT_EQ(stores < wait, c.tiling.stages == 2) << m->code;
      EXPECT_EQ(stores > last_mma, c.tiling.stages == 3) << m->code;
    }
    if (c.shape == "M=33,N=17,K=40") {  // zero-padded copies: whole 16-byte vectors, copied or zeroed
      EXPECT_NE(m->code.find("at_cp_async_16_or_zero("), std::string::npos) << m->code;
    }
    // A lane's two adjacent outputs of a matrix are one store where N is even (pairs aligned to their size).
    const bool paired = m->code.find(tf32 ? "*reinterpret_cast<float2*>(&C" : "*reinterpret_cast<unsigned*>(&C_") != std::string::npos;
    if (c.op.find("conv") == std::string::npos) {
      EXPECT_EQ(paired, c.shape.find("N=17") == std::string::npos && c.shape.find("N=13") == std::string::npos)
          << c.shape << "\n" << m->code;
    }
    inputs.push_back(measure::BuildInput::FromFunc(l.func));
    names.push_back(l.name);
  }
  if (!measure::LoadNvrtc()) GTEST_SKIP() << "NVRTC is not installed: CUDA sources were checked, not compiled";
  for (const char* arch : {"sm_80", "sm_90"}) {
    measure::MeasureConfig config = CorrectnessConfig();
    config.cuda_arch = arch;
    auto cubins = measure::MakeNvrtcBuilder(config)->Build(inputs);
    for (size_t i = 0; i < cubins.size(); ++i) {
      EXPECT_TRUE(cubins[i].ok()) << arch << " " << names[i] << "\n" << cubins[i].error_message << "\n"
                                  << cubins[i].source;
    }
  }
}

// A pipelined main loop loads each step's fragments during the step before (two register sets),
// with its barrier after the last loads of a chunk, not before the first; a kernel the second set
// would take over the register budget keeps one, as does a chunk of an odd number of steps. All
// give the reference's answer on the C path.
TEST(TensorCoreSchedule, FragmentsLoadOneStepAheadWithinTheRegisterBudget) {
  auto builder = measure::MakeCBuilder(CorrectnessConfig());
  auto runner = measure::MakeCpuRunner(CorrectnessConfig());
  const Case ahead{"gemm", "M=64,N=64,K=128", "", "float16", TensorCoreTiling{2, 2, 2, 4, 2, 3}};
  // 16 warps of 80x32 tiles: 80 accumulators and 28 fragment registers a lane fit 512 threads'
  // budget of 128 registers once, not twice.
  const Case over{"gemm", "M=320,N=128,K=64", "", "float16", TensorCoreTiling{4, 4, 5, 4, 2, 2}};
  // One or three mma steps a chunk: the register sets would have to alternate between chunks.
  const Case one_step{"gemm", "M=64,N=64,K=64", "", "float16", TensorCoreTiling{2, 2, 2, 4, 1, 2}};
  const Case three_steps{"gemm", "M=64,N=64,K=96", "", "bfloat16", TensorCoreTiling{2, 2, 2, 4, 3, 2}};
  for (const auto& [c, pipelined] : {std::pair{ahead, true}, std::pair{over, false}, std::pair{one_step, false},
                                     std::pair{three_steps, false}}) {
    ExpectCorrect(c, *builder, *runner);
    const std::optional<Lowered> l = LowerCase(c);
    ASSERT_TRUE(l);
    ASSERT_TRUE(tir::CheckGpuValidity(l->func)) << l->name;
    auto m = tir::CodegenCuda(l->func);
    ASSERT_TRUE(m) << m.error().message;
    const std::string& code = m->code;
    const size_t loop = code.find("for (int k_0 = 0;");
    ASSERT_NE(loop, std::string::npos) << code;
    EXPECT_EQ(code.find("_odd[") != std::string::npos, pipelined) << code;
    if (!pipelined) continue;
    // Step 0 of the first chunk before the loop. In it (two steps a chunk): step 1's loads into the
    // odd set, the wait for the next chunk, step 0's mma, the next chunk's step 0 loads, step 1's mma.
    EXPECT_LT(code.find("at_ldmatrix_x4(", code.find("__global__")), loop) << code;
    const size_t odd_load = code.find("at_ldmatrix_x4(A_shared_local_odd[", loop);
    const size_t wait = code.find("at_cp_async_wait<", loop);
    const size_t first_mma = code.find("at_mma_m16n8k16_f16(", loop);
    const size_t next_load = code.find("at_ldmatrix_x4(A_shared_local[", loop);
    const size_t last_mma = code.rfind("at_mma_m16n8k16_f16(");
    EXPECT_LT(odd_load, wait) << code;
    EXPECT_LT(wait, first_mma) << code;
    EXPECT_LT(first_mma, next_load) << code;
    EXPECT_LT(next_load, last_mma) << code;
    EXPECT_NE(code.find("A_shared_local_odd[", last_mma), std::string::npos) << code;
  }
}

// tensorize refuses what cannot be a tile of its intrinsic: another target, an unknown name, a tile
// of the wrong depth; lowering refuses a tile whose loops or store differ from the description.
TEST(Tensorize, RefusesWhatIsNotATile) {
  auto w = tir::MakeWorkload("gemm", "M=32,N=16,K=32", "", "float16");
  ASSERT_TRUE(w);
  tir::Schedule cpu(*w, tir::TargetKind::kCpu);
  auto c = cpu.GetStage("C");
  auto loops = cpu.GetLoops(*c);
  EXPECT_EQ(cpu.Tensorize((*loops)[0], "mma_m16n8k16").error().message, "tensorize: tensor intrinsics are cuda's");

  tir::Schedule sch(*w, tir::TargetKind::kCuda);
  c = sch.GetStage("C");
  loops = sch.GetLoops(*c);
  EXPECT_EQ(sch.Tensorize((*loops)[0], "mma_m99").error().message, "tensorize: unknown intrinsic 'mma_m99'");
  EXPECT_NE(sch.Tensorize((*loops)[1], "mma_m16n8k16").error().message.find("covers the 3 innermost loops"),
            std::string::npos);
  // A 32 x 16 x 32 nest is not a 16 x 8 x 16 tile: lowering says so.
  ASSERT_TRUE(sch.Tensorize((*loops)[0], "mma_m16n8k16"));
  auto f = tir::Lower(sch.state());
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("stage C does not match tensor intrinsic mma_m16n8k16"), std::string::npos)
      << f.error().message;
}

// pad_einsum grows a fresh reduction and reads its operands through zero-padded stages; it refuses
// a stage whose loops were transformed, and the wrong number of multiples.
TEST(PadEinsum, PadsAFreshReductionThroughPaddedOperands) {
  auto w = tir::MakeWorkload("gemm", "M=33,N=17,K=40", "", "float16");
  ASSERT_TRUE(w);
  tir::Schedule sch(*w, tir::TargetKind::kCuda);
  auto c = sch.GetStage("C");
  EXPECT_EQ(sch.PadEinsum(*c, {16, 8}).error().message, "pad_einsum: C has 3 iterators, 2 multiples were given");
  ASSERT_TRUE(sch.PadEinsum(*c, {16, 8, 16}));
  const tir::ScheduleState& st = sch.state();
  EXPECT_EQ(st.stages[st.FindStage("C")].op->shape, (std::vector<int64_t>{48, 24}));
  EXPECT_GE(st.FindStage("A_pad"), 0);
  EXPECT_GE(st.FindStage("B_pad"), 0);
  auto f = tir::Lower(sch.state());
  ASSERT_TRUE(f) << f.error().message;
  auto builds = measure::MakeCBuilder(CorrectnessConfig())->Build({measure::BuildInput::FromFunc(*f)});
  auto results = measure::MakeCpuRunner(CorrectnessConfig())->Run(*w, builds);
  EXPECT_TRUE(results[0].correct) << results[0].error_message;

  tir::Schedule split(*w, tir::TargetKind::kCuda);
  c = split.GetStage("C");
  auto loops = split.GetLoops(*c);
  ASSERT_TRUE(split.Split((*loops)[0], {std::monostate{}, int64_t{16}}));
  EXPECT_NE(split.PadEinsum(*c, {16, 8, 16}).error().message.find("must be a fresh reduction"), std::string::npos);
}

// A fragment tile's index follows from its origin only when the origin moves by whole tiles.
TEST(Tensorize, FragmentTilesAreNumberedRowOfTilesByRowOfTiles) {
  tir::Var r = tir::MakeVar("r"), c = tir::MakeVar("c");
  tir::BoundAnalyzer bounds;
  bounds.Bind(r, 0, 2);
  bounds.Bind(c, 0, 4);
  tir::Buffer acc = tir::MakeBuffer("acc", tir::DType::kFloat32, {tir::IntImm(32 * 32)}, tir::Scope::kLocal);
  // A 32 x 32 accumulator: 2 rows of 4 16x8 tiles; tile (r, c) starts at r * 16 * 32 + c * 8.
  auto index = tir::FragmentTileIndex({acc, r * 512 + c * 8, 32}, tir::FragmentRole::kAccumulator, bounds);
  ASSERT_TRUE(index);
  for (int64_t rv = 0; rv < 2; ++rv) {
    for (int64_t cv = 0; cv < 4; ++cv) {
      tir::Expr at = tir::Simplify(tir::Substitute(*index, [&](const tir::VarNode* v) -> tir::Expr {
        return v == r.get() ? tir::IntImm(rv) : v == c.get() ? tir::IntImm(cv) : nullptr;
      }));
      EXPECT_TRUE(tir::IsConstInt(at, rv * 4 + cv)) << tir::ToString(at);
    }
  }
  // Half a tile down, or a column step that leaves the first row of tiles: no tile index.
  EXPECT_FALSE(tir::FragmentTileIndex({acc, r * 256, 32}, tir::FragmentRole::kAccumulator, bounds));
  EXPECT_FALSE(tir::FragmentTileIndex({acc, c * 16, 32}, tir::FragmentRole::kAccumulator, bounds));
  EXPECT_FALSE(tir::FragmentTileIndex({acc, c * 4, 32}, tir::FragmentRole::kAccumulator, bounds));
}

// Every lane's share of a tile, over the 32 lanes, covers the tile once (the PTX fragment layouts).
TEST(Tensorize, FragmentLayoutsCoverEachTileOnce) {
  for (auto type : {tir::DType::kFloat16, tir::DType::kFloat32})
  for (auto role : {tir::FragmentRole::kMatrixA, tir::FragmentRole::kMatrixB, tir::FragmentRole::kAccumulator}) {
    const tir::FragmentTile tile = tir::TileOf(role, type);
    ASSERT_EQ(tile.per_lane * 32, tile.rows * tile.cols);
    std::vector<int> seen(tile.rows * tile.cols, 0);
    for (int64_t lane = 0; lane < 32; ++lane) {
      for (int64_t e = 0; e < tile.per_lane; ++e) {
        auto [row, col] = tir::FragmentElement(role, type, tir::IntImm(lane), e);
        const tir::Expr r = tir::Simplify(row), c = tir::Simplify(col);
        const int64_t* rv = tir::AsConstInt(r);
        const int64_t* cv = tir::AsConstInt(c);
        ASSERT_TRUE(rv && cv);
        ASSERT_LT(*rv, tile.rows);
        ASSERT_LT(*cv, tile.cols);
        ++seen[*rv * tile.cols + *cv];
      }
    }
    for (int n : seen) EXPECT_EQ(n, 1) << tir::FragmentRoleName(role);
  }
}

}  // namespace
}  // namespace autotune::search

namespace autotune::search {
namespace {

// matrix_form: a convolution becomes weights x im2col over fused iterators; the stage keeps its
// shape and reads the product back, so the C path still gives the reference's answer, and the
// trace replays from its JSON to the same program. A stage already transformed, or one with no
// rows of a matrix product (a depthwise convolution), is refused.
TEST(MatrixForm, AConvolutionIsWeightsTimesItsIm2colMatrix) {
  auto w = tir::MakeWorkload("conv2d", "N=2,C=3,H=5,W=5,K=4,R=3,S=3,pad=1", "bias", "float32");
  ASSERT_TRUE(w) << w.error().message;
  tir::Schedule sch(*w, tir::TargetKind::kCpu);
  auto product = sch.MatrixForm(*sch.GetStage("conv"));
  ASSERT_TRUE(product) << product.error().message;
  const tir::ScheduleState& st = sch.state();
  const int pid = *sch.Resolve(*product);
  EXPECT_EQ(st.stages[pid].name(), "conv_matrix");
  EXPECT_EQ(st.stages[pid].op->shape, (std::vector<int64_t>{4, 50}));
  EXPECT_EQ(st.stages[st.FindStage("conv_a")].op->shape, (std::vector<int64_t>{4, 27}));
  EXPECT_EQ(st.stages[st.FindStage("conv_b")].op->shape, (std::vector<int64_t>{27, 50}));
  EXPECT_EQ(st.stages[st.FindStage("conv")].op->shape, (std::vector<int64_t>{2, 4, 5, 5}));
  auto f = tir::Lower(sch.state());
  ASSERT_TRUE(f) << f.error().message;
  auto builder = measure::MakeCBuilder(CorrectnessConfig());
  auto runner = measure::MakeCpuRunner(CorrectnessConfig());
  auto builds = builder->Build({measure::BuildInput::FromFunc(*f)});
  auto results = runner->Run(*w, builds);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].correct) << results[0].error_message << "\n" << builds[0].source;

  auto trace = tir::Trace::FromJsonText(sch.trace().ToJson().dump());
  ASSERT_TRUE(trace) << trace.error().message;
  auto again = tir::Schedule::Replay(*w, tir::TargetKind::kCpu, *trace);
  ASSERT_TRUE(again) << again.error().message << "\n" << sch.trace().ToText();
  auto g = tir::Lower(again->state());
  ASSERT_TRUE(g);
  EXPECT_EQ(tir::ToString(g->body), tir::ToString(f->body));

  tir::Schedule split(*w, tir::TargetKind::kCpu);
  auto loops = split.GetLoops(*split.GetStage("conv"));
  ASSERT_TRUE(split.Split((*loops)[1], {std::monostate{}, int64_t{2}}));
  EXPECT_EQ(split.MatrixForm(*split.GetStage("conv")).error().message, "matrix_form: conv must be a fresh reduction");
  auto dw = tir::MakeWorkload("conv2d", "N=1,C=4,H=5,W=5,K=4,R=3,S=3,pad=1,groups=4", "", "float32");
  ASSERT_TRUE(dw);
  tir::Schedule depthwise(*dw, tir::TargetKind::kCpu);
  EXPECT_EQ(depthwise.MatrixForm(*depthwise.GetStage("conv")).error().message,
            "matrix_form: conv has no rows, columns or reduction of a matrix product");
}

}  // namespace
}  // namespace autotune::search
