// C code generator: lowered TIR -> one C11 translation unit for the system C compiler (cpu target,
// and GPU schedules run through SerializeThreads).
//
// The entry is `void <entry>(float* restrict A, ..., float* restrict Out)` with external linkage,
// params in PrimFunc order; the pack functions of its packed inputs follow it (PrimFunc::packs).
// Parallel loops become `#pragma omp parallel for` (outermost parallel level
// only), vectorized loops `#pragma omp simd` (unless a store in it does not depend on the loop
// variable: a vectorized reduction is left to the auto-vectorizer), unrolled loops
// `#pragma GCC unroll n`. Allocations are aligned C arrays, on the heap above 64 KiB. floordiv and
// floormod (C division truncates) become a shift and a mask for power-of-two divisors, plain / and %
// when the loop ranges prove the dividend non-negative, and small floor helpers otherwise. Float
// literals round-trip (%.9g). Output is deterministic, so it can be compared with golden text.
#pragma once

#include <string>

#include "tir/prim_func.h"
#include "support/result.h"

namespace autotune::tir {

struct CSource {
  std::string code;
  std::string entry;  // symbol of the entry function (the PrimFunc name made a C identifier)
  // One per PrimFunc::packs, in order: `void pack(const T* source, T* packed)`, called before the
  // entry with the workload's tensor to make the packed one that the entry takes in its place.
  std::vector<std::string> pack_entries;
};

// Fails (as a value) when the body is an invalid GPU program (see SerializeThreads) or uses
// something C codegen does not support (unflattened buffers, Reduce nodes, unknown intrinsics).
Result<CSource> CodegenC(const PrimFunc& f);

}  // namespace autotune::tir
