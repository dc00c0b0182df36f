// Golden files: expected IR text kept under tests/tir/golden/, so a change of printed IR shows up as
// a diff of a file instead of an edit inside a string literal.
#pragma once

#include <string>

namespace autotune::tir::testing {

// Compares `actual` with the bytes of golden/<name>: a non-fatal failure, at the caller's line, that
// lists the differing lines when they differ. With AUTOTUNE_UPDATE_GOLDEN=1 in the environment a
// differing or missing file is rewritten from `actual` instead, and the test fails saying so: a run
// that rewrote files must not pass as a run that checked them.
// (__builtin_FILE/LINE rather than std::source_location: clang 14, of the sanitizer builds, lacks it
// with libstdc++.)
void ExpectGolden(const std::string& actual, const std::string& name, const char* file = __builtin_FILE(),
                  int line = __builtin_LINE());

}  // namespace autotune::tir::testing
