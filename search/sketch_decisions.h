// The decisions a sketch samples, and how a caller fixes them instead: the default schedule fixes
// all of them with heuristics, tests fix some, the search leaves them all to the sampler. A decider
// returns the decision, or nullopt to sample it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace autotune::search {

// What a tile decision is for; the decider may use it to pick sizes.
struct TileRequest {
  bool reduce = false;
  int axis = 0;       // index among the spatial (or reduce) axes of the tiled stage
  int num_axes = 1;   // how many spatial (or reduce) axes there are
  int64_t extent = 1;
  int levels = 1;
  int64_t max_innermost = 0;
};

// Tile sizes for a request (outermost first).
using TileDecider = std::function<std::optional<std::vector<int64_t>>(const TileRequest&)>;
// The index of the chosen candidate of a categorical decision.
using ChoiceDecider = std::function<std::optional<int64_t>(const std::vector<int64_t>& candidates)>;

struct SketchDecisions {
  TileDecider tiles = [](const TileRequest&) { return std::nullopt; };
  ChoiceDecider unroll = [](const std::vector<int64_t>&) { return std::nullopt; };   // auto-unroll depth
  ChoiceDecider vector = [](const std::vector<int64_t>&) { return std::nullopt; };   // cooperative load width
  ChoiceDecider split_k = [](const std::vector<int64_t>&) { return std::nullopt; };  // partial sums
  ChoiceDecider combine_threads = [](const std::vector<int64_t>&) { return std::nullopt; };  // threads summing them
  ChoiceDecider row_threads = [](const std::vector<int64_t>&) { return std::nullopt; };     // threads per row
  ChoiceDecider rows_per_block = [](const std::vector<int64_t>&) { return std::nullopt; };  // rows per block
  ChoiceDecider double_buffer = [](const std::vector<int64_t>&) { return std::nullopt; };    // shared copies: 0 off, 1 on
  // cpu.registers: the operand its vectors read 0 as it is, 1 copied per parallel tile, 2 (channel
  // vectors: the weights) packed once; a convolution's padded input (channel vectors) likewise, 2
  // being one copy before the parallel tiles.
  ChoiceDecider copy_operand = [](const std::vector<int64_t>&) { return std::nullopt; };
  ChoiceDecider copy_input = [](const std::vector<int64_t>&) { return std::nullopt; };
  // cpu.registers on a convolution: 0 vectors along the output's rows, 1 along its output channels.
  ChoiceDecider channel_vectors = [](const std::vector<int64_t>&) { return std::nullopt; };
  // cpu.registers: elements of the longest reduction axis a block takes around the outer tile, or 0
  // for the whole reduction in each register tile (a block's weights stay in cache across the tile).
  ChoiceDecider reduce_block = [](const std::vector<int64_t>&) { return std::nullopt; };
  // Tensor cores (cuda.tensor_core): warps of a block per output axis, 16x8 mma tiles of a warp per
  // axis, 16-deep mma steps per shared-memory chunk of the reduction, pipeline stages of the copies.
  ChoiceDecider mma_warps = [](const std::vector<int64_t>&) { return std::nullopt; };
  ChoiceDecider mma_tiles = [](const std::vector<int64_t>&) { return std::nullopt; };
  ChoiceDecider mma_k_steps = [](const std::vector<int64_t>&) { return std::nullopt; };
  ChoiceDecider mma_stages = [](const std::vector<int64_t>&) { return std::nullopt; };  // 1 off, 2-4
  // Block rows a group of consecutive blocks walks down before the next block column: blocks that
  // run at once then share B's columns as well as A's rows in L2.
  ChoiceDecider mma_block_group = [](const std::vector<int64_t>&) { return std::nullopt; };
  // Elements a thread copies at a time into the B copy of a convolution's matrix form (its im2col
  // tile): 16 bytes, or fewer, so that a warp's lanes read neighbouring elements of a gather.
  ChoiceDecider mma_copy_vector = [](const std::vector<int64_t>&) { return std::nullopt; };
  // The rows of that B copy in shared memory: 0 its K rows ([k][n]), 1 its N rows ([n][k]: an
  // operand read along K, as a channels-last convolution's input, is copied in 16-byte runs of K).
  ChoiceDecider mma_b_rows = [](const std::vector<int64_t>&) { return std::nullopt; };
  // The index of the loop to compute a shared copy at, among `count` outer reduction loops.
  std::function<std::optional<int64_t>(size_t count)> compute_location = [](size_t) { return std::nullopt; };
};

}  // namespace autotune::search
