#include "tir/printer.h"

#include <charconv>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "tir/functor.h"

namespace autotune::tir {
namespace {

// Collects every variable and buffer name of a tree, so that suffixed names can avoid all of them.
class NameCollector : public IRVisitor {
 public:
  std::unordered_set<std::string> var_names, buffer_names;

  void Visit_(const VarNode* op) override { var_names.insert(op->name); }
  void VisitBuffer(const Buffer& b) override {
    if (!seen_.insert(b.get()).second) return;
    buffer_names.insert(b->name);
    for (const auto& e : b->shape) Visit(e);
    for (const auto& e : b->strides) Visit(e);
  }

 private:
  std::unordered_set<const BufferNode*> seen_;
};

// Gives each distinct node a distinct printed name, in order of first request.
template <class Node>
class Namer {
 public:
  explicit Namer(const std::unordered_set<std::string>* reserved) : reserved_(reserved) {}

  const std::string& Name(const Node* n) {
    auto it = names_.find(n);
    if (it != names_.end()) return it->second;
    std::string base = n->name.empty() ? "v" : n->name;
    std::string name = base;
    // The first node with a name keeps it; later ones get a suffix that no node of the tree uses.
    for (int i = 1; used_.count(name) || (name != base && reserved_->count(name)); ++i) {
      name = base + "_" + std::to_string(i);
    }
    used_.insert(name);
    return names_.emplace(n, std::move(name)).first->second;
  }

 private:
  const std::unordered_set<std::string>* reserved_;
  std::unordered_set<std::string> used_;
  std::unordered_map<const Node*, std::string> names_;
};

std::string ShortestDouble(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

std::string FloatText(double v, DType t) {
  const char* type = DTypeName(t);
  if (std::isnan(v)) return std::string(type) + "(nan)";
  if (std::isinf(v)) return std::string(type) + (v < 0 ? "(-inf)" : "(inf)");
  if (t == DType::kFloat32) {
    float f = static_cast<float>(v);
    // Shortest text that reads back as the same float.
    if (static_cast<double>(f) == v) {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof(buf), f);
      return std::string(buf, r.ptr) + "f";
    }
    return "float32(" + ShortestDouble(v) + ")";
  }
  if (IsHalf(t)) return std::string(DTypeName(t)) + "(" + ShortestDouble(v) + ")";
  return ShortestDouble(v) + "f64";
}

bool IsInfix(BinaryOp op) {
  switch (op) {
    case BinaryOp::kFloorDiv:
    case BinaryOp::kFloorMod:
    case BinaryOp::kMin:
    case BinaryOp::kMax: return false;
    default: return true;
  }
}

class Printer {
 public:
  template <class Tree>
  explicit Printer(const Tree& t) : names_(), vars_(&names_.var_names), buffers_(&names_.buffer_names) {
    if (t) names_.Visit(t);
  }

  std::string out;

  void PrintExpr(const Expr& e) {
    if (!e) {
      out += "<null>";
      return;
    }
    switch (e->kind) {
      case ExprKind::kIntImm: {
        int64_t v = static_cast<const IntImmNode*>(e.get())->value;
        if (e->dtype == DType::kBool && (v == 0 || v == 1)) {
          out += v ? "true" : "false";
        } else if (e->dtype == DType::kInt32) {
          out += std::to_string(v);
        } else {
          out += std::to_string(v) + (e->dtype == DType::kInt64 ? "i64" : "bool");
        }
        return;
      }
      case ExprKind::kFloatImm:
        out += FloatText(static_cast<const FloatImmNode*>(e.get())->value, e->dtype);
        return;
      case ExprKind::kVar:
        out += vars_.Name(static_cast<const VarNode*>(e.get()));
        return;
      case ExprKind::kBinary: {
        const auto* op = static_cast<const BinaryNode*>(e.get());
        if (IsInfix(op->op)) {
          out += "(";
          PrintExpr(op->a);
          out += " ";
          out += BinaryOpName(op->op);
          out += " ";
          PrintExpr(op->b);
          out += ")";
        } else {
          out += BinaryOpName(op->op);
          out += "(";
          PrintExpr(op->a);
          out += ", ";
          PrintExpr(op->b);
          out += ")";
        }
        return;
      }
      case ExprKind::kNot:
        out += "!";
        PrintExpr(static_cast<const NotNode*>(e.get())->a);
        return;
      case ExprKind::kSelect: {
        const auto* op = static_cast<const SelectNode*>(e.get());
        out += "select(";
        PrintExpr(op->cond);
        out += ", ";
        PrintExpr(op->true_value);
        out += ", ";
        PrintExpr(op->false_value);
        out += ")";
        return;
      }
      case ExprKind::kCast: {
        const auto* op = static_cast<const CastNode*>(e.get());
        out += "cast<";
        out += DTypeName(op->dtype);
        out += ">(";
        PrintExpr(op->value);
        out += ")";
        return;
      }
      case ExprKind::kBufferLoad: {
        const auto* op = static_cast<const BufferLoadNode*>(e.get());
        PrintAccess(op->buffer, op->indices);
        return;
      }
      case ExprKind::kCall: {
        const auto* op = static_cast<const CallNode*>(e.get());
        out += op->name;
        out += "(";
        PrintList(op->args);
        out += ")";
        return;
      }
      case ExprKind::kReduce: {
        const auto* op = static_cast<const ReduceNode*>(e.get());
        out += ReduceOpName(op->combiner);
        out += "(";
        PrintExpr(op->source);
        out += ", axis=[";
        for (size_t i = 0; i < op->axis.size(); ++i) {
          if (i) out += ", ";
          PrintExpr(op->axis[i]);
          out += ": 0..";
          PrintExpr(op->extents[i]);
        }
        out += "])";
        return;
      }
    }
  }

  void PrintFor(const ForNode& op, int indent) {
    Indent(indent);
    out += "for (";
    PrintExpr(op.var);
    out += ": ";
    out += DTypeName(op.var->dtype);
    out += ", ";
    PrintExpr(op.min);
    out += ", ";
    PrintExpr(op.extent);
    out += ") ";
    out += ForKindName(op.for_kind);
    if (op.for_kind == ForKind::kThreadBinding) {
      out += " \"";
      out += ThreadTagName(op.tag);
      out += "\"";
    }
    if (op.auto_unroll_max_step != 0) out += " auto_unroll_max_step=" + std::to_string(op.auto_unroll_max_step);
    out += " {\n";
    PrintStmt(op.body, indent + 1);
    CloseBrace(indent);
  }

  void PrintAllocate(const AllocateNode& op, int indent) {
    Indent(indent);
    out += "allocate ";
    out += buffers_.Name(op.buffer.get());
    out += ": ";
    out += DTypeName(op.buffer->dtype);
    out += "[";
    PrintList(op.buffer->shape);
    out += "] ";
    out += ScopeName(op.buffer->scope);
    if (!op.buffer->strides.empty()) {
      out += " strides=[";
      PrintList(op.buffer->strides);
      out += "]";
    }
    out += " {\n";
    PrintStmt(op.body, indent + 1);
    CloseBrace(indent);
  }

  void PrintIf(const IfThenElseNode& op, int indent) {
    Indent(indent);
    out += "if ";
    // Infix conditions already carry their parentheses.
    const auto* bin = As<BinaryNode>(op.cond);
    bool parenthesized = bin && IsInfix(bin->op);
    if (!parenthesized) out += "(";
    PrintExpr(op.cond);
    if (!parenthesized) out += ")";
    out += " {\n";
    PrintStmt(op.then_case, indent + 1);
    if (op.else_case) {
      Indent(indent);
      out += "} else {\n";
      PrintStmt(op.else_case, indent + 1);
    }
    CloseBrace(indent);
  }

  void PrintStmt(const Stmt& s, int indent) {
    if (!s) {
      Indent(indent);
      out += "<null>\n";
      return;
    }
    switch (s->kind) {
      case StmtKind::kFor:
        PrintFor(*static_cast<const ForNode*>(s.get()), indent);
        return;
      case StmtKind::kBufferStore: {
        const auto* op = static_cast<const BufferStoreNode*>(s.get());
        Indent(indent);
        PrintAccess(op->buffer, op->indices);
        out += " = ";
        PrintExpr(op->value);
        out += "\n";
        return;
      }
      case StmtKind::kAllocate:
        PrintAllocate(*static_cast<const AllocateNode*>(s.get()), indent);
        return;
      case StmtKind::kIfThenElse:
        PrintIf(*static_cast<const IfThenElseNode*>(s.get()), indent);
        return;
      case StmtKind::kSeq:
        for (const auto& x : static_cast<const SeqNode*>(s.get())->stmts) PrintStmt(x, indent);
        return;
      case StmtKind::kBarrier:
        Indent(indent);
        if (int64_t w = static_cast<const BarrierNode*>(s.get())->async_wait; w >= 0) {
          out += "barrier(async_wait=" + std::to_string(w) + ")\n";
        } else {
          out += "barrier()\n";
        }
        return;
      case StmtKind::kTensorize: {
        const auto* op = static_cast<const TensorizeNode*>(s.get());
        Indent(indent);
        out += "tensorize \"" + op->intrinsic + "\" {\n";
        PrintStmt(op->body, indent + 1);
        CloseBrace(indent);
        return;
      }
    }
  }

 private:
  void Indent(int n) { out.append(static_cast<size_t>(2 * n), ' '); }
  void CloseBrace(int indent) {
    Indent(indent);
    out += "}\n";
  }
  void PrintList(const std::vector<Expr>& v) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ", ";
      PrintExpr(v[i]);
    }
  }
  void PrintAccess(const Buffer& b, const std::vector<Expr>& indices) {
    out += b ? buffers_.Name(b.get()) : std::string("<null>");
    out += "[";
    PrintList(indices);
    out += "]";
  }

  NameCollector names_;
  Namer<VarNode> vars_;
  Namer<BufferNode> buffers_;
};

}  // namespace

std::string ToString(const Expr& e) {
  Printer p(e);
  p.PrintExpr(e);
  return std::move(p.out);
}

std::string ToString(const Stmt& s) {
  Printer p(s);
  p.PrintStmt(s, 0);
  return std::move(p.out);
}

}  // namespace autotune::tir
