// The schedule-primitive tests' shared helpers (see schedule_test_util.h).
#include "tests/tir/schedule_test_util.h"

#include <nlohmann/json.hpp>

#include "tir/lower/lower.h"
#include "tir/printer.h"
#include "tir/structural_equal.h"

namespace autotune::tir::testing {

Workload Make(const std::string& op, const std::string& shape, const std::string& epilogue) {
  auto w = MakeWorkload(op, shape, epilogue);
  EXPECT_TRUE(w) << (w ? "" : w.error().message);
  return *w;
}

void CheckRoundTrip(const std::string& op, const std::string& shape, const std::string& epilogue, TargetKind target,
                    const std::function<void(Schedule&)>& build, const std::string& expect_kind) {
  Workload w1 = Make(op, shape, epilogue);
  Schedule sch(w1, target, 7);
  build(sch);
  bool found = false;
  for (const auto& inst : sch.trace().instructions()) found |= inst.kind == expect_kind;
  EXPECT_TRUE(found) << "trace has no " << expect_kind << ":\n" << sch.trace().ToText();
  auto f1 = Lower(sch.state());
  ASSERT_TRUE(f1) << f1.error().message;

  const std::string text = sch.trace().ToJson().dump(2);
  auto parsed = Trace::FromJson(nlohmann::json::parse(text));
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->ToJson(), sch.trace().ToJson());

  Workload w2 = Make(op, shape, epilogue);
  auto replayed = Schedule::Replay(w2, target, *parsed, 99);
  ASSERT_TRUE(replayed) << replayed.error().message;
  EXPECT_EQ(replayed->trace().ToJson(), sch.trace().ToJson());
  auto f2 = Lower(replayed->state());
  ASSERT_TRUE(f2) << f2.error().message;
  EXPECT_TRUE(StructuralEqual(f1->body, f2->body)) << ToString(f1->body) << "\nvs\n" << ToString(f2->body);
  // Different variable nodes, same structure: the replay really built new IR.
  EXPECT_NE(f1->body, f2->body);
}

}  // namespace autotune::tir::testing
