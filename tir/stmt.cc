#include "tir/stmt.h"

#include "support/check.h"

namespace autotune::tir {

const char* ForKindName(ForKind k) {
  switch (k) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
    case ForKind::kThreadBinding: return "thread_binding";
  }
  return "?";
}

const char* ThreadTagName(ThreadTag t) {
  switch (t) {
    case ThreadTag::kNone: return "";
    case ThreadTag::kBlockIdxX: return "blockIdx.x";
    case ThreadTag::kBlockIdxY: return "blockIdx.y";
    case ThreadTag::kBlockIdxZ: return "blockIdx.z";
    case ThreadTag::kThreadIdxX: return "threadIdx.x";
    case ThreadTag::kThreadIdxY: return "threadIdx.y";
    case ThreadTag::kThreadIdxZ: return "threadIdx.z";
    case ThreadTag::kVThread: return "vthread";
  }
  return "?";
}

std::optional<ThreadTag> ParseThreadTag(std::string_view s) {
  for (ThreadTag t : {ThreadTag::kBlockIdxX, ThreadTag::kBlockIdxY, ThreadTag::kBlockIdxZ, ThreadTag::kThreadIdxX,
                      ThreadTag::kThreadIdxY, ThreadTag::kThreadIdxZ, ThreadTag::kVThread}) {
    if (s == ThreadTagName(t)) return t;
  }
  return std::nullopt;
}

Stmt For(Var var, Expr min, Expr extent, ForKind kind, Stmt body, ThreadTag tag, int64_t auto_unroll_max_step) {
  AUTOTUNE_CHECK(var && min && extent && body, "for loop part is null");
  AUTOTUNE_CHECK((kind == ForKind::kThreadBinding) == (tag != ThreadTag::kNone),
                 "thread tag is set exactly on thread-bound loops");
  return std::make_shared<ForNode>(std::move(var), std::move(min), std::move(extent), kind, tag, std::move(body),
                                   auto_unroll_max_step);
}

Stmt Store(Buffer buffer, Expr value, std::vector<Expr> indices) {
  AUTOTUNE_CHECK(buffer && value, "store part is null");
  AUTOTUNE_CHECK(indices.size() == buffer->shape.size(), "store index count differs from buffer rank");
  AUTOTUNE_CHECK(value->dtype == buffer->dtype, "stored value dtype differs from buffer dtype");
  return std::make_shared<BufferStoreNode>(std::move(buffer), std::move(value), std::move(indices));
}

Stmt Allocate(Buffer buffer, Stmt body) {
  AUTOTUNE_CHECK(buffer && body, "allocate part is null");
  return std::make_shared<AllocateNode>(std::move(buffer), std::move(body));
}

Stmt IfThenElse(Expr cond, Stmt then_case, Stmt else_case) {
  AUTOTUNE_CHECK(cond && cond->dtype == DType::kBool, "if condition must be bool");
  AUTOTUNE_CHECK(then_case, "if without a then branch");
  return std::make_shared<IfThenElseNode>(std::move(cond), std::move(then_case), std::move(else_case));
}

Stmt Seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s) continue;
    if (const auto* seq = As<SeqNode>(s)) {
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  return std::make_shared<SeqNode>(std::move(flat));
}

bool IsEmptyStmt(const Stmt& s) {
  const auto* seq = As<SeqNode>(s);
  return !s || (seq && seq->stmts.empty());
}

Stmt Barrier(int64_t async_wait) { return std::make_shared<BarrierNode>(async_wait); }

Stmt Tensorize(std::string intrinsic, Stmt body) {
  AUTOTUNE_CHECK(body, "tensorize without a body");
  return std::make_shared<TensorizeNode>(std::move(intrinsic), std::move(body));
}

}  // namespace autotune::tir
