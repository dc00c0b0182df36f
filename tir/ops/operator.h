// Operators: a name, shape parameters with defaults, validation, and the compute definition that
// makes a Workload. Adding an operator is one file in tir/ops/ plus a line in RegisterBuiltinOperators.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tir/ops/workload.h"
#include "support/result.h"

namespace autotune::tir {

struct ParamSpec {
  std::string name;
  std::optional<int64_t> default_value;  // nullopt: required
  std::string help;
};

// One step of an operator's fused elementwise tail. Bias, scale and shift take a per-channel input
// (scale and shift: a folded batch norm), residual an input of the output's shape added in; the rest
// are activations: relu, relu6 (clamp to [0, 6]), gelu (erf form), gelu_tanh (tanh approximation),
// silu (x * sigmoid(x)).
enum class EpiloguePart : uint8_t { kBias, kScale, kShift, kResidual, kRelu, kRelu6, kGelu, kGeluTanh, kSilu };
const char* EpiloguePartName(EpiloguePart p);
// Every part's name, comma-separated, in declaration order.
std::string EpiloguePartNames();

// The fused elementwise tail of an operator: its parts, applied in the order given.
struct Epilogue {
  std::vector<EpiloguePart> parts;
  bool empty() const { return parts.empty(); }
  bool Has(EpiloguePart p) const;
  std::string Text() const;  // "" or the parts' names joined by commas, in order ("bias,relu")
};
// "none", "" or parts separated by commas (each at most once); "bias+relu" is read as "bias,relu".
Result<Epilogue> ParseEpilogue(const std::string& text);

class OperatorDef {
 public:
  virtual ~OperatorDef() = default;
  virtual std::string Name() const = 0;
  virtual std::string Summary() const = 0;
  virtual std::vector<ParamSpec> Params() const = 0;
  // Checks a complete parameter set; returns an error naming what is impossible.
  virtual Result<void> Validate(const ShapeParams& params) const = 0;
  // Whether --epilogue applies (contractions); row operators (softmax, norms) take none.
  virtual bool TakesEpilogue() const { return true; }
  // Whether its float32 products may be computed at another precision than ieee (tir/ops/precision.h).
  virtual bool TakesPrecision() const { return false; }
  // Builds the workload of validated parameters. Its tensors hold `dtype` (float32, float16 or
  // bfloat16); products accumulate and epilogues compute in float32, rounded once into the output.
  // `precision` is ieee unless TakesPrecision().
  virtual Workload Build(const ShapeParams& params, const Epilogue& epilogue, DType dtype,
                         Precision precision) const = 0;
};

class OperatorRegistry {
 public:
  void Register(std::unique_ptr<OperatorDef> op);
  const OperatorDef* Find(const std::string& name) const;
  std::vector<const OperatorDef*> All() const;

 private:
  std::vector<std::unique_ptr<OperatorDef>> ops_;
};

void RegisterBuiltinOperators(OperatorRegistry& registry);
// The registry with the built-in operators (built on first use by RegisterBuiltinOperators).
const OperatorRegistry& BuiltinOperators();

// Parses "M=128,N=64,K=32" against the operator's parameters: unknown, duplicate, malformed and
// missing parameters are errors; defaults fill in the rest; the result is in canonical order.
Result<ShapeParams> ParseShape(const OperatorDef& op, const std::string& text);

// Everything a command needs: look up the operator, parse and validate the shape and the number type
// (float32, float16, bfloat16, tf32 or 3xtf32: ParseNumberType), build.
Result<Workload> MakeWorkload(const std::string& op, const std::string& shape, const std::string& epilogue = "",
                              const std::string& dtype = "float32");



}  // namespace autotune::tir
