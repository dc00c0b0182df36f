#include "tir/te/operation.h"

#include <unordered_set>

#include "support/check.h"
#include "tir/functor.h"

namespace autotune::tir::te {

namespace {

std::vector<Expr> ShapeExprs(const std::vector<int64_t>& shape) {
  std::vector<Expr> out;
  for (int64_t d : shape) out.push_back(IntImm(d));
  return out;
}

class BufferReadCollector : public IRVisitor {
 public:
  std::vector<const BufferNode*> found;
  void Visit_(const BufferLoadNode* op) override {
    if (seen_.insert(op->buffer.get()).second) found.push_back(op->buffer.get());
    VisitFields(op);
  }

 private:
  std::unordered_set<const BufferNode*> seen_;
};

}  // namespace

Operation Placeholder(const std::string& name, std::vector<int64_t> shape, DType dtype) {
  auto op = std::make_shared<OperationNode>();
  op->name = name;
  op->is_placeholder = true;
  op->dtype = dtype;
  op->buffer = MakeBuffer(name, dtype, ShapeExprs(shape));
  op->shape = std::move(shape);
  return op;
}

IterVar ReduceAxis(int64_t extent, const std::string& name) {
  AUTOTUNE_CHECK(extent > 0, "reduce axis extent must be positive");
  return IterVar{MakeVar(name), extent};
}

namespace {

Expr ReduceOver(ReduceOp op, Expr source, const std::vector<IterVar>& axes) {
  std::vector<Var> vars;
  std::vector<Expr> extents;
  for (const auto& a : axes) {
    vars.push_back(a.var);
    extents.push_back(IntImm(a.extent));
  }
  return Reduce(op, std::move(source), std::move(vars), std::move(extents));
}

}  // namespace

Expr Sum(Expr source, const std::vector<IterVar>& axes) { return ReduceOver(ReduceOp::kSum, std::move(source), axes); }
Expr ReduceMax(Expr source, const std::vector<IterVar>& axes) {
  return ReduceOver(ReduceOp::kMax, std::move(source), axes);
}

Operation MakeCompute(const std::string& name, std::vector<IterVar> axis, Expr body, Buffer buffer) {
  AUTOTUNE_CHECK(body, "compute body is null");
  auto op = std::make_shared<OperationNode>();
  op->name = name;
  op->dtype = body->dtype;
  for (const auto& a : axis) op->shape.push_back(a.extent);
  if (const auto* r = As<ReduceNode>(body)) {
    for (size_t i = 0; i < r->axis.size(); ++i) {
      const int64_t* e = AsConstInt(r->extents[i]);
      AUTOTUNE_CHECK(e, "reduce extents must be constant");
      op->reduce_axis.push_back(IterVar{r->axis[i], *e});
    }
  }
  op->axis = std::move(axis);
  op->body = std::move(body);
  op->buffer = buffer ? std::move(buffer) : MakeBuffer(name, op->dtype, ShapeExprs(op->shape));
  return op;
}

Operation Compute(const std::string& name, std::vector<int64_t> shape, const std::vector<std::string>& axis_names,
                  const std::function<Expr(const std::vector<Var>&)>& fbody) {
  AUTOTUNE_CHECK(axis_names.size() == shape.size(), "one axis name per dimension");
  std::vector<IterVar> axis;
  std::vector<Var> vars;
  for (size_t i = 0; i < shape.size(); ++i) {
    AUTOTUNE_CHECK(shape[i] > 0, "compute extents must be positive");
    axis.push_back(IterVar{MakeVar(axis_names[i]), shape[i]});
    vars.push_back(axis.back().var);
  }
  return MakeCompute(name, std::move(axis), fbody(vars));
}

Expr Read(const Operation& op, std::vector<Expr> indices) { return Load(op->buffer, std::move(indices)); }

std::vector<const BufferNode*> ReadBuffers(const Expr& body) {
  BufferReadCollector c;
  if (body) c.Visit(body);
  return c.found;
}

}  // namespace autotune::tir::te
