#include "costmodel/access_features.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "costmodel/point_eval.h"
#include "costmodel/warp_request.h"
#include "tir/functor.h"

namespace autotune::costmodel {

using namespace autotune::tir;

namespace {

constexpr int kMaxPoints = PointEvaluator::kMaxPoints;
using PointArray = std::array<int64_t, kMaxPoints>;

struct Loop {
  const VarNode* var;
  int64_t min;
  int64_t extent;  // 1 when not a constant (as the program counts do)
  ForKind kind;
  ThreadTag tag;
};

// A condition the access is under: an enclosing if (or its else branch), or the condition of a
// select whose branch holds the load.
struct Guard {
  const Expr* cond;
  bool negated;
};

struct Allocation {
  const BufferNode* buffer;
  size_t depth;  // loops around the allocation
};

struct Footprint {
  const BufferNode* buffer;
  bool store;
  double unique_bytes;
};

double BufferElements(const Buffer& b) {
  double n = 1;
  for (const auto& d : b->shape) {
    const int64_t* c = AsConstInt(d);
    if (!c) return 0;  // unknown: no cap
    n *= static_cast<double>(*c);
  }
  return n;
}

class VarCollector : public IRVisitor {
 public:
  explicit VarCollector(std::vector<const VarNode*>* out) : out_(out) {}
  void Visit_(const VarNode* op) override { out_->push_back(op); }

 private:
  std::vector<const VarNode*>* out_;
};

class AccessAnalyzer : public IRVisitor {
 public:
  AccessFeatures Finish() {
    for (const Footprint& f : footprints_) {
      const int scope = static_cast<int>(f.buffer->scope);
      out_.group[scope][f.store].unique_bytes += f.unique_bytes;
    }
    return out_;
  }

  void Visit_(const ForNode* op) override {
    Visit(op->min);
    Visit(op->extent);
    const int64_t* mn = AsConstInt(op->min);
    const int64_t* n = AsConstInt(op->extent);
    loops_.push_back({op->var.get(), mn ? *mn : 0, n ? *n : 1, op->for_kind, op->tag});
    const double saved = weight_;
    weight_ *= static_cast<double>(loops_.back().extent);
    Visit(op->body);
    weight_ = saved;
    loops_.pop_back();
  }
  void Visit_(const AllocateNode* op) override {
    allocations_.push_back({op->buffer.get(), loops_.size()});
    Visit(op->body);
    allocations_.pop_back();
  }
  void Visit_(const IfThenElseNode* op) override {
    Visit(op->cond);
    guards_.push_back({&op->cond, false});
    Visit(op->then_case);
    if (op->else_case) {
      guards_.back().negated = true;
      Visit(op->else_case);
    }
    guards_.pop_back();
  }
  void Visit_(const SelectNode* op) override {
    Visit(op->cond);
    guards_.push_back({&op->cond, false});
    Visit(op->true_value);
    guards_.back().negated = true;
    Visit(op->false_value);
    guards_.pop_back();
  }
  void Visit_(const BufferLoadNode* op) override {
    Access(op->buffer, op->indices, /*store=*/false);
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    Access(op->buffer, op->indices, /*store=*/true);
    VisitFields(op);
  }

 private:
  void Access(const Buffer& b, const std::vector<Expr>& indices, bool store) {
    if (weight_ <= 0) return;  // inside an empty loop
    const int elem = BytesOf(b->dtype);
    AccessGroup& g = out_.group[static_cast<int>(b->scope)][store];
    g.bytes += weight_ * elem;

    deps_.clear();
    VarCollector collect(&deps_);
    for (const auto& i : indices) collect.Visit(i);

    // Loops outside the allocation make new instances of the buffer; those inside walk over it.
    const size_t alloc_depth = AllocationDepth(b.get());
    double instances = 1, footprint = 1;
    for (size_t i = 0; i < loops_.size(); ++i) {
      const double extent = static_cast<double>(loops_[i].extent);
      if (i < alloc_depth) {
        instances *= extent;
      } else if (DependsOn(loops_[i].var)) {
        footprint *= extent;
      }
    }
    const double size = BufferElements(b);
    if (size > 0) footprint = std::min(footprint, size);
    RecordFootprint(b.get(), store, footprint * elem * instances);

    g.log_stride.Add(std::log2(1.0 + Stride(b, indices)), weight_);
    if (b->scope != Scope::kLocal) WarpAccess(b, indices, store);
  }

  // |index(v = min + 1) - index(v = min)| for the innermost loop v that the index depends on, every
  // other loop at its minimum.
  double Stride(const Buffer& b, const std::vector<Expr>& indices) {
    const Loop* inner = nullptr;
    for (auto it = loops_.rbegin(); it != loops_.rend() && !inner; ++it) {
      if (it->extent > 1 && DependsOn(it->var)) inner = &*it;
    }
    if (!inner) return 0;
    eval_.Reset(2);
    BindLoopMins();
    pair_ = {inner->min, inner->min + 1};
    eval_.Bind(inner->var, pair_.data());
    if (FlatIndex(b, indices, index_.data())) return 0;
    return std::fabs(static_cast<double>(index_[1]) - static_cast<double>(index_[0]));
  }

  // One warp request of a global or shared access (see the header for the model).
  void WarpAccess(const Buffer& b, const std::vector<Expr>& indices, bool store) {
    const Loop* thread[3] = {nullptr, nullptr, nullptr};  // x, y, z: the innermost of each
    double threads = 1;
    for (const Loop& l : loops_) {
      if (!IsThreadTag(l.tag)) continue;
      threads *= static_cast<double>(l.extent);
      thread[static_cast<int>(l.tag) - static_cast<int>(ThreadTag::kThreadIdxX)] = &l;
    }
    int64_t ext[3];
    for (int d = 0; d < 3; ++d) ext[d] = thread[d] ? std::max<int64_t>(thread[d]->extent, 1) : 1;
    const int lanes = static_cast<int>(std::min<int64_t>(kWarpSize, ext[0] * ext[1] * ext[2]));
    const Loop* vec = !loops_.empty() && loops_.back().kind == ForKind::kVectorized ? &loops_.back() : nullptr;
    const int vector = vec ? static_cast<int>(std::clamp<int64_t>(vec->extent, 1, kMaxPoints / lanes)) : 1;
    const int n = lanes * vector;

    // Lane l is thread (x, y, z) with l = x + ext_x (y + ext_y z); counted up without divisions.
    int64_t pos[3] = {0, 0, 0};
    for (int lane = 0, p = 0; lane < lanes; ++lane) {
      for (int e = 0; e < vector; ++e, ++p) {
        for (int d = 0; d < 3; ++d) lane_values_[d][p] = (thread[d] ? thread[d]->min : 0) + pos[d];
        vector_values_[p] = (vec ? vec->min : 0) + e;
      }
      for (int d = 0; d < 3 && ++pos[d] == ext[d]; ++d) pos[d] = 0;
    }
    eval_.Reset(n);
    BindLoopMins();
    for (int d = 0; d < 3; ++d) {
      if (thread[d]) eval_.Bind(thread[d]->var, lane_values_[d].data());
    }
    if (vec) eval_.Bind(vec->var, vector_values_.data());

    ActivePoints(n);
    const bool uniform = FlatIndex(b, indices, index_.data());
    const int elem = BytesOf(b->dtype);
    for (int p = 0; p < n; ++p) address_[p] = index_[uniform ? 0 : p] * elem;
    const WarpRequest request{address_.data(), active_.data(), lanes, vector, elem};

    if (b->scope == Scope::kShared) {
      out_.bank_conflict[store].Add(BankConflictDegree(request), weight_);
      return;
    }
    const SectorCount c = CountSectors(request);
    out_.sectors_per_request[store].Add(c.sectors, weight_);
    if (c.sectors > 0) {
      out_.sector_efficiency[store].Add(static_cast<double>(c.useful_bytes) / (kSectorBytes * c.sectors), weight_);
    }
    // Every warp of every block makes one request per `vector` elements of each of its lanes.
    const double warps_per_block = std::ceil(threads / kWarpSize);
    out_.global_sectors += weight_ / (vector * threads) * warps_per_block * c.sectors;
  }

  // Marks the points where every guard holds. A conjunct that is false at every point says nothing
  // about the lanes (it is false because of where the other loops were fixed), so it is skipped.
  void ActivePoints(int n) {
    std::fill_n(active_.begin(), n, true);
    for (const Guard& g : guards_) ApplyGuard(*g.cond, g.negated, n);
    if (std::none_of(active_.begin(), active_.begin() + n, [](bool a) { return a; })) {
      std::fill_n(active_.begin(), n, true);
    }
  }
  void ApplyGuard(const Expr& cond, bool negated, int n) {
    if (const auto* nt = As<NotNode>(cond)) return ApplyGuard(nt->a, !negated, n);
    if (const auto* bin = As<BinaryNode>(cond)) {
      // a && b, and !(a || b) = !a && !b: each conjunct on its own.
      if ((bin->op == BinaryOp::kAnd && !negated) || (bin->op == BinaryOp::kOr && negated)) {
        ApplyGuard(bin->a, negated, n);
        ApplyGuard(bin->b, negated, n);
        return;
      }
    }
    const bool uniform = eval_.Eval(cond, guard_.data());
    bool any = false;
    for (int p = 0; p < n; ++p) any |= (guard_[uniform ? 0 : p] != 0) != negated;
    if (!any) return;
    for (int p = 0; p < n; ++p) active_[p] = active_[p] && ((guard_[uniform ? 0 : p] != 0) != negated);
  }

  // The flattened (row-major, strided) element index; after lowering there is one index already.
  bool FlatIndex(const Buffer& b, const std::vector<Expr>& indices, int64_t* out) {
    if (indices.size() == 1) return eval_.Eval(indices[0], out);
    const int n = eval_.num_points();
    std::fill_n(out, n, 0);
    bool uniform = true;
    const std::vector<Expr> strides = BufferStrides(b);
    for (size_t k = 0; k < indices.size() && k < strides.size(); ++k) {
      const int64_t* s = AsConstInt(strides[k]);
      const bool u = eval_.Eval(indices[k], term_.data());
      if (!u && uniform) std::fill_n(out + 1, n - 1, out[0]);
      uniform = uniform && u;
      for (int p = 0; p < (uniform ? 1 : n); ++p) out[p] += term_[u ? 0 : p] * (s ? *s : 0);
    }
    return uniform;
  }

  void BindLoopMins() {
    for (const Loop& l : loops_) {
      if (l.min != 0) eval_.Bind(l.var, l.min);  // unbound variables are 0 already
    }
  }
  bool DependsOn(const VarNode* v) const { return std::find(deps_.begin(), deps_.end(), v) != deps_.end(); }
  size_t AllocationDepth(const BufferNode* b) const {
    for (auto it = allocations_.rbegin(); it != allocations_.rend(); ++it) {
      if (it->buffer == b) return it->depth;
    }
    return 0;  // a parameter: one instance for the whole launch
  }
  void RecordFootprint(const BufferNode* b, bool store, double unique_bytes) {
    for (Footprint& f : footprints_) {
      if (f.buffer == b && f.store == store) {
        f.unique_bytes = std::max(f.unique_bytes, unique_bytes);
        return;
      }
    }
    footprints_.push_back({b, store, unique_bytes});
  }

  AccessFeatures out_;
  double weight_ = 1;
  std::vector<Loop> loops_;
  std::vector<Guard> guards_;
  std::vector<Allocation> allocations_;
  std::vector<Footprint> footprints_;
  std::vector<const VarNode*> deps_;
  PointEvaluator eval_;
  std::array<int64_t, 2> pair_{};
  PointArray lane_values_[3], vector_values_, index_, address_, guard_, term_;
  std::array<bool, kMaxPoints> active_{};
};

}  // namespace

AccessFeatures AnalyzeAccesses(const PrimFunc& lowered) {
  AccessAnalyzer analyzer;
  if (lowered.body) analyzer.Visit(lowered.body);
  return analyzer.Finish();
}

}  // namespace autotune::costmodel
