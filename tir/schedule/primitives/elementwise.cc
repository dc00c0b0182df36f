#include "tir/functor.h"
#include "tir/schedule/primitives/primitives.h"

namespace autotune::tir {

namespace {
class ElementwiseChecker : public IRVisitor {
 public:
  ElementwiseChecker(const te::OperationNode& consumer, const BufferNode* producer)
      : consumer_(consumer), producer_(producer) {}
  bool found = false;
  bool elementwise = true;
  void Visit_(const BufferLoadNode* op) override {
    if (op->buffer.get() == producer_) {
      found = true;
      if (op->indices.size() != consumer_.axis.size()) {
        elementwise = false;
      } else {
        for (size_t i = 0; i < op->indices.size(); ++i) {
          if (op->indices[i] != Expr(consumer_.axis[i].var)) elementwise = false;
        }
      }
    }
    VisitFields(op);
  }

 private:
  const te::OperationNode& consumer_;
  const BufferNode* producer_;
};
}  // namespace

bool ReadsElementwise(const te::OperationNode& consumer, const BufferNode* producer) {
  if (consumer.is_placeholder || consumer.IsReduction()) return false;
  ElementwiseChecker c(consumer, producer);
  c.Visit(consumer.body);
  return c.found && c.elementwise;
}

}  // namespace autotune::tir
