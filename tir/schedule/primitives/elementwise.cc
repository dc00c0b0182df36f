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

bool ReadsAtOwnAxes(const te::OperationNode& consumer, const BufferNode* producer) {
  if (consumer.is_placeholder) return false;
  ElementwiseChecker c(consumer, producer);
  c.Visit(consumer.body);
  return c.found && c.elementwise;
}

bool ReadsElementwise(const te::OperationNode& consumer, const BufferNode* producer) {
  return !consumer.IsReduction() && ReadsAtOwnAxes(consumer, producer);
}

bool ComputedAlongside(const ScheduleState& state, int consumer, int stage, int host, int iter) {
  const Stage& c = state.stages[consumer];
  const Stage& s = state.stages[stage];
  return c.attach == AttachKind::kAt && c.attach_stage == host && c.attach_iter == iter &&
         c.op->shape == s.op->shape && ReadsAtOwnAxes(*c.op, s.op->buffer.get());
}

bool ComputedInside(const ScheduleState& state, int consumer, int host, int iter) {
  const Stage& c = state.stages[consumer];
  const Stage& h = state.stages[host];
  if (c.attach != AttachKind::kAt || c.attach_stage != host) return false;
  const int at = h.LeafPosition(iter), inner = h.LeafPosition(c.attach_iter);
  return at >= 0 && inner >= at;
}

}  // namespace autotune::tir
