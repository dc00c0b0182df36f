#include "tir/codegen/cuda_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <unordered_set>
#include <utility>

#include "tir/functor.h"

namespace autotune::tir {
namespace {

bool IsEmpty(const Stmt& s) {
  const auto* seq = As<SeqNode>(s);
  return !s || (seq && seq->stmts.empty());
}

// Cuts the top level into units; records the top-level non-global allocations that span units.
void Split(const Stmt& s, std::vector<Stmt>* units, std::unordered_set<const AllocateNode*>* spanning) {
  if (IsEmpty(s)) return;
  if (const auto* seq = As<SeqNode>(s)) {
    for (const auto& c : seq->stmts) Split(c, units, spanning);
    return;
  }
  if (const auto* a = As<AllocateNode>(s)) {
    if (a->buffer->scope == Scope::kGlobal) {
      Split(a->body, units, spanning);
      return;
    }
    std::vector<Stmt> inner;
    Split(a->body, &inner, spanning);
    if (inner.size() <= 1) {
      if (!inner.empty()) units->push_back(Allocate(a->buffer, inner[0]));
      return;
    }
    spanning->insert(a);
    units->insert(units->end(), inner.begin(), inner.end());
    return;
  }
  units->push_back(s);
}

Result<int64_t> FlatBytes(const Buffer& b) {
  const int64_t* n = b->shape.size() == 1 ? AsConstInt(b->shape[0]) : nullptr;
  if (!n || *n < 0) return MakeError("allocation of " + b->name + " is not flat with a constant size");
  return *n * BytesOf(b->dtype);
}

// Workspaces in order of appearance: global allocations anywhere, and the spanning ones.
class WorkspaceCollector : public IRVisitor {
 public:
  explicit WorkspaceCollector(const std::unordered_set<const AllocateNode*>& spanning) : spanning_(spanning) {}
  std::vector<Buffer> buffers;
  void Visit_(const AllocateNode* op) override {
    if (op->buffer->scope == Scope::kGlobal || spanning_.count(op)) {
      if (std::find(buffers.begin(), buffers.end(), op->buffer) == buffers.end()) buffers.push_back(op->buffer);
    }
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode*) override {}

 private:
  const std::unordered_set<const AllocateNode*>& spanning_;
};

class StripGlobalAllocations : public IRMutator {
 public:
  Stmt Mutate_(const AllocateNode* op, const Stmt& self) override {
    if (op->buffer->scope == Scope::kGlobal) return Mutate(op->body);
    return MutateFields(op, self);
  }
};

// Launch dimensions, nesting checks and shared-memory buffers of one kernel.
class KernelScanner : public IRVisitor {
 public:
  explicit KernelScanner(CudaKernelPlan* plan) : plan_(plan) {}
  std::string error;

  void Visit_(const ForNode* op) override {
    if (!error.empty()) return;
    if (op->for_kind != ForKind::kThreadBinding) return VisitFields(op);
    if (op->tag == ThreadTag::kVThread || op->tag == ThreadTag::kNone) {
      error = "a vthread loop is left after lowering";
      return;
    }
    const int64_t* extent = AsConstInt(op->extent);
    if (!extent) {
      error = fmt::format("the extent of the {} loop {} is not constant", ThreadTagName(op->tag), op->var->name);
      return;
    }
    const int tag = static_cast<int>(op->tag);
    if (active_[tag]) {
      error = fmt::format("loop {} is nested in another loop bound to {}", op->var->name, ThreadTagName(op->tag));
      return;
    }
    if (IsBlockTag(op->tag) && in_threads_ > 0) {
      error = fmt::format("the {} loop {} is inside a threadIdx loop", ThreadTagName(op->tag), op->var->name);
      return;
    }
    plan_->has_thread_loops = true;
    const bool block = IsBlockTag(op->tag);
    const int axis = block ? tag - static_cast<int>(ThreadTag::kBlockIdxX) : tag - static_cast<int>(ThreadTag::kThreadIdxX);
    auto& dims = block ? plan_->grid : plan_->block;
    dims[axis] = std::max(dims[axis], *extent);
    active_[tag] = true;
    if (!block) ++in_threads_;
    VisitFields(op);
    if (!block) --in_threads_;
    active_[tag] = false;
  }

  void Visit_(const AllocateNode* op) override {
    if (!error.empty()) return;
    if (op->buffer->scope == Scope::kShared &&
        std::find(plan_->shared.begin(), plan_->shared.end(), op->buffer) == plan_->shared.end()) {
      auto bytes = FlatBytes(op->buffer);
      if (!bytes) {
        error = bytes.error().message;
        return;
      }
      const int64_t offset = (plan_->shared_bytes + kCudaSharedAlign - 1) / kCudaSharedAlign * kCudaSharedAlign;
      plan_->shared.push_back(op->buffer);
      plan_->shared_offsets.push_back(offset);
      plan_->shared_bytes = offset + *bytes;
    } else if (op->buffer->scope == Scope::kLocal) {
      auto bytes = FlatBytes(op->buffer);
      if (!bytes) {
        error = bytes.error().message;
        return;
      }
    }
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode*) override {}

 private:
  CudaKernelPlan* plan_;
  bool active_[8] = {};
  int in_threads_ = 0;
};

// Whether `var` occurs in an index of a local-buffer access.
class LocalIndexUse : public IRVisitor {
 public:
  explicit LocalIndexUse(const VarNode* var) : var_(var) {}
  bool found = false;
  void Visit_(const BufferLoadNode* op) override {
    if (op->buffer->scope == Scope::kLocal) Check(op->indices);
    VisitFields(op);
  }
  void Visit_(const BufferStoreNode* op) override {
    if (op->buffer->scope == Scope::kLocal) Check(op->indices);
    VisitFields(op);
  }
  void Visit_(const VarNode* op) override { in_index_hit_ |= op == var_; }

 private:
  void Check(const std::vector<Expr>& indices) {
    if (found) return;
    in_index_hit_ = false;
    for (const auto& i : indices) Visit(i);
    found |= in_index_hit_;
  }
  const VarNode* var_;
  bool in_index_hit_ = false;
};

}  // namespace

bool CudaFullyUnrolls(const ForNode* loop) {
  const int64_t* n = AsConstInt(loop->extent);
  if (!n || *n <= 1) return false;
  switch (loop->for_kind) {
    case ForKind::kUnrolled:
    case ForKind::kVectorized: return true;
    case ForKind::kThreadBinding: return false;
    case ForKind::kSerial:
    case ForKind::kParallel: {
      if (*n > kCudaRegisterLoopMaxExtent) return false;
      LocalIndexUse use(loop->var.get());
      use.Visit(loop->body);
      return use.found;
    }
  }
  return false;
}

Result<CudaModulePlan> PlanCudaModule(const PrimFunc& f) {
  for (const auto& p : f.params) {
    if (p->shape.size() != 1) return MakeError("parameter " + p->name + " is not flattened");
  }
  CudaModulePlan plan;
  std::vector<Stmt> units;
  std::unordered_set<const AllocateNode*> spanning;
  Split(f.body, &units, &spanning);
  WorkspaceCollector ws(spanning);
  ws.Visit(f.body);
  for (const auto& b : ws.buffers) {
    auto bytes = FlatBytes(b);
    if (!bytes) return bytes.error();
    plan.workspaces.push_back(b);
    plan.workspace_bytes.push_back(*bytes);
  }
  for (const auto& u : units) {
    CudaKernelPlan k;
    k.body = StripGlobalAllocations().Mutate(u);
    KernelScanner scan(&k);
    scan.Visit(k.body);
    if (!scan.error.empty()) return MakeError(scan.error);
    plan.kernels.push_back(std::move(k));
  }
  return plan;
}

}  // namespace autotune::tir
