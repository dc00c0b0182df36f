// The shape parser and validator (tir::MakeWorkload), as `--shape` and every file format reach it.
// Input: "op\nshape\nepilogue". Property: an accepted shape, written back in canonical form, is
// accepted again as the same workload.
#include "tests/fuzz/fuzz_check.h"
#include "tir/ops/operator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace autotune;
  const auto f = fuzz::Fields(data, size, 3);
  auto w = tir::MakeWorkload(f[0], f[1], f[2]);
  if (!w) {
    FUZZ_CHECK(!w.error().message.empty());
    return 0;
  }
  auto again = tir::MakeWorkload(w->op, tir::ShapeText(w->shape), w->epilogue);
  FUZZ_CHECK(again);
  FUZZ_CHECK(again->Key() == w->Key());
  FUZZ_CHECK(w->flops >= 0);
  return 0;
}
