#include <unordered_map>

#include "tir/functor.h"
#include "tir/schedule/primitives/primitives.h"
#include "tir/transform/substitute.h"

namespace autotune::tir {

namespace {
class ReadInliner : public IRMutator {
 public:
  explicit ReadInliner(const te::OperationNode& producer) : producer_(producer) {}
  Expr Mutate_(const BufferLoadNode* op, const Expr& self) override {
    Expr e = MutateFields(op, self);
    const auto* load = As<BufferLoadNode>(e);
    if (load->buffer != producer_.buffer) return e;
    std::unordered_map<const VarNode*, Expr> map;
    for (size_t i = 0; i < producer_.axis.size(); ++i) map[producer_.axis[i].var.get()] = load->indices[i];
    return Substitute(producer_.body, map);
  }

 private:
  const te::OperationNode& producer_;
};
}  // namespace

Expr InlineReads(const Expr& body, const te::OperationNode& producer) { return ReadInliner(producer).Mutate(body); }

}  // namespace autotune::tir
