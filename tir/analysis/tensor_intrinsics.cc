#include "tir/analysis/tensor_intrinsics.h"

#include <optional>

#include <fmt/format.h>

#include "tir/analysis/expr_uses.h"
#include "tir/buffer.h"
#include "tir/structural_equal.h"
#include "tir/functor.h"
#include "tir/transform/linear_form.h"
#include "tir/transform/simplify.h"
#include "tir/transform/substitute.h"

namespace autotune::tir {

const char* FragmentRoleName(FragmentRole r) {
  switch (r) {
    case FragmentRole::kMatrixA: return "matrix A";
    case FragmentRole::kMatrixB: return "matrix B";
    case FragmentRole::kAccumulator: return "accumulator";
  }
  return "?";
}

FragmentTile TileOf(FragmentRole role, DType element) {
  const bool half = IsHalf(element);
  switch (role) {
    case FragmentRole::kMatrixA: return half ? FragmentTile{16, 16, 8} : FragmentTile{16, 8, 4};
    case FragmentRole::kMatrixB: return half ? FragmentTile{16, 8, 4} : FragmentTile{8, 8, 2};
    case FragmentRole::kAccumulator: return {16, 8, 4};
  }
  return {0, 0, 0};
}

const std::vector<TensorIntrinsic>& TensorIntrinsics() {
  using K = TensorIntrinsicKind;
  constexpr OperandType f32 = OperandType::kFloat32;
  static const std::vector<TensorIntrinsic> all = {
      {"mma_m16n8k16", K::kMma, {16, 8, 16}, "fill_16x8"},
      {"mma_m16n8k8_tf32", K::kMma, {16, 8, 8}, "fill_16x8", f32, Precision::kTF32},
      {"mma_m16n8k8_3xtf32", K::kMma, {16, 8, 8}, "fill_16x8", f32, Precision::kSplitTF32},
      {"fill_16x8", K::kFill, {16, 8}, ""},
      {"load_a_16x16", K::kLoadA, {16, 16}, ""},
      {"load_b_16x8", K::kLoadB, {16, 8}, ""},
      {"load_b_16x16", K::kLoadB, {16, 16}, ""},
      {"load_a_16x8", K::kLoadA, {16, 8}, "", f32},
      {"load_b_8x8", K::kLoadB, {8, 8}, "", f32},
      {"store_16x8", K::kStore, {16, 8}, ""},
  };
  return all;
}

const TensorIntrinsic* FindTensorIntrinsic(const std::string& name) {
  for (const auto& t : TensorIntrinsics()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Expr TileOperand::At(const Expr& r, const Expr& c) const {
  const Expr& row = transposed ? c : r;
  const Expr& col = transposed ? r : c;
  return Add(Add(origin, Mul(row, IntImm(row_step, origin->dtype))), col);
}

std::pair<Expr, Expr> FragmentElement(FragmentRole role, DType element, const Expr& lane, int64_t e) {
  const Expr group = FloorDiv(lane, IntImm(4, lane->dtype));              // lane / 4
  const Expr quad = FloorMod(lane, IntImm(4, lane->dtype));               // lane % 4
  const Expr pair = Mul(quad, IntImm(2, lane->dtype));                    // 2 * (lane % 4)
  auto plus = [&](const Expr& x, int64_t c) { return c == 0 ? x : Add(x, IntImm(c, x->dtype)); };
  if (!IsHalf(element) && role == FragmentRole::kMatrixA) {  // (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)
    return {plus(group, e % 2 * 8), plus(quad, e / 2 * 4)};
  }
  if (!IsHalf(element) && role == FragmentRole::kMatrixB) {  // (t, g), (t + 4, g); rows are k
    return {plus(quad, e * 4), group};
  }
  switch (role) {
    case FragmentRole::kMatrixA:  // registers: (g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8)
      return {plus(group, (e / 2) % 2 * 8), plus(pair, e / 4 * 8 + e % 2)};
    case FragmentRole::kMatrixB:  // registers: (2t, g), (2t + 8, g); rows are k
      return {plus(pair, e / 2 * 8 + e % 2), group};
    case FragmentRole::kAccumulator:  // (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1)
      return {plus(group, e / 2 * 8), plus(pair, e % 2)};
  }
  return {group, pair};
}

namespace {

// The flat element index of an access: sum of index * stride over the buffer's dimensions.
Expr FlatIndex(const Buffer& b, const std::vector<Expr>& indices) {
  const std::vector<Expr> strides = BufferStrides(b);
  Expr flat;
  for (size_t d = 0; d < indices.size(); ++d) {
    const Expr stride = Simplify(strides[d]);  // a constant, where it is one (1 * 16), for linear forms
    Expr term = IsConstInt(stride, 1) ? indices[d] : Mul(indices[d], Cast(indices[d]->dtype, stride));
    flat = flat ? Add(flat, term) : term;
  }
  return flat;
}

Expr Zero(const Var& v) { return IntImm(0, v->dtype); }

// How far a match goes: the fragments a tile touches (kRoles), whether it matches (kVerdict: its
// operands' origins left unsimplified), or its operands as code generation uses them (kOperands).
enum class MatchDepth { kRoles, kVerdict, kOperands };

// Whether two indices are equal: as linear forms, else after simplifying their difference.
bool SameIndex(const Expr& a, const Expr& b) {
  const LinearSum diff = ToLinear(Sub(a, b));
  if (diff.ok && diff.terms.empty()) return diff.constant == 0;
  return IsConstInt(Simplify(Sub(a, b)), 0);
}

// The coefficient of each of the tile's loop variables in `flat`, when `flat` is a linear form in
// which they appear only as terms of their own (as they mostly do, a convolution's reindexed rows
// once their floordiv and floormod parts are put back together); nothing otherwise.
std::optional<std::unordered_map<const VarNode*, int64_t>> LoopCoefficients(const Expr& flat,
                                                                             const std::vector<Var>& loops) {
  LinearSum sum = ToLinear(flat);
  if (!sum.ok) return std::nullopt;
  CombineDivMod(&sum);
  std::unordered_map<const VarNode*, int64_t> coeff;
  for (const auto& v : loops) coeff[v.get()] = 0;
  for (const auto& t : sum.terms) {
    const auto* v = As<VarNode>(t.expr);
    if (v && coeff.count(v)) {
      coeff[v] = t.coeff;  // like terms are merged: one term a variable
      continue;
    }
    for (const VarNode* used : VarsIn(t.expr)) {
      if (coeff.count(used)) return std::nullopt;
    }
  }
  return coeff;
}

// The tile of `b` that `indices` walk as `row` and `col` run over the tile, when they do so with
// unit stride along `col` and a constant stride along `row`; loop variables of the tile not named
// must not move the access.
Result<TileOperand> MatchTile(const Buffer& b, const std::vector<Expr>& indices, const std::vector<Var>& loops,
                              const Var& row, const Var& col, MatchDepth depth) {
  const Expr flat = FlatIndex(b, indices);
  std::unordered_map<const VarNode*, Expr> at_zero;
  for (const auto& v : loops) at_zero[v.get()] = Zero(v);
  // A linear form's coefficients decide it at once (a verdict needs no simplified origin); other
  // forms are simplified below.
  auto coeff = LoopCoefficients(flat, loops);
  const Expr origin = coeff && depth == MatchDepth::kVerdict ? Substitute(flat, at_zero)
                                                             : Simplify(Substitute(flat, at_zero));
  if (coeff) {
    const int64_t row_step = (*coeff)[row.get()];
    if (row_step <= 0) return MakeError(fmt::format("{} is not read or written a row at a time", b->name));
    for (const auto& v : loops) {
      const int64_t want = v.get() == col.get() ? 1 : v.get() == row.get() ? row_step : 0;
      if ((*coeff)[v.get()] != want) {
        return MakeError(fmt::format("{} is not accessed as a tile (unit stride along a row, rows a constant apart)",
                                     b->name));
      }
    }
    return TileOperand{b, origin, row_step};
  }
  at_zero[row.get()] = IntImm(1, row->dtype);
  const Expr step = Simplify(Sub(Substitute(flat, at_zero), origin));
  const int64_t* row_step = AsConstInt(step);
  if (!row_step || *row_step <= 0) return MakeError(fmt::format("{} is not read or written a row at a time", b->name));
  const Expr rest = Simplify(Sub(flat, Add(Add(origin, Mul(row, IntImm(*row_step, row->dtype))), col)));
  if (!IsConstInt(rest, 0)) {
    return MakeError(fmt::format("{} is not accessed as a tile (unit stride along a row, rows a constant apart)", b->name));
  }
  return TileOperand{b, origin, *row_step};
}

// The loops of the tile and what they run: a perfect nest with the intrinsic's extents.
Result<std::pair<std::vector<Var>, Stmt>> TileLoops(const TensorIntrinsic& in, const Stmt& body) {
  std::vector<Var> loops;
  Stmt s = body;
  for (int64_t extent : in.extents) {
    const auto* f = As<ForNode>(s);
    if (!f || !IsConstInt(f->min, 0) || !IsConstInt(f->extent, extent) || f->for_kind == ForKind::kThreadBinding) {
      return MakeError(fmt::format("{} tiles loops of extents {}: the loops found differ", in.name,
                                   fmt::join(in.extents, "x")));
    }
    loops.push_back(f->var);
    s = f->body;
  }
  return std::make_pair(loops, s);
}

bool IsFragment(const Buffer& b) { return b->scope == Scope::kLocal; }

class LoadsOf : public IRVisitor {
 public:
  std::vector<const BufferLoadNode*> loads;
  void Visit_(const BufferLoadNode* op) override {
    loads.push_back(op);
    VisitFields(op);
  }
};

// The first load in an expression, and the first of another buffer than `other`.
const BufferLoadNode* FirstLoad(const Expr& e, const BufferNode* other) {
  LoadsOf loads;
  loads.Visit(e);
  for (const auto* l : loads.loads) {
    if (l->buffer.get() != other) return l;
  }
  return nullptr;
}

Result<void> MatchMma(TensorCall& call, MatchDepth depth) {
  const TensorIntrinsic& in = *call.intrinsic;
  const auto& [i, j, k] = std::tie(call.loops[0], call.loops[1], call.loops[2]);
  const BufferStoreNode* st = call.store;
  const auto* add = As<BinaryNode>(st->value);
  const auto* acc = add && add->op == BinaryOp::kAdd ? As<BufferLoadNode>(add->a) : nullptr;
  const std::optional<ProductForm> product = acc ? MatchProduct(add->b) : std::nullopt;
  const bool half = in.operands == OperandType::kHalf;
  if (!product || acc->buffer != st->buffer || product->precision != in.precision) {
    return MakeError(fmt::format("{} computes C[i,j] = C[i,j] + {}: the tile's store differs", in.name,
                                 half ? "float32(A[i,k]) * float32(B[k,j])"
                                      : fmt::format("the {} product of A[i,k] and B[k,j]", PrecisionName(in.precision))));
  }
  const BufferLoadNode* la = product->a;
  const BufferLoadNode* lb = product->b;
  const DType type = la->buffer->dtype;
  if ((half ? !IsHalf(type) : type != DType::kFloat32) || lb->buffer->dtype != type || st->buffer->dtype != DType::kFloat32) {
    return MakeError(fmt::format("{} multiplies {} matrices into a float32 accumulator", in.name,
                                 half ? "float16 or bfloat16" : "float32"));
  }
  for (const Buffer& b : {la->buffer, lb->buffer, st->buffer}) {
    if (!IsFragment(b)) return MakeError(fmt::format("{}: {} must be a local fragment, not {}", in.name, b->name, ScopeName(b->scope)));
  }
  const bool split = in.precision == Precision::kSplitTF32;
  call.fragments = {{la->buffer, {FragmentRole::kMatrixA, split}}, {lb->buffer, {FragmentRole::kMatrixB, split}},
                    {st->buffer, {FragmentRole::kAccumulator}}};
  if (depth == MatchDepth::kRoles) return {};
  AT_TRY(c_tile, MatchTile(st->buffer, st->indices, call.loops, i, j, depth));
  call.c = c_tile;
  AT_TRY(again, MatchTile(acc->buffer, acc->indices, call.loops, i, j, depth));
  if (!SameIndex(again.origin, call.c->origin)) {
    return MakeError(fmt::format("{} reads the accumulator at another tile than it writes", in.name));
  }
  AT_TRY(a_tile, MatchTile(la->buffer, la->indices, call.loops, i, k, depth));
  call.a = a_tile;
  AT_TRY(b_tile, MatchTile(lb->buffer, lb->indices, call.loops, k, j, depth));
  call.b = b_tile;
  return {};
}

Result<void> MatchFill(TensorCall& call, MatchDepth depth) {
  const BufferStoreNode* st = call.store;
  const auto* zero = As<FloatImmNode>(st->value);
  if (!zero || zero->value != 0.0 || st->buffer->dtype != DType::kFloat32 || !IsFragment(st->buffer)) {
    return MakeError("fill_16x8 stores 0 into a local float32 fragment: the tile's store differs");
  }
  call.fragments = {{st->buffer, {FragmentRole::kAccumulator}}};
  if (depth == MatchDepth::kRoles) return {};
  AT_TRY(fill_tile, MatchTile(st->buffer, st->indices, call.loops, call.loops[0], call.loops[1], depth));
  call.c = fill_tile;
  return {};
}

// A B fragment may be read from [n][k] rows: the tile transposed.
Result<TileOperand> MatchSourceTile(const BufferLoadNode& src, const TensorCall& call, FragmentRole role,
                                    MatchDepth depth) {
  auto tile = MatchTile(src.buffer, src.indices, call.loops, call.loops[0], call.loops[1], depth);
  if (tile || role != FragmentRole::kMatrixB) return tile;
  auto transposed = MatchTile(src.buffer, src.indices, call.loops, call.loops[1], call.loops[0], depth);
  if (!transposed) return tile;
  transposed->transposed = true;
  return transposed;
}

Result<void> MatchLoad(TensorCall& call, FragmentRole role, MatchDepth depth) {
  const BufferStoreNode* st = call.store;
  const auto* src = As<BufferLoadNode>(st->value);
  const char* name = call.intrinsic->name.c_str();
  const bool half = call.intrinsic->operands == OperandType::kHalf;
  const DType type = st->buffer->dtype;
  if (!src || (half ? !IsHalf(type) : type != DType::kFloat32) || src->buffer->dtype != type || !IsFragment(st->buffer) ||
      IsFragment(src->buffer)) {
    return MakeError(fmt::format("{} copies a tile of {} from shared or global memory into a local fragment of the same "
                                 "type: the tile's store differs", name, half ? "float16 or bfloat16" : "float32"));
  }
  call.fragments = {{st->buffer, {role}}};
  if (depth == MatchDepth::kRoles) return {};
  AT_TRY(frag_tile, MatchTile(st->buffer, st->indices, call.loops, call.loops[0], call.loops[1], depth));
  call.c = frag_tile;
  AT_TRY(src_tile, MatchSourceTile(*src, call, role, depth));
  call.a = src_tile;
  return {};
}

// Any elementwise function of the accumulator's tile, stored outside the fragments anywhere (each
// element is stored at its own index: a matrix form's output goes back to a convolution's layout).
Result<void> MatchStore(TensorCall& call, MatchDepth depth) {
  const BufferStoreNode* st = call.store;
  const Var& i = call.loops[0];
  const Var& j = call.loops[1];
  if (IsFragment(st->buffer)) return MakeError("store_16x8 writes shared or global memory, not a local buffer");
  if (depth == MatchDepth::kOperands) {  // optional, so no part of a verdict
    if (auto out_tile = MatchTile(st->buffer, st->indices, call.loops, i, j, depth)) call.a = *out_tile;
  }
  LoadsOf loads;
  loads.Visit(call.inner);
  for (const auto* l : loads.loads) {
    if (!IsFragment(l->buffer)) continue;
    if (l->buffer->dtype != DType::kFloat32) return MakeError("store_16x8 reads a float32 accumulator");
    if (depth == MatchDepth::kRoles) {
      call.fragments = {{l->buffer, {FragmentRole::kAccumulator}}};
      return {};
    }
    AT_TRY(t, MatchTile(l->buffer, l->indices, call.loops, i, j, depth));
    if (call.c && (call.c->buffer != t.buffer || !SameIndex(call.c->origin, t.origin))) {
      return MakeError("store_16x8 reads one accumulator tile, at the element it writes");
    }
    call.c = t;
  }
  if (!call.c) return MakeError("store_16x8 stores a function of a local accumulator: the tile reads none");
  call.fragments = {{call.c->buffer, {FragmentRole::kAccumulator}}};
  return {};
}

}  // namespace

std::optional<ProductForm> MatchProduct(const Expr& product) {
  const BufferLoadNode* a = FirstLoad(product, nullptr);
  const BufferLoadNode* b = a ? FirstLoad(product, a->buffer.get()) : nullptr;
  if (!b) return std::nullopt;
  auto widened = [](const BufferLoadNode* l) {
    const Expr load = Load(l->buffer, l->indices);
    return IsHalf(l->buffer->dtype) ? Cast(DType::kFloat32, load) : load;
  };
  for (Precision p : {Precision::kIEEE, Precision::kTF32, Precision::kSplitTF32}) {
    if (ExprDeepEqual(product, ProductAt(widened(a), widened(b), p))) return ProductForm{a, b, p};
  }
  return std::nullopt;
}

namespace {

Result<TensorCall> MatchCall(const TensorizeNode& t, MatchDepth depth) {
  const TensorIntrinsic* in = FindTensorIntrinsic(t.intrinsic);
  if (!in) return MakeError(fmt::format("unknown tensor intrinsic {}", t.intrinsic));
  TensorCall call;
  call.intrinsic = in;
  AT_TRY(nest, TileLoops(*in, t.body));
  call.loops = nest.first;
  call.inner = nest.second;
  Stmt s = call.inner;
  if (const auto* guard = As<IfThenElseNode>(s); guard && in->kind == TensorIntrinsicKind::kStore && !guard->else_case) {
    s = guard->then_case;
  }
  call.store = As<BufferStoreNode>(s);
  if (!call.store) {
    return MakeError(fmt::format("{}: the tile's loops must hold one store{}", in->name,
                                 in->kind == TensorIntrinsicKind::kStore ? " (under at most one guard)" : ", unguarded"));
  }
  Result<void> r;
  switch (in->kind) {
    case TensorIntrinsicKind::kMma: r = MatchMma(call, depth); break;
    case TensorIntrinsicKind::kFill: r = MatchFill(call, depth); break;
    case TensorIntrinsicKind::kLoadA: r = MatchLoad(call, FragmentRole::kMatrixA, depth); break;
    case TensorIntrinsicKind::kLoadB: r = MatchLoad(call, FragmentRole::kMatrixB, depth); break;
    case TensorIntrinsicKind::kStore: r = MatchStore(call, depth); break;
  }
  if (!r) return r.error();
  return call;
}

class TileFinder : public IRVisitor {
 public:
  std::vector<const TensorizeNode*> tiles;
  void Visit_(const TensorizeNode* op) override { tiles.push_back(op); }
};
}  // namespace

Result<TensorCall> MatchTensorIntrinsic(const TensorizeNode& t) { return MatchCall(t, MatchDepth::kOperands); }

Result<void> CheckTensorIntrinsic(const TensorizeNode& t) {
  AT_TRY_VOID(MatchCall(t, MatchDepth::kVerdict));
  return {};
}

bool HasTensorizedTiles(const Stmt& s) {
  TileFinder finder;
  finder.Visit(s);
  return !finder.tiles.empty();
}

Result<FragmentMap> FragmentsOf(const Stmt& s) {
  TileFinder finder;
  finder.Visit(s);
  FragmentMap out;
  std::unordered_map<const BufferNode*, bool> split_by_mma;  // what the mma reading an operand says
  for (const TensorizeNode* t : finder.tiles) {
    auto call = MatchCall(*t, MatchDepth::kRoles);
    if (!call) continue;
    const bool mma = call->intrinsic->kind == TensorIntrinsicKind::kMma;
    for (const auto& [b, use] : call->fragments) {
      auto [it, fresh] = out.emplace(b.get(), use);
      if (!fresh && it->second.role != use.role) {
        return MakeError(fmt::format("fragment {} is used as {} and as {}", b->name, FragmentRoleName(it->second.role),
                                     FragmentRoleName(use.role)));
      }
      if (!mma || use.role == FragmentRole::kAccumulator) continue;
      auto [seen, first] = split_by_mma.emplace(b.get(), use.split);
      if (!first && seen->second != use.split) {
        return MakeError(fmt::format("fragment {} is an operand of 3xtf32 and of tf32 products", b->name));
      }
      it->second.split = use.split;
    }
  }
  return out;
}

std::optional<Expr> FragmentTileIndex(const TileOperand& t, FragmentRole role, const BoundAnalyzer& bounds) {
  const FragmentTile tile = TileOf(role, t.buffer->dtype);
  const int64_t rs = t.row_step;
  if (rs % tile.cols != 0) return std::nullopt;
  const int64_t tile_span = tile.rows * rs;  // elements of one row of tiles
  const LinearSum sum = ToLinear(t.origin);
  if (!sum.ok || sum.constant < 0) return std::nullopt;
  const DType dt = t.origin->dtype;
  // Row-of-tiles terms count whole rows of tiles; column terms move within one row of tiles and
  // must stay inside its first row (origin % rs), on tile boundaries.
  Expr index = IntImm(sum.constant / tile_span * (rs / tile.cols) + sum.constant % tile_span / tile.cols, dt);
  int64_t col_reach = sum.constant % tile_span;
  if (col_reach % tile.cols != 0) return std::nullopt;
  for (const auto& term : sum.terms) {
    const auto* v = As<VarNode>(term.expr);
    const std::optional<IntBound> b = v ? bounds.Lookup(v) : std::nullopt;
    if (!b || b->min < 0 || !b->HasFiniteMax() || term.coeff < 0) return std::nullopt;
    if (term.coeff % tile_span == 0) {
      index = Add(index, Mul(term.expr, IntImm(term.coeff / tile_span * (rs / tile.cols), dt)));
    } else if (term.coeff % tile.cols == 0) {
      col_reach += term.coeff * b->max;
      index = Add(index, Mul(term.expr, IntImm(term.coeff / tile.cols, dt)));
    } else {
      return std::nullopt;
    }
  }
  if (col_reach + tile.cols > rs) return std::nullopt;
  return Simplify(index);
}

}  // namespace autotune::tir
