#include "costmodel/warp_request.h"

#include <algorithm>
#include <array>
#include <memory>

namespace autotune::costmodel {

namespace {

// Enough for one phase or one request of the point evaluator (32 lanes x 4 elements), each element
// covering up to two words or sectors (8-byte elements).
constexpr int kMaxItems = 256;

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && (a < 0)); }

// Sorts and drops repeats; returns the number of distinct values.
int Distinct(int64_t* v, int n) {
  if (!std::is_sorted(v, v + n)) std::sort(v, v + n);  // addresses mostly rise with the lane
  return static_cast<int>(std::unique(v, v + n) - v);
}

}  // namespace

SectorCount CountSectors(const WarpRequest& r) {
  std::array<int64_t, kMaxItems> sectors, elements;
  int ns = 0, ne = 0;
  const int points = r.lanes * r.vector;
  for (int p = 0; p < points && ns + 2 <= kMaxItems; ++p) {
    if (!r.active[p]) continue;
    const int64_t first = FloorDiv(r.byte_address[p], kSectorBytes);
    const int64_t last = FloorDiv(r.byte_address[p] + r.element_bytes - 1, kSectorBytes);
    sectors[ns++] = first;
    if (last != first) sectors[ns++] = last;
    elements[ne++] = r.byte_address[p];
  }
  SectorCount c;
  c.sectors = Distinct(sectors.data(), ns);
  c.useful_bytes = static_cast<int64_t>(Distinct(elements.data(), ne)) * r.element_bytes;
  return c;
}

double BankConflictDegree(const WarpRequest& r) {
  // One phase serves 128 bytes: as many lanes as fit at this width, at least one.
  const int lane_bytes = std::max(1, r.vector * r.element_bytes);
  const int lanes_per_phase = std::max(1, kWarpSize * kBankBytes / std::max(lane_bytes, kBankBytes));
  std::array<int64_t, kMaxItems> words;
  double total = 0;
  int phases = 0;
  for (int lane0 = 0; lane0 < r.lanes; lane0 += lanes_per_phase) {
    int n = 0;
    const int end = std::min(r.lanes, lane0 + lanes_per_phase) * r.vector;
    for (int p = lane0 * r.vector; p < end; ++p) {
      if (!r.active[p]) continue;
      const int64_t first = FloorDiv(r.byte_address[p], kBankBytes);
      const int64_t last = FloorDiv(r.byte_address[p] + r.element_bytes - 1, kBankBytes);
      for (int64_t w = first; w <= last && n < kMaxItems; ++w) words[n++] = w;
    }
    if (n == 0) continue;
    n = Distinct(words.data(), n);
    std::array<int, kSharedBanks> per_bank{};
    int worst = 0;
    for (int i = 0; i < n; ++i) {
      const int64_t bank = words[i] - FloorDiv(words[i], kSharedBanks) * kSharedBanks;
      worst = std::max(worst, ++per_bank[bank]);
    }
    total += worst;
    ++phases;
  }
  return phases ? total / phases : 0.0;
}

double LdmatrixConflictDegree(const std::vector<int64_t>& row_bytes) {
  constexpr int kRowElements = 8, kElementBytes = 2;
  std::vector<int64_t> address;
  for (int64_t row : row_bytes) {
    for (int e = 0; e < kRowElements; ++e) address.push_back(row + e * kElementBytes);
  }
  auto active = std::make_unique<bool[]>(address.size());
  std::fill_n(active.get(), address.size(), true);
  const WarpRequest r{address.data(), active.get(), static_cast<int>(row_bytes.size()), kRowElements, kElementBytes};
  return BankConflictDegree(r);
}

}  // namespace autotune::costmodel
