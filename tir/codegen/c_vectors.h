// Explicit SIMD for the C backend. A vectorized loop of constant extent whose body is float32 stores
// of +, -, *, / over loads contiguous along the loop (or values the loop does not change) is printed
// as chunks of GCC vector-extension values of 16 or 8 lanes (at most the target's: GCC keeps a vector
// wider than the registers on the stack; a gemm 512^3 tile of 16-lane chunks on AVX2 took 16 ms,
// 0.5 of 8-lane ones), and the small loop nests around such a
// loop are fully unrolled: a register tile's accumulator is then a set of vectors at constant places,
// which the C compiler keeps in registers across the reduction. With `omp simd` on the scalar loop
// GCC kept the tile in memory (a channel-vector convolution, C=256 14x14: 2.05 ms scalar, 1.58 as vectors).
// Every other loop keeps the scalar form.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tir/codegen/c_family.h"
#include "tir/stmt.h"

namespace autotune::tir {

// The lanes of the chunks a vectorized loop is printed in (16, or 8 where the extent is an odd
// multiple of 8; at most `max_lanes`, the target's), or nothing when the loop does not have that form.
std::optional<int> VectorChunkLanes(const ForNode* loop, int max_lanes);

// How many vector chunks a loop nest made of single loops of constant extent around a chunked loop
// expands to when unrolled (0 when `loop` is not such a nest, or holds one of over kMaxUnrolledChunks).
int64_t ChunksInNest(const ForNode* loop, int max_lanes);
// Whether the C backend unrolls `loop` (a serial or unrolled loop) for the chunks in it.
bool UnrollsForChunks(const ForNode* loop, int max_lanes);

// The most chunks a nest is unrolled to: a register tile of up to 24 vectors, with room.
constexpr int64_t kMaxUnrolledChunks = 32;

// The vector value of `e` (float32) in a chunk starting at the loop variable's current value: loads
// along `var` are vector loads, values that do not depend on `var` are broadcast.
std::string VectorValue(CFamilyPrinter& p, const Expr& e, const VarNode* var, int lanes);

// The helper that loads, stores and broadcasts `lanes`-lane float32 vectors.
CHelper VectorHelper(int lanes);
std::string VectorHelperText(int lanes);

}  // namespace autotune::tir
