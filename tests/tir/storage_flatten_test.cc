// StorageFlatten (tir/lower/storage_flatten.h): every buffer access becomes one index into a flat
// buffer of the same elements, parameters included.
#include "tir/lower/storage_flatten.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/tir/golden.h"
#include "tests/tir/lowering_test_util.h"
#include "tir/functor.h"
#include "tir/lower/inject_virtual_thread.h"
#include "tir/lower/lift_shared_allocations.h"
#include "tir/printer.h"

namespace autotune::tir {
namespace {

using namespace autotune::tir::testing;

// Buffers reached from a statement, by name.
struct BufferNodes : IRVisitor {
  std::map<std::string, std::set<const BufferNode*>> by_name;
  void VisitBuffer(const Buffer& b) override { by_name[b->name].insert(b.get()); }
};

TEST(StorageFlatten, GemmKernel) {
  Gemm g(/*shared=*/true);
  PrimFunc f = StorageFlatten(g.Func(LiftSharedAllocations(InjectVirtualThread(g.body))));
  EXPECT_EQ(Count(f.body).multi_index_accesses, 0);
  ASSERT_EQ(f.params.size(), 3u);
  for (const auto& p : f.params) {
    ASSERT_EQ(p->shape.size(), 1u);
    EXPECT_TRUE(IsConstInt(p->shape[0], 64));
    EXPECT_TRUE(p->strides.empty());
  }
  BufferNodes nodes;
  nodes.Visit(f.body);
  for (const auto& [name, set] : nodes.by_name) EXPECT_EQ(set.size(), 1u) << name;
  EXPECT_EQ(*nodes.by_name["A"].begin(), f.params[0].get());
  EXPECT_EQ(*nodes.by_name["C"].begin(), f.params[2].get());
  // B_shared has padded rows (stride 9): 36 elements.
  ExpectGolden(ToString(f.body), "storage_flatten_gemm.tir");
}

TEST(StorageFlatten, SymbolicParamShapeAndZeroRank) {
  Var n = MakeVar("n"), i = MakeVar("i"), j = MakeVar("j");
  Buffer a = MakeBuffer("A", DType::kFloat32, {n, I(4)});
  Buffer s = MakeBuffer("s", DType::kFloat32, {}, Scope::kLocal);
  Stmt body = Allocate(
      s, Seq({Store(s, FloatImm(0), {}),
              For(i, I(0), n, ForKind::kSerial, Serial(j, 4, Store(s, Load(s, {}) + Load(a, {i, j}), {}))),
              Store(a, Load(s, {}), {I(0), I(0)})}));
  PrimFunc f = StorageFlatten(PrimFunc{"f", {a}, body});
  EXPECT_EQ(ToString(f.params[0]->shape[0]), "(n * 4)");
  ExpectGolden(ToString(f.body), "storage_flatten_symbolic_shape.tir");
}

TEST(StorageFlattenDeathTest, NonConstantAllocation) {
  Var n = MakeVar("n");
  Buffer t = MakeBuffer("t", DType::kFloat32, {n}, Scope::kLocal);
  Buffer a = Buf("A", {4});
  PrimFunc f{"f", {a}, Allocate(t, Store(t, FloatImm(0), {I(0)}))};
  EXPECT_DEATH(StorageFlatten(f), "non-constant shape");
}

}  // namespace
}  // namespace autotune::tir
