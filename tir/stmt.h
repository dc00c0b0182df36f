// Statement nodes: loops, stores, allocations, conditionals, sequences and barriers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tir/buffer.h"
#include "tir/expr.h"

namespace autotune::tir {

enum class StmtKind : uint8_t {
#define AUTOTUNE_X(n) k##n,
  AUTOTUNE_STMT_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
};

struct StmtNode {
  StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  StmtNode(const StmtNode&) = default;
  virtual ~StmtNode() = default;
};
using Stmt = std::shared_ptr<const StmtNode>;

template <class T>
const T* As(const Stmt& s) {
  return s && s->kind == T::kKind ? static_cast<const T*>(s.get()) : nullptr;
}

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kThreadBinding };
const char* ForKindName(ForKind k);

// What a thread-bound loop is bound to. kNone for every other loop kind.
enum class ThreadTag : uint8_t {
  kNone,
  kBlockIdxX, kBlockIdxY, kBlockIdxZ,
  kThreadIdxX, kThreadIdxY, kThreadIdxZ,
  kVThread,
};
const char* ThreadTagName(ThreadTag t);
std::optional<ThreadTag> ParseThreadTag(std::string_view s);
inline bool IsBlockTag(ThreadTag t) { return t >= ThreadTag::kBlockIdxX && t <= ThreadTag::kBlockIdxZ; }
inline bool IsThreadTag(ThreadTag t) { return t >= ThreadTag::kThreadIdxX && t <= ThreadTag::kThreadIdxZ; }

struct ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  Var var;
  Expr min, extent;
  ForKind for_kind;
  ThreadTag tag;
  Stmt body;
  // Ansor-style pragma: unroll every loop nest below whose total trip count is at most this (0: off).
  int64_t auto_unroll_max_step;
  ForNode(Var v, Expr mn, Expr ext, ForKind k, ThreadTag t, Stmt b, int64_t unroll)
      : StmtNode(kKind), var(std::move(v)), min(std::move(mn)), extent(std::move(ext)), for_kind(k), tag(t),
        body(std::move(b)), auto_unroll_max_step(unroll) {}
  AUTOTUNE_FIELDS(var, min, extent, for_kind, tag, body, auto_unroll_max_step)
};

struct BufferStoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBufferStore;
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
  BufferStoreNode(Buffer b, Expr v, std::vector<Expr> i)
      : StmtNode(kKind), buffer(std::move(b)), value(std::move(v)), indices(std::move(i)) {}
  AUTOTUNE_FIELDS(buffer, value, indices)
};

// Allocates `buffer` (shared or local scope) for the duration of `body`.
struct AllocateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  Buffer buffer;
  Stmt body;
  AllocateNode(Buffer b, Stmt s) : StmtNode(kKind), buffer(std::move(b)), body(std::move(s)) {}
  AUTOTUNE_FIELDS(buffer, body)
};

struct IfThenElseNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIfThenElse;
  Expr cond;
  Stmt then_case;
  Stmt else_case;  // may be null
  IfThenElseNode(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  AUTOTUNE_FIELDS(cond, then_case, else_case)
};

struct SeqNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSeq;
  std::vector<Stmt> stmts;
  explicit SeqNode(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  AUTOTUNE_FIELDS(stmts)
};

// Synchronizes the threads of a block (shared-memory barrier). With async_wait >= 0 each thread first
// closes the group of asynchronous copies it issued since the last such barrier (stores into
// async_fill buffers) and waits until at most `async_wait` of its groups are still in flight.
struct BarrierNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kBarrier;
  int64_t async_wait;
  explicit BarrierNode(int64_t wait = -1) : StmtNode(kKind), async_wait(wait) {}
  AUTOTUNE_FIELDS(async_wait)
};

// A tile of a loop nest that a tensor intrinsic computes (schedule primitive `tensorize`): `body` is
// the tile's loops as lowering made them, the intrinsic's description instantiated on its operands.
// The C backend runs the body; CUDA emits the intrinsic (tir/analysis/tensor_intrinsics.h says which
// intrinsics there are and how a body matches one).
struct TensorizeNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kTensorize;
  std::string intrinsic;
  Stmt body;
  TensorizeNode(std::string i, Stmt b) : StmtNode(kKind), intrinsic(std::move(i)), body(std::move(b)) {}
  AUTOTUNE_FIELDS(intrinsic, body)
};

// ---- Factories -------------------------------------------------------------------------------
Stmt For(Var var, Expr min, Expr extent, ForKind kind, Stmt body, ThreadTag tag = ThreadTag::kNone,
         int64_t auto_unroll_max_step = 0);
Stmt Store(Buffer buffer, Expr value, std::vector<Expr> indices);
Stmt Allocate(Buffer buffer, Stmt body);
Stmt IfThenElse(Expr cond, Stmt then_case, Stmt else_case = nullptr);
// Flattens nested sequences and drops null entries; a single statement is returned as is.
Stmt Seq(std::vector<Stmt> stmts);
// Whether `s` is absent or an empty Seq.
bool IsEmptyStmt(const Stmt& s);
Stmt Barrier(int64_t async_wait = -1);
Stmt Tensorize(std::string intrinsic, Stmt body);

}  // namespace autotune::tir
