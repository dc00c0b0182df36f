#include "tir/ops/operator.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "support/check.h"
#include "support/sha256.h"

namespace autotune::tir {

namespace {

constexpr EpiloguePart kEpilogueParts[] = {EpiloguePart::kBias,  EpiloguePart::kScale,    EpiloguePart::kShift,
                                           EpiloguePart::kResidual, EpiloguePart::kRelu, EpiloguePart::kRelu6,
                                           EpiloguePart::kGelu,  EpiloguePart::kGeluTanh, EpiloguePart::kSilu};

}  // namespace

const char* EpiloguePartName(EpiloguePart p) {
  switch (p) {
    case EpiloguePart::kBias: return "bias";
    case EpiloguePart::kScale: return "scale";
    case EpiloguePart::kShift: return "shift";
    case EpiloguePart::kResidual: return "residual";
    case EpiloguePart::kRelu: return "relu";
    case EpiloguePart::kRelu6: return "relu6";
    case EpiloguePart::kGelu: return "gelu";
    case EpiloguePart::kGeluTanh: return "gelu_tanh";
    case EpiloguePart::kSilu: return "silu";
  }
  return "?";
}

std::string EpiloguePartNames() {
  std::string names;
  for (EpiloguePart p : kEpilogueParts) names += std::string(names.empty() ? "" : ", ") + EpiloguePartName(p);
  return names;
}

bool Epilogue::Has(EpiloguePart p) const { return std::find(parts.begin(), parts.end(), p) != parts.end(); }

std::string Epilogue::Text() const {
  std::string text;
  for (EpiloguePart p : parts) text += std::string(text.empty() ? "" : ",") + EpiloguePartName(p);
  return text;
}

Result<Epilogue> ParseEpilogue(const std::string& text) {
  Epilogue e;
  if (text.empty() || text == "none") return e;
  const std::string list = text == "bias+relu" ? "bias,relu" : text;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    const auto* part = std::find_if(std::begin(kEpilogueParts), std::end(kEpilogueParts),
                                    [&](EpiloguePart p) { return name == EpiloguePartName(p); });
    if (part == std::end(kEpilogueParts)) {
      return MakeError(fmt::format("unknown epilogue '{}' in '{}' (expected none or parts separated by commas, "
                                   "applied in order: {})",
                                   name, text, EpiloguePartNames()));
    }
    if (e.Has(*part)) return MakeError(fmt::format("epilogue '{}' names {} twice", text, name));
    e.parts.push_back(*part);
    start = comma + 1;
  }
  return e;
}

void OperatorRegistry::Register(std::unique_ptr<OperatorDef> op) {
  AUTOTUNE_CHECK(!Find(op->Name()), "operator registered twice");
  ops_.push_back(std::move(op));
}

const OperatorDef* OperatorRegistry::Find(const std::string& name) const {
  for (const auto& op : ops_) {
    if (op->Name() == name) return op.get();
  }
  return nullptr;
}

std::vector<const OperatorDef*> OperatorRegistry::All() const {
  std::vector<const OperatorDef*> out;
  for (const auto& op : ops_) out.push_back(op.get());
  return out;
}

const OperatorRegistry& BuiltinOperators() {
  static const OperatorRegistry* registry = [] {
    auto* r = new OperatorRegistry();
    RegisterBuiltinOperators(*r);
    return r;
  }();
  return *registry;
}

namespace {

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

std::string ParamNames(const OperatorDef& op) {
  std::string out;
  for (const auto& p : op.Params()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

}  // namespace

Result<ShapeParams> ParseShape(const OperatorDef& op, const std::string& text) {
  const auto specs = op.Params();
  std::map<std::string, int64_t> given;
  std::string_view rest = text;
  if (Trim(text).empty()) return MakeError(fmt::format("empty shape for {} (expected {})", op.Name(), ParamNames(op)));
  // The loop below stops at the end of the text, so a trailing comma would pass unnoticed.
  if (Trim(text).back() == ',') return MakeError(fmt::format("trailing comma in shape '{}' (expected NAME=VALUE,...)", text));
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string item = Trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    size_t eq = item.find('=');
    if (item.empty() || eq == std::string::npos) {
      return MakeError(fmt::format("malformed shape item '{}' in '{}' (expected NAME=VALUE,...)", item, text));
    }
    std::string key = Trim(item.substr(0, eq));
    std::string val = Trim(item.substr(eq + 1));
    bool known = false;
    for (const auto& s : specs) known |= s.name == key;
    if (!known) {
      return MakeError(fmt::format("unknown shape parameter '{}' for {} (expected {})", key, op.Name(), ParamNames(op)));
    }
    if (given.count(key)) return MakeError(fmt::format("shape parameter '{}' given twice", key));
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(val.data(), val.data() + val.size(), v);
    if (val.empty() || ec != std::errc() || ptr != val.data() + val.size()) {
      return MakeError(fmt::format("shape parameter {}='{}' is not an integer", key, val));
    }
    // Far beyond any tensor dimension, and small enough that the operators' size arithmetic
    // (H + 2 * pad, dilation * (R - 1), ...) cannot overflow.
    constexpr int64_t kMaxShapeParam = (int64_t{1} << 31) - 1;
    if (v > kMaxShapeParam) {
      return MakeError(fmt::format("shape parameter {}={} is too large (at most {})", key, v, kMaxShapeParam));
    }
    given[key] = v;
  }
  ShapeParams out;
  for (const auto& s : specs) {
    auto it = given.find(s.name);
    if (it != given.end()) {
      out.emplace_back(s.name, it->second);
    } else if (s.default_value) {
      out.emplace_back(s.name, *s.default_value);
    } else {
      return MakeError(fmt::format("shape of {} is missing parameter {} (expected {})", op.Name(), s.name, ParamNames(op)));
    }
  }
  return out;
}

Result<Workload> MakeWorkload(const std::string& op_name, const std::string& shape, const std::string& epilogue,
                              const std::string& dtype) {
  const OperatorDef* op = BuiltinOperators().Find(op_name);
  if (!op) {
    std::string names;
    for (const auto* o : BuiltinOperators().All()) names += (names.empty() ? "" : ", ") + o->Name();
    return MakeError(fmt::format("unknown operator '{}' (known: {})", op_name, names));
  }
  auto params = ParseShape(*op, shape);
  if (!params) return params.error();
  if (auto ok = op->Validate(*params); !ok) return MakeError(fmt::format("impossible {} shape: {}", op_name, ok.error().message));
  auto ep = ParseEpilogue(epilogue);
  if (!ep) return ep.error();
  if (!ep->empty() && !op->TakesEpilogue()) return MakeError(fmt::format("operator {} takes no epilogue", op_name));
  AT_TRY(type, ParseNumberType(dtype));
  if (type.precision != Precision::kIEEE && !op->TakesPrecision()) {
    return MakeError(fmt::format("{} products are computed in float32 only (tf32 and 3xtf32 are for gemm, "
                                 "batch_matmul and conv1d/2d/3d)", op_name));
  }
  return op->Build(*params, *ep, type.element, type.precision);
}

std::string ShapeText(const ShapeParams& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += fmt::format("{}{}={}", i ? "," : "", shape[i].first, shape[i].second);
  return s;
}

double ShapeDistance(const ShapeParams& a, const ShapeParams& b) {
  double d = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    d += std::abs(std::log(static_cast<double>(std::max<int64_t>(a[i].second, 1))) -
                  std::log(static_cast<double>(std::max<int64_t>(b[i].second, 1))));
  }
  return d;
}

std::string CanonicalWorkloadText(const std::string& op, const ShapeParams& shape, const std::string& epilogue,
                                  const std::string& dtype) {
  const std::string type = dtype == "float32" || dtype.empty() ? "" : ":" + dtype;
  return op + "[" + ShapeText(shape) + "]" + (epilogue.empty() ? "" : "+" + epilogue) + type;
}

std::string Workload::CanonicalText() const {
  return CanonicalWorkloadText(op, shape, epilogue, TypeName());
}

std::string Workload::TypeName() const { return NumberType{output.dtype, precision}.Name(); }

std::string Workload::KeyText() const {
  return fmt::format("{};{};{}", CanonicalText(), DTypeName(output.dtype), layout);
}

std::string Workload::Key() const { return Sha256Hex(KeyText()); }

int64_t Workload::Param(const std::string& name) const {
  for (const auto& [k, v] : shape) {
    if (k == name) return v;
  }
  AUTOTUNE_CHECK(false, "workload has no such parameter");
  return 0;
}

std::vector<TensorSpec> Workload::Outputs() const {
  std::vector<TensorSpec> out = side_outputs;
  out.push_back(output);
  return out;
}

int64_t Workload::OutputElements() const {
  int64_t n = output.NumElements();
  for (const auto& t : side_outputs) n += t.NumElements();
  return n;
}

}  // namespace autotune::tir
