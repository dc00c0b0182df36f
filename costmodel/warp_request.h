// How one warp's memory request meets the memory system: the 32-byte sectors a global request
// touches, and the bank conflicts of a shared request. Pure arithmetic on the addresses of the
// request's points, so that it can be tested by hand.
#pragma once

#include <cstdint>
#include <vector>

namespace autotune::costmodel {

inline constexpr int kWarpSize = 32;
inline constexpr int kSectorBytes = 32;
inline constexpr int kSharedBanks = 32;
inline constexpr int kBankBytes = 4;

// The points of one request, lane-major: point p is element p % vector of lane p / vector (a
// vectorized access is one wide request per lane). Inactive points (lanes guarded off) touch nothing.
struct WarpRequest {
  const int64_t* byte_address;  // first byte of each point's element
  const bool* active;
  int lanes = 1;
  int vector = 1;
  int element_bytes = 4;
};

struct SectorCount {
  int sectors = 0;           // distinct 32-byte sectors
  int64_t useful_bytes = 0;  // distinct bytes the active points ask for
};

// The global memory sectors of one request (buffers are assumed sector-aligned).
SectorCount CountSectors(const WarpRequest& r);

// The bank-conflict degree of one shared memory request: in every phase, the largest number of
// distinct 4-byte words that fall in one of the 32 banks (lanes reading the same word share it);
// averaged over the phases that have an active point. Requests wider than 4 bytes per lane run in
// phases of 128 bytes (half-warps for 8 bytes, quarter-warps for 16), so a conflict-free wide access
// has degree 1. 0 when no point is active.
double BankConflictDegree(const WarpRequest& r);

// The bank-conflict degree of an ldmatrix: `row_bytes` holds the first byte of each 16-byte row it
// reads (one row a lane; eight rows, one 8x8 matrix of 16-bit elements, a phase), in lane order.
double LdmatrixConflictDegree(const std::vector<int64_t>& row_bytes);

}  // namespace autotune::costmodel
