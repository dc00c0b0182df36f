#include "tir/buffer.h"

#include "support/check.h"

#include <algorithm>

namespace autotune::tir {

const char* ScopeName(Scope s) {
  switch (s) {
    case Scope::kGlobal: return "global";
    case Scope::kShared: return "shared";
    case Scope::kLocal: return "local";
  }
  return "?";
}

std::optional<Scope> ParseScope(std::string_view name) {
  for (Scope s : {Scope::kGlobal, Scope::kShared, Scope::kLocal}) {
    if (name == ScopeName(s)) return s;
  }
  return std::nullopt;
}

Buffer MakeBuffer(std::string name, DType dtype, std::vector<Expr> shape, Scope scope, std::vector<Expr> strides) {
  for (const auto& e : shape) AUTOTUNE_CHECK(e && IsInt(e->dtype), "buffer extent must be an integer");
  AUTOTUNE_CHECK(strides.empty() || strides.size() == shape.size(), "one stride per dimension");
  return std::make_shared<BufferNode>(BufferNode{std::move(name), dtype, std::move(shape), scope, std::move(strides)});
}

Buffer WithFlagsOf(const Buffer& b, const BufferNode& from) {
  if (b->pipeline_stages == from.pipeline_stages && b->async_fill == from.async_fill) return b;
  auto copy = std::make_shared<BufferNode>(*b);
  copy->pipeline_stages = from.pipeline_stages;
  copy->async_fill = from.async_fill;
  return copy;
}

Expr BufferElemCount(const Buffer& b) {
  if (b->shape.empty()) return IntImm(1);
  if (!b->strides.empty()) {
    // The largest stride's span (a reordered storage's outermost dimension need not be the first).
    int64_t count = 0;
    for (size_t d = 0; d < b->shape.size(); ++d) {
      const int64_t* s = AsConstInt(b->strides[d]);
      const int64_t* n = AsConstInt(b->shape[d]);
      if (!s || !n) return b->strides[0] * b->shape[0];
      count = std::max(count, *s * *n);
    }
    return IntImm(count);
  }
  Expr n = b->shape[0];
  for (size_t i = 1; i < b->shape.size(); ++i) n = n * b->shape[i];
  return n;
}

std::vector<Expr> BufferStrides(const Buffer& b) {
  if (!b->strides.empty()) return b->strides;
  std::vector<Expr> s(b->shape.size());
  Expr acc = IntImm(1);
  for (size_t i = b->shape.size(); i-- > 0;) {
    s[i] = acc;
    acc = acc * b->shape[i];
  }
  return s;
}

}  // namespace autotune::tir
