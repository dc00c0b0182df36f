// Arithmetic simplification of expressions and statements.
//
// Expressions (bottom-up, one pass, no exponential rewrites):
//  - constants of every op fold (floor semantics for floordiv/floormod); a division by zero, an
//    int32 result out of range, or a float min/max of NaN or of -0/+0 is never folded;
//  - integer +, - and * by a constant become a canonical linear form: sum of coefficient * term in
//    order of first appearance, constant last ((i*4 + j) - i*4 -> j, i*8 + 4*i -> i*12); products
//    of two non-constant factors are terms and are never distributed;
//    floordiv(x, c)*c*k + floormod(x, c)*k -> x*k (what split then fuse produces);
//  - floordiv/floormod by a positive constant: the part of the dividend that c divides is taken
//    out, common factors are cancelled (floordiv(x*2, 4) -> floordiv(x, 2)), nested floordivs merge,
//    floormod(floormod(x, a), b) -> floormod(x, b) when b divides a, and the rest is decided by
//    ranges (floordiv(i*16 + j, 16) -> i when 0 <= j < 16);
//  - integer comparisons, min and max are decided by the range of a - b; undecided comparisons get
//    the form "positive terms OP negative terms" with the gcd divided out (x*4 < 15 -> x < 4);
//  - any integer or bool expression whose range is a single value becomes that constant;
//  - identities: select with a constant condition or equal branches, && / || with constants,
//    !!x, !(a < b) -> a >= b for integers, cast<int32>(cast<int64>(x)) -> x.
// Floats are never reassociated and get no identity that is inexact (x + 0, x * 0, x - x stay);
// only constants fold (in the dtype's precision), plus x * 1 and x / 1.
//
// Statements: a loop binds its variable to [min, min + extent) for its body; a loop whose extent is
// at most 0 goes away; a loop of extent 1 is replaced by its body at var = min, except a
// thread-bound loop (launch geometry) or a loop carrying auto_unroll_max_step (a pragma for the
// nest below), which stay; a condition that always holds or never holds is replaced by its branch,
// parts of a conjunction that always hold are dropped, and a condition "v OP e" narrows v's range
// in the branches; empty loops, allocations, conditionals and sequences are removed. Buffers
// (shapes, strides) are not rewritten, so buffer identity is kept.
//
// The result is a fixed point (simplifying it again returns it unchanged) and an unchanged node is
// returned as is (shared). Like the bound analysis, it assumes index arithmetic does not overflow.
#pragma once

#include "tir/analysis/int_bound.h"
#include "tir/expr.h"
#include "tir/stmt.h"
#include "tir/transform/linear_form.h"

namespace autotune::tir {

// `analyzer` supplies ranges of free variables; it is left as it was on return. Null: no ranges.
Expr Simplify(const Expr& e, BoundAnalyzer* analyzer = nullptr);
// An empty result (everything removed) is an empty Seq, never null.
Stmt Simplify(const Stmt& s, BoundAnalyzer* analyzer = nullptr);

// Puts an index split by floordiv and floormod (positive constants) back together in a linear form,
// as the simplifier's canonical sums do (the rules are at its definition):
//   floordiv(x, c) * (k * c) + floormod(x, c) * k              -> x * k
//   floormod(floordiv(x, c), d) * (k * c) + floormod(x, c) * k -> floormod(x, c * d) * k
void CombineDivMod(LinearSum* l);

}  // namespace autotune::tir
