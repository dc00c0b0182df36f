#include "tir/structural_equal.h"

#include <bit>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace autotune::tir {
namespace {

// ---- Equality -----------------------------------------------------------------------------------

// kMapVars: match variables and buffers by a bijection (true) or by identity (false; the
// simplifier's many term comparisons, which then build no maps).
template <bool kMapVars>
class EqualChecker {
 public:
  bool Equal(const Expr& a, const Expr& b) {
    if (!a || !b) return !a && !b;
    if (a->kind != b->kind || a->dtype != b->dtype) return false;
    if (a->kind == ExprKind::kVar) {
      return EqualVar(static_cast<const VarNode*>(a.get()), static_cast<const VarNode*>(b.get()));
    }
    // Only identity mode may skip a shared subtree: under renaming, the same node can still be
    // unequal to itself (its variables may already be paired with others).
    if (!kMapVars && a == b) return true;
    switch (a->kind) {
#define AUTOTUNE_X(n) \
  case ExprKind::k##n: return EqualFields(static_cast<const n##Node*>(a.get()), static_cast<const n##Node*>(b.get()));
      AUTOTUNE_EXPR_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
    }
    return false;
  }

  bool Equal(const Stmt& a, const Stmt& b) {
    if (!a || !b) return !a && !b;
    if (a->kind != b->kind) return false;
    if (!kMapVars && a == b) return true;
    switch (a->kind) {
#define AUTOTUNE_X(n) \
  case StmtKind::k##n: return EqualFields(static_cast<const n##Node*>(a.get()), static_cast<const n##Node*>(b.get()));
      AUTOTUNE_STMT_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
    }
    return false;
  }

  bool Equal(const Buffer& a, const Buffer& b) {
    if (!a || !b) return !a && !b;
    if constexpr (!kMapVars) {
      return a == b;
    } else {
      return EqualBufferDefinitions(a, b);
    }
  }

 private:
  bool EqualBufferDefinitions(const Buffer& a, const Buffer& b) {
    auto ia = maps_.buf_l2r.find(a.get());
    auto ib = maps_.buf_r2l.find(b.get());
    if (ia != maps_.buf_l2r.end() || ib != maps_.buf_r2l.end()) {
      return ia != maps_.buf_l2r.end() && ib != maps_.buf_r2l.end() && ia->second == b.get() && ib->second == a.get();
    }
    // First encounter of both: their definitions must match. Pair them only afterwards, so the
    // variables of the shape are paired in the order the hash sees them.
    if (a->name != b->name || a->dtype != b->dtype || a->scope != b->scope) return false;
    if (a->pipeline_stages != b->pipeline_stages || a->async_fill != b->async_fill) return false;
    if (!EqualField(a->shape, b->shape) || !EqualField(a->strides, b->strides)) return false;
    maps_.buf_l2r[a.get()] = b.get();
    maps_.buf_r2l[b.get()] = a.get();
    return true;
  }

  bool EqualVar(const VarNode* a, const VarNode* b) {
    if constexpr (!kMapVars) {
      return a == b;
    } else {
      auto ia = maps_.var_l2r.find(a);
      auto ib = maps_.var_r2l.find(b);
      if (ia == maps_.var_l2r.end() && ib == maps_.var_r2l.end()) {
        maps_.var_l2r[a] = b;
        maps_.var_r2l[b] = a;
        return true;
      }
      return ia != maps_.var_l2r.end() && ib != maps_.var_r2l.end() && ia->second == b && ib->second == a;
    }
  }

  template <class N>
  bool EqualFields(const N* a, const N* b) {
    auto fa = a->Fields();
    auto fb = b->Fields();
    return EqualTuple(fa, fb, std::make_index_sequence<std::tuple_size_v<decltype(fa)>>{});
  }
  template <class T, size_t... I>
  bool EqualTuple(const T& x, const T& y, std::index_sequence<I...>) {
    return (EqualField(std::get<I>(x), std::get<I>(y)) && ...);  // in field order, like the hash
  }

  bool EqualField(const Expr& a, const Expr& b) { return Equal(a, b); }
  bool EqualField(const Var& a, const Var& b) {
    if (!a || !b) return !a && !b;
    return a->dtype == b->dtype && EqualVar(a.get(), b.get());
  }
  bool EqualField(const Stmt& a, const Stmt& b) { return Equal(a, b); }
  bool EqualField(const Buffer& a, const Buffer& b) { return Equal(a, b); }
  bool EqualField(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }
  template <class T>
  bool EqualField(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!EqualField(a[i], b[i])) return false;
    }
    return true;
  }
  template <class T>
  bool EqualField(const T& a, const T& b) {  // enums, integers, strings
    return a == b;
  }

  struct Bijection {
    std::unordered_map<const VarNode*, const VarNode*> var_l2r, var_r2l;
    std::unordered_map<const BufferNode*, const BufferNode*> buf_l2r, buf_r2l;
  };
  struct Identity {};
  [[no_unique_address]] std::conditional_t<kMapVars, Bijection, Identity> maps_;
};

// ---- Hash ---------------------------------------------------------------------------------------

class Hasher {
 public:
  void Hash(const Expr& e) {
    if (!e) return Mix(0x6e756c6cULL);  // "null"
    Mix(static_cast<uint64_t>(e->kind) + 1);
    Mix(static_cast<uint64_t>(e->dtype));
    if (e->kind == ExprKind::kVar) {
      auto [it, inserted] = vars_.try_emplace(static_cast<const VarNode*>(e.get()), vars_.size());
      return Mix(it->second);
    }
    switch (e->kind) {
#define AUTOTUNE_X(n) \
  case ExprKind::k##n: return HashFields(static_cast<const n##Node*>(e.get()));
      AUTOTUNE_EXPR_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
    }
  }

  void Hash(const Stmt& s) {
    if (!s) return Mix(0x6e756c6cULL);
    Mix(static_cast<uint64_t>(s->kind) + 101);
    switch (s->kind) {
#define AUTOTUNE_X(n) \
  case StmtKind::k##n: return HashFields(static_cast<const n##Node*>(s.get()));
      AUTOTUNE_STMT_NODES(AUTOTUNE_X)
#undef AUTOTUNE_X
    }
  }

  void Hash(const Buffer& b) {
    if (!b) return Mix(0x6e756c6cULL);
    auto it = buffers_.find(b.get());
    if (it != buffers_.end()) {
      Mix(0xb0f5e7ULL);  // a reference to a buffer seen before
      return Mix(it->second);
    }
    // First encounter: hash the definition, then number the buffer (the order equality pairs it).
    Mix(0xdef0b0fULL);
    HashField(b->name);
    Mix(static_cast<uint64_t>(b->dtype));
    Mix(static_cast<uint64_t>(b->scope));
    // Mixed in only when set: hashes of buffers without them (stored workload keys) stay as they were.
    if (b->pipeline_stages != 1 || b->async_fill) {
      // 2 stages mixes in as the former double_buffer flag did.
      const uint64_t stages = b->pipeline_stages == 2 ? 1 : static_cast<uint64_t>(b->pipeline_stages) << 2;
      Mix(0xdb0000ULL | stages | (b->async_fill ? 2 : 0));
    }
    HashField(b->shape);
    HashField(b->strides);
    size_t n = buffers_.size();
    buffers_[b.get()] = n;
  }

  size_t value() const { return static_cast<size_t>(h_); }

 private:
  void Mix(uint64_t v) {
    // splitmix64-style mixing of the running state with the next word.
    uint64_t x = h_ ^ (v + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2));
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    h_ = x;
  }

  template <class N>
  void HashFields(const N* n) {
    // [&], not [this]: for a node without fields nothing is used (clang warns).
    std::apply([&](const auto&... f) { (HashField(f), ...); }, n->Fields());
  }

  void HashField(const Expr& e) { Hash(e); }
  void HashField(const Var& v) { Hash(Expr(v)); }
  void HashField(const Stmt& s) { Hash(s); }
  void HashField(const Buffer& b) { Hash(b); }
  void HashField(double d) { Mix(std::bit_cast<uint64_t>(d)); }
  void HashField(const std::string& s) {
    uint64_t f = 0xcbf29ce484222325ULL;  // FNV-1a: deterministic, unlike std::hash
    for (unsigned char c : s) f = (f ^ c) * 0x100000001b3ULL;
    Mix(f);
    Mix(s.size());
  }
  template <class T>
  void HashField(const std::vector<T>& v) {
    Mix(v.size());
    for (const auto& x : v) HashField(x);
  }
  template <class T>
  void HashField(const T& v) {  // enums and integers
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>, "unhashed field type");
    Mix(static_cast<uint64_t>(v));
  }

  uint64_t h_ = 0x243f6a8885a308d3ULL;
  std::unordered_map<const VarNode*, uint64_t> vars_;
  std::unordered_map<const BufferNode*, uint64_t> buffers_;
};

}  // namespace

bool StructuralEqual(const Expr& a, const Expr& b) { return EqualChecker<true>().Equal(a, b); }
bool StructuralEqual(const Stmt& a, const Stmt& b) { return EqualChecker<true>().Equal(a, b); }
bool StructuralEqual(const Buffer& a, const Buffer& b) { return EqualChecker<true>().Equal(a, b); }
bool ExprDeepEqual(const Expr& a, const Expr& b) { return EqualChecker<false>().Equal(a, b); }

size_t StructuralHash(const Expr& e) {
  Hasher h;
  h.Hash(e);
  return h.value();
}
size_t StructuralHash(const Stmt& s) {
  Hasher h;
  h.Hash(s);
  return h.value();
}
size_t StructuralHash(const Buffer& b) {
  Hasher h;
  h.Hash(b);
  return h.value();
}

}  // namespace autotune::tir
