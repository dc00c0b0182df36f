#include "tir/transform/serialize_threads.h"

#include <gtest/gtest.h>

#include "tests/measure/test_kernels.h"
#include "tir/functor.h"
#include "tir/printer.h"

namespace autotune::tir {
namespace {

using namespace autotune::test_kernels;

std::string Serialized(const Stmt& s) {
  auto r = SerializeThreads(s);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? ToString(r.value()) : "";
}

TEST(SerializeThreads, SplitsThreadLoopAtBarrier) {
  Buffer S = Flat("S", 4, Scope::kShared), O = Flat("O", 4);
  Var tx = MakeVar("tx");
  Stmt s = Allocate(S, ThreadLoop(tx, 4, ThreadTag::kThreadIdxX,
                                  Seq({Store(S, F(1), {tx}), Barrier(), Store(O, Load(S, {I(3) - tx}), {tx})})));
  EXPECT_EQ(Serialized(s),
            "allocate S: float32[4] shared {\n"
            "  for (tx: int32, 0, 4) serial {\n"
            "    S[tx] = 1f\n"
            "  }\n"
            "  for (tx: int32, 0, 4) serial {\n"
            "    O[tx] = S[(3 - tx)]\n"
            "  }\n"
            "}\n");
}

TEST(SerializeThreads, WithoutBarriersThreadLoopsBecomeSerialInPlace) {
  Buffer O = Flat("O", 32);
  Var bx = MakeVar("bx"), tx = MakeVar("tx");
  Stmt s = ThreadLoop(bx, 4, ThreadTag::kBlockIdxX, ThreadLoop(tx, 8, ThreadTag::kThreadIdxX,
                                                                Store(O, F(2), {bx * 8 + tx})));
  EXPECT_EQ(Serialized(s),
            "for (bx: int32, 0, 4) serial {\n"
            "  for (tx: int32, 0, 8) serial {\n"
            "    O[((bx * 8) + tx)] = 2f\n"
            "  }\n"
            "}\n");
}

TEST(SerializeThreads, MovesLoopsAndConditionsOutwardAndExpandsLocals) {
  Buffer S = Flat("S", 8, Scope::kShared), O = Flat("O", 8), L = Flat("L", 2, Scope::kLocal);
  Var ty = MakeVar("ty"), tx = MakeVar("tx"), k = MakeVar("k"), n = MakeVar("n");
  Expr t = ty * 4 + tx;
  Stmt loop_body = Seq({Store(S, Load(L, {I(0)}), {t}), Barrier(),
                        Store(L, Load(L, {I(1)}) + Load(S, {I(7) - t}), {I(1)})});
  Stmt per_thread = Allocate(L, Seq({Store(L, F(1), {I(0)}), Store(L, F(0), {I(1)}),
                                     IfThenElse(GT(n, I(0)), Loop(k, 3, loop_body)), Store(O, Load(L, {I(1)}), {t})}));
  Stmt s = Allocate(S, ThreadLoop(ty, 2, ThreadTag::kThreadIdxY, ThreadLoop(tx, 4, ThreadTag::kThreadIdxX, per_thread)));
  EXPECT_EQ(Serialized(s),
            "allocate S: float32[8] shared {\n"
            "  allocate L: float32[16] local {\n"
            "    for (ty: int32, 0, 2) serial {\n"
            "      for (tx: int32, 0, 4) serial {\n"
            "        L[((((ty * 4) + tx) * 2) + 0)] = 1f\n"
            "        L[((((ty * 4) + tx) * 2) + 1)] = 0f\n"
            "      }\n"
            "    }\n"
            "    if (n > 0) {\n"
            "      for (k: int32, 0, 3) serial {\n"
            "        for (ty: int32, 0, 2) serial {\n"
            "          for (tx: int32, 0, 4) serial {\n"
            "            S[((ty * 4) + tx)] = L[((((ty * 4) + tx) * 2) + 0)]\n"
            "          }\n"
            "        }\n"
            "        for (ty: int32, 0, 2) serial {\n"
            "          for (tx: int32, 0, 4) serial {\n"
            "            L[((((ty * 4) + tx) * 2) + 1)] = (L[((((ty * 4) + tx) * 2) + 1)] + S[(7 - ((ty * 4) + tx))])\n"
            "          }\n"
            "        }\n"
            "      }\n"
            "    }\n"
            "    for (ty: int32, 0, 2) serial {\n"
            "      for (tx: int32, 0, 4) serial {\n"
            "        O[((ty * 4) + tx)] = L[((((ty * 4) + tx) * 2) + 1)]\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
}

class CountThreadsAndBarriers : public IRVisitor {
 public:
  int thread_loops = 0, barriers = 0;
  void Visit_(const ForNode* op) override {
    thread_loops += op->for_kind == ForKind::kThreadBinding;
    VisitFields(op);
  }
  void Visit_(const BarrierNode*) override { ++barriers; }
};

TEST(SerializeThreads, GpuGemmHasNoThreadLoopsOrBarriersLeft) {
  PrimFunc f = GpuTiledGemm(32, 32, 16);
  ASSERT_TRUE(NeedsThreadSerialization(f.body));
  auto r = SerializeThreads(f.body);
  ASSERT_TRUE(r.ok()) << r.error().message;
  CountThreadsAndBarriers c;
  c.Visit(r.value());
  EXPECT_EQ(c.thread_loops, 0);
  EXPECT_EQ(c.barriers, 0);
  EXPECT_FALSE(NeedsThreadSerialization(r.value()));
  EXPECT_FALSE(NeedsThreadSerialization(NaiveGemm(4, 4, 4).body));
}

// A shuffle is an exchange through a block-wide array: all threads write, then each reads the value
// of the thread whose threadIdx.x is its own XOR the offset (same threadIdx.y).
TEST(SerializeThreads, ShufflesExchangeThroughMemory) {
  const Stmt s = ShuffleRows().body;
  EXPECT_TRUE(NeedsThreadSerialization(s));
  const std::string text = Serialized(s);
  EXPECT_NE(text.find("allocate L_exchange: float32[16] shared"), std::string::npos) << text;
  EXPECT_EQ(text.find("shfl_xor"), std::string::npos) << text;
  // CodegenCRun.ShufflesRunAsExchanges runs it.
}

TEST(SerializeThreads, ShuffleUnderThreadDependentConditionIsAnError) {
  Buffer X = Flat("X", 8), Y = Flat("Y", 8);
  Var tx = MakeVar("tx");
  Stmt s = ThreadLoop(tx, 8, ThreadTag::kThreadIdxX, IfThenElse(LT(tx, I(4)), Store(Y, ShuffleXor(Load(X, {tx}), 1), {tx})));
  auto r = SerializeThreads(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("warp shuffle under a thread-dependent condition"), std::string::npos)
      << r.error().message;
}

TEST(SerializeThreads, BarrierUnderThreadDependentConditionIsAnError) {
  Buffer S = Flat("S", 4, Scope::kShared);
  Var tx = MakeVar("tx");
  Stmt s = Allocate(S, ThreadLoop(tx, 4, ThreadTag::kThreadIdxX,
                                  IfThenElse(LT(tx, I(2)), Seq({Store(S, F(1), {tx}), Barrier()}))));
  auto r = SerializeThreads(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("thread-dependent condition"), std::string::npos) << r.error().message;
}

TEST(SerializeThreads, BarrierUnderConditionOnLocalValueIsAnError) {
  Buffer S = Flat("S", 4, Scope::kShared), L = Flat("L", 1, Scope::kLocal);
  Var tx = MakeVar("tx");
  Stmt body = Allocate(L, Seq({Store(L, F(1), {I(0)}),
                               IfThenElse(GT(Load(L, {I(0)}), F(0)), Seq({Store(S, F(1), {tx}), Barrier()}))}));
  auto r = SerializeThreads(Allocate(S, ThreadLoop(tx, 4, ThreadTag::kThreadIdxX, body)));
  ASSERT_FALSE(r.ok());
}

TEST(SerializeThreads, BarrierInThreadDependentLoopIsAnError) {
  Buffer S = Flat("S", 4, Scope::kShared);
  Var tx = MakeVar("tx"), k = MakeVar("k");
  Stmt loop = For(k, I(0), tx + 1, ForKind::kSerial, Seq({Store(S, F(1), {tx}), Barrier()}));
  auto r = SerializeThreads(Allocate(S, ThreadLoop(tx, 4, ThreadTag::kThreadIdxX, loop)));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("bounds depend on the thread"), std::string::npos) << r.error().message;
}

// A local buffer allocated outside the threadIdx.x loops that use it (a register staging array
// filled by each thread in one loop, read back by the same thread in another): every thread keeps
// its own copy, as each CUDA thread keeps its registers.
TEST(SerializeThreads, ALocalUsedInSeveralThreadLoopsIsOnePerThread) {
  Buffer X = Flat("X", 4), O = Flat("O", 4), L = Flat("L", 1, Scope::kLocal);
  Var t1 = MakeVar("t"), t2 = MakeVar("t");
  Stmt s = Allocate(L, Seq({ThreadLoop(t1, 4, ThreadTag::kThreadIdxX, Store(L, Load(X, {t1}), {I(0)})),
                            ThreadLoop(t2, 4, ThreadTag::kThreadIdxX, Store(O, Load(L, {I(0)}), {t2}))}));
  EXPECT_EQ(Serialized(s),
            "allocate L: float32[4] local {\n"
            "  for (t: int32, 0, 4) serial {\n"
            "    L[((((0 * 4) + t) * 1) + 0)] = X[t]\n"
            "  }\n"
            "  for (t_1: int32, 0, 4) serial {\n"
            "    O[t_1] = L[((((0 * 4) + t_1) * 1) + 0)]\n"
            "  }\n"
            "}\n");
}

}  // namespace
}  // namespace autotune::tir
