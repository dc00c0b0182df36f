// The tensor intrinsics a loop tile can be replaced by (schedule primitive `tensorize`), and how a
// tile's loop nest matches one. Each intrinsic is defined by a description: the loops of its tile
// and the one store they run, over formal operands (TVM TensorIR's intrinsic descriptions). A tile
// matches when its loops have the description's extents and its store is the description's with
// each operand a tile of a real buffer: rows `row_step` elements apart, unit stride along a row.
//
// The warp-level intrinsics (sm_80 mma.sync, float32 accumulation), P the product of a precision
// (tir/ops/precision.h):
//
//   mma_m16n8k16        for i<16, j<8, k<16: C[i,j] = C[i,j] + f32(A[i,k]) * f32(B[k,j])
//                       A, B float16 or bfloat16 fragments, C a float32 fragment
//   mma_m16n8k8_tf32    for i<16, j<8, k<8: C[i,j] = C[i,j] + P_tf32(A[i,k], B[k,j])
//   mma_m16n8k8_3xtf32  for i<16, j<8, k<8: C[i,j] = C[i,j] + P_3xtf32(A[i,k], B[k,j])
//                       A, B, C float32 fragments (one mma.sync of TF32, or three)
//   fill_16x8           for i<16, j<8: C[i,j] = 0                  (the mma's reduction init)
//   load_a_16x16        for i<16, k<16: A[i,k] = X[i,k]            (16-bit; ldmatrix.x4 from shared memory)
//   load_b_16x8         for k<16, j<8: B[k,j] = X[k,j] or X[j,k]   (16-bit; ldmatrix.x2.trans, or .x2 from [n][k] rows)
//   load_b_16x16        for k<16, j<16: likewise                   (two B tiles side by side; ldmatrix.x4.trans or .x4)
//   load_a_16x8         for i<16, k<8: A[i,k] = X[i,k]             (float32; rounded to TF32 on loading)
//   load_b_8x8          for k<8, j<8: B[k,j] = X[k,j] or X[j,k]    (float32; likewise)
//   store_16x8          for i<16, j<8: [if p(i,j)] Y[x(i,j)] = f(C[i,j], ...)   (any elementwise epilogue,
//                       stored at any index: a tile of Y, or a convolution's layout)
//
// A fragment is a local buffer that only these intrinsics touch: the C backend keeps the whole tile
// in every thread and runs the description; CUDA spreads each tile over the 32 lanes of a warp in
// the layout mma.sync wants (a role: matrix A, matrix B or accumulator). Rounding a float32 A or B
// fragment to TF32 where it is loaded changes nothing the mma computes (rounding twice is rounding
// once), and a 3xtf32 fragment holds both parts of each element.
#pragma once

#include <optional>
#include <unordered_map>
#include <string>
#include <vector>

#include "support/result.h"
#include "tir/analysis/int_bound.h"
#include "tir/ops/precision.h"
#include "tir/stmt.h"

namespace autotune::tir {

enum class FragmentRole : uint8_t { kMatrixA, kMatrixB, kAccumulator };
const char* FragmentRoleName(FragmentRole r);

// The tile one intrinsic call covers in a fragment of `role` whose elements are of `element` (16-bit:
// m16n8k16's tiles, float32: m16n8k8's), and how many of its elements each lane holds.
struct FragmentTile {
  int64_t rows, cols;
  int64_t per_lane;  // rows * cols / 32
};
FragmentTile TileOf(FragmentRole role, DType element);

// How a kernel uses a fragment: its role, and whether it holds the two TF32 parts of each element
// (an operand of mma_m16n8k8_3xtf32).
struct FragmentUse {
  FragmentRole role;
  bool split = false;
};
using FragmentMap = std::unordered_map<const BufferNode*, FragmentUse>;

enum class TensorIntrinsicKind : uint8_t { kMma, kFill, kLoadA, kLoadB, kStore };

// The element type of an intrinsic's A and B operands: 16-bit floats, or float32.
enum class OperandType : uint8_t { kHalf, kFloat32 };

struct TensorIntrinsic {
  std::string name;
  TensorIntrinsicKind kind;
  std::vector<int64_t> extents;  // of the tile's loops, outermost first
  std::string init;              // the intrinsic that initializes its output (a reduction's), or ""
  OperandType operands = OperandType::kHalf;  // kMma, kLoadA, kLoadB
  Precision precision = Precision::kIEEE;     // kMma: the product it computes
};

const std::vector<TensorIntrinsic>& TensorIntrinsics();
const TensorIntrinsic* FindTensorIntrinsic(const std::string& name);

// A tile of a buffer: element (r, c) of the tile is element origin + r * row_step + c (flat), or,
// transposed, origin + c * row_step + r (a B tile read from [n][k] rows: ldmatrix without .trans).
struct TileOperand {
  Buffer buffer;
  Expr origin;
  int64_t row_step = 0;
  bool transposed = false;
  // The flat index of element (r, c).
  Expr At(const Expr& r, const Expr& c) const;
};

// A matched tile. `loops` are the tile's loop variables (outermost first); `inner` is what runs
// inside them (the store, or the store under its guard); `store` is that store.
struct TensorCall {
  const TensorIntrinsic* intrinsic = nullptr;
  std::vector<Var> loops;
  Stmt inner;
  const BufferStoreNode* store = nullptr;
  // kMma: a, b, c. kFill: c. kLoadA/kLoadB: c is the fragment written, a the tile read. kStore: c is
  // the accumulator read, a the tile written (when the store writes a tile).
  std::optional<TileOperand> a, b, c;
  // The fragments the call touches and how.
  std::vector<std::pair<Buffer, FragmentUse>> fragments;
};

// Element `e` (0 <= e < per_lane) of lane `lane`'s share of a tile of `role` and `element` type: its
// (row, col) in the tile, in the layout of mma.sync m16n8k16 for 16-bit elements and m16n8k8 for
// float32 (PTX ISA, "Matrix fragments for mma.m16n8k16" and ".m16n8k8"). Elements 2w and 2w+1 of a
// 16-bit fragment are the halves of the lane's 32-bit register w; a float32 element is a register.
std::pair<Expr, Expr> FragmentElement(FragmentRole role, DType element, const Expr& lane, int64_t e);

// A product of two loads at a precision: ProductAt(a, b, precision) with a and b the loads, widened to
// float32 when they are 16-bit (then the precision is ieee).
struct ProductForm {
  const BufferLoadNode* a = nullptr;
  const BufferLoadNode* b = nullptr;
  Precision precision = Precision::kIEEE;
};
std::optional<ProductForm> MatchProduct(const Expr& product);

// Matches a tensorized tile against its intrinsic's description; the error says what differs.
Result<TensorCall> MatchTensorIntrinsic(const TensorizeNode& t);
// The same verdict, without simplifying the operands' origins where it can do without (lowering checks
// every tile it makes: the search lowers thousands).
Result<void> CheckTensorIntrinsic(const TensorizeNode& t);

// The fragments a statement's tensorized tiles touch, with their uses (tiles that do not match their
// intrinsic are skipped: lowering and codegen report them); an error when one buffer plays two roles
// or is split for one mma and not for another. It reads each tile's form, not where its operands lie:
// lowering matched every tile when it made it (matching them again here took a tenth of the search's
// time on tensor-core workloads).
Result<FragmentMap> FragmentsOf(const Stmt& s);
// Whether a statement holds tensorized tiles.
bool HasTensorizedTiles(const Stmt& s);

// The index of the tile at `origin` among a fragment's tiles of `role` (TileOf the fragment's type;
// tiles numbered row of tiles by row of tiles, `row_step` elements a row), or nothing when the origin
// cannot be proved to start a tile. `bounds` holds the ranges of the loop variables in `origin`.
std::optional<Expr> FragmentTileIndex(const TileOperand& t, FragmentRole role, const BoundAnalyzer& bounds);

}  // namespace autotune::tir
