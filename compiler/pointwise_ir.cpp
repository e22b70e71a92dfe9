// compiler/pointwise_ir.cpp — building and printing a fused pointwise group (pointwise.h).
// Invariant: the dtype rules live in core — each builder runs the eager op itself on
// empty stand-ins of its operands and takes the dtype it returns, so a step's dtype is
// the one eager mode would give (promotion, 0-dim ranks, the default float dtype).
#include <sstream>

#include "compiler/pointwise.h"
#include "compiler/pointwise_detail.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/type_promotion.h"

namespace glass::compiler {

// [SECTION] shared with the generator and the runner (pointwise_detail.h) ----------------

namespace detail {

const char* c_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    case ScalarType::Int64: return "int64_t";
    case ScalarType::Int32: return "int32_t";
    case ScalarType::Bool: return "bool";
    default: break;
  }
  GLASS_CHECK(false, "compile: a fused group cannot hold ", dtype_name(t),
              " values yet (float32, float64, int64, int32 and bool)");
  return "";
}

bool is_comparison_op(BinaryOp op) {
  return is_comparison(op) && op != BinaryOp::LogicalAnd && op != BinaryOp::LogicalOr;
}

Tensor stand_in(const PointwiseProgram& p, const Step& s) {
  if (s.kind == Kind::Scalar) return wrapped_scalar_tensor(s.value);
  const bool zero_dim = s.kind == Kind::Input && p.zero_dim_inputs[s.input];
  return zero_dim ? empty({}, TensorOptions(s.dtype)) : empty({0}, TensorOptions(s.dtype));
}

ScalarType compute_dtype(const PointwiseProgram& p, const Step& s) {
  if (s.kind == Kind::Binary &&
      (s.binary == BinaryOp::LogicalAnd || s.binary == BinaryOp::LogicalOr))
    return ScalarType::Bool;
  if (s.kind == Kind::Binary && is_comparison_op(s.binary))
    return result_type(stand_in(p, p.steps[s.args[0]]), stand_in(p, p.steps[s.args[1]]));
  return s.dtype;
}

std::vector<bool> live_steps(const PointwiseProgram& p) {
  std::vector<bool> live(p.steps.size(), false);
  live[p.output] = true;
  for (int i = p.output; i >= 0; --i)
    if (live[i])
      for (int a : p.steps[i].args)
        if (a >= 0) live[a] = true;
  return live;
}

}  // namespace detail

using detail::Kind;
using detail::stand_in;
using detail::Step;

// [SECTION] building -------------------------------------------------------------------

namespace {

void check_operand(const PointwiseProgram& p, int step, const char* what) {
  GLASS_CHECK(step >= 0 && step < static_cast<int>(p.steps.size()), "PointwiseProgram::", what,
              ": operand %", step, " is not an earlier step (there are ", p.steps.size(), ")");
}

int push(PointwiseProgram& p, const Step& s) {
  detail::c_type(s.dtype);  // a dtype the generator cannot write is an error now, not later
  p.steps.push_back(s);
  return static_cast<int>(p.steps.size()) - 1;
}

}  // namespace

int PointwiseProgram::input(int index, ScalarType dtype, bool zero_dim) {
  GLASS_CHECK(index >= 0, "PointwiseProgram::input: index must be >= 0, got ", index);
  detail::c_type(dtype);
  if (static_cast<size_t>(index) >= inputs.size()) {
    inputs.resize(static_cast<size_t>(index) + 1, ScalarType::Undefined);
    zero_dim_inputs.resize(static_cast<size_t>(index) + 1, false);
  }
  GLASS_CHECK(inputs[index] == ScalarType::Undefined ||
                  (inputs[index] == dtype && zero_dim_inputs[index] == zero_dim),
              "PointwiseProgram::input: input ", index, " was declared ", dtype_name(inputs[index]),
              zero_dim_inputs[index] ? " 0-dim" : "", ", now ", dtype_name(dtype),
              zero_dim ? " 0-dim" : "");
  inputs[index] = dtype;
  zero_dim_inputs[index] = zero_dim;
  Step s;
  s.kind = Kind::Input;
  s.dtype = dtype;
  s.input = index;
  return push(*this, s);
}

int PointwiseProgram::scalar(const Scalar& value) {
  GLASS_CHECK(!value.is_boolean(), "PointwiseProgram::scalar: a bool scalar cannot be fused yet");
  Step s;
  s.kind = Kind::Scalar;
  // A wrapped number: its dtype never widens a tensor operand's (result_type knows).
  s.dtype = value.is_floating_point() ? ScalarType::Float64 : ScalarType::Int64;
  s.value = value;
  steps.push_back(s);
  return static_cast<int>(steps.size()) - 1;
}

int PointwiseProgram::unary(UnaryOp op, int x) {
  check_operand(*this, x, "unary");
  const Step& in = steps[x];
  GLASS_CHECK(in.kind != Kind::Scalar, "PointwiseProgram::unary: ", glass::to_string(op),
              " of a scalar is a constant; fold it before building the group");
  GLASS_CHECK(op != UnaryOp::LogicalNot, "compile: logical_not cannot be fused yet");
  GLASS_CHECK(in.dtype != ScalarType::Bool, "compile: ", glass::to_string(op),
              " of a bool tensor cannot be fused yet");
  Step s;
  s.kind = Kind::Unary;
  s.unary = op;
  s.args[0] = x;
  NoGradGuard no_grad;                                    // the stand-ins never need a graph
  s.dtype = ops::unary(op, stand_in(*this, in)).dtype();  // exp(int) is the default float
  return push(*this, s);
}

int PointwiseProgram::binary(BinaryOp op, int a, int b) {
  check_operand(*this, a, "binary");
  check_operand(*this, b, "binary");
  GLASS_CHECK(steps[a].kind != Kind::Scalar || steps[b].kind != Kind::Scalar,
              "PointwiseProgram::binary: ", glass::to_string(op),
              " of two scalars is a constant; fold it before building the group");
  if (op != BinaryOp::LogicalAnd && op != BinaryOp::LogicalOr && !detail::is_comparison_op(op))
    GLASS_CHECK(steps[a].dtype != ScalarType::Bool && steps[b].dtype != ScalarType::Bool,
                "compile: ", glass::to_string(op), " of a bool tensor cannot be fused yet");
  Step s;
  s.kind = Kind::Binary;
  s.binary = op;
  s.args = {a, b, -1};
  NoGradGuard no_grad;
  s.dtype = ops::binary(op, stand_in(*this, steps[a]), stand_in(*this, steps[b])).dtype();
  return push(*this, s);
}

int PointwiseProgram::clamp(int x, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  check_operand(*this, x, "clamp");
  GLASS_CHECK(lo || hi, "PointwiseProgram::clamp: give at least one of lo and hi");
  GLASS_CHECK(steps[x].kind != Kind::Scalar && steps[x].dtype != ScalarType::Bool,
              "compile: clamp needs a numeric tensor operand");
  Step s;
  s.kind = Kind::Clamp;
  s.args[0] = x;
  s.lo = lo;
  s.hi = hi;
  NoGradGuard no_grad;
  s.dtype = glass::clamp(stand_in(*this, steps[x]), lo, hi).dtype();
  return push(*this, s);
}

int PointwiseProgram::where(int condition, int a, int b) {
  check_operand(*this, condition, "where");
  check_operand(*this, a, "where");
  check_operand(*this, b, "where");
  GLASS_CHECK(steps[condition].dtype == ScalarType::Bool && steps[condition].kind != Kind::Scalar,
              "PointwiseProgram::where: the condition must be a bool step, got ",
              dtype_name(steps[condition].dtype));
  Step s;
  s.kind = Kind::Where;
  s.args = {condition, a, b};
  NoGradGuard no_grad;
  s.dtype = glass::where(stand_in(*this, steps[condition]), stand_in(*this, steps[a]),
                         stand_in(*this, steps[b]))
                .dtype();
  return push(*this, s);
}

void PointwiseProgram::set_output(int step) {
  check_operand(*this, step, "set_output");
  GLASS_CHECK(steps[step].kind != Kind::Scalar, "PointwiseProgram::set_output: the output must ",
              "be a tensor step, not the scalar %", step);
  output = step;
}

void PointwiseProgram::reduce(ReduceOp op, std::vector<int64_t> dims, bool keepdim) {
  GLASS_CHECK(output >= 0, "PointwiseProgram::reduce: set the output step first");
  GLASS_CHECK(!reduction, "PointwiseProgram::reduce: the group already ends with a reduction");
  GLASS_CHECK(is_floating_type(steps[output].dtype), "compile: a fused ", glass::to_string(op),
              " of ", dtype_name(steps[output].dtype), " values cannot be fused yet (float32 and ",
              "float64 only)");
  reduction = Reduction{op, false, std::move(dims), keepdim};
}

void PointwiseProgram::mean(std::vector<int64_t> dims, bool keepdim) {
  reduce(ReduceOp::Sum, std::move(dims), keepdim);
  reduction->mean = true;
}

ScalarType PointwiseProgram::output_dtype() const {
  GLASS_CHECK(output >= 0, "PointwiseProgram: no output set");
  return steps[output].dtype;
}

std::vector<int> PointwiseProgram::live_inputs() const {
  GLASS_CHECK(output >= 0, "PointwiseProgram: no output set");
  const std::vector<bool> live = detail::live_steps(*this);
  std::vector<bool> used(inputs.size(), false);
  for (size_t i = 0; i < steps.size(); ++i)
    if (live[i] && steps[i].kind == Kind::Input) used[steps[i].input] = true;
  std::vector<int> result;
  for (size_t k = 0; k < used.size(); ++k)
    if (used[k]) result.push_back(static_cast<int>(k));
  return result;
}

// [SECTION] printing -------------------------------------------------------------------

namespace {

std::string scalar_text(const Scalar& v) {
  std::ostringstream out;
  if (v.is_floating_point())
    out << v.toDouble();  // shortest round trip is not needed: the text is for reading
  else
    out << v.toLong();
  return out.str();
}

}  // namespace

std::string PointwiseProgram::to_string() const {
  std::ostringstream out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    out << "%" << i << " = ";
    switch (s.kind) {
      case Kind::Input:
        out << "input(" << s.input << (zero_dim_inputs[s.input] ? ", 0-dim" : "") << ")";
        break;
      case Kind::Scalar: out << "scalar(" << scalar_text(s.value) << ")"; break;
      case Kind::Unary: out << glass::to_string(s.unary) << "(%" << s.args[0] << ")"; break;
      case Kind::Binary:
        out << glass::to_string(s.binary) << "(%" << s.args[0] << ", %" << s.args[1] << ")";
        break;
      case Kind::Clamp:
        out << "clamp(%" << s.args[0] << ", " << (s.lo ? scalar_text(*s.lo) : "None") << ", "
            << (s.hi ? scalar_text(*s.hi) : "None") << ")";
        break;
      case Kind::Where:
        out << "where(%" << s.args[0] << ", %" << s.args[1] << ", %" << s.args[2] << ")";
        break;
    }
    out << " : " << dtype_name(s.dtype)
        << (static_cast<int>(i) == output && !reduction ? "  <- output" : "") << "\n";
  }
  if (reduction) {
    out << "%" << steps.size() << " = "
        << (reduction->mean ? "mean" : glass::to_string(reduction->op)) << "(%" << output
        << ", dims=[";
    for (size_t d = 0; d < reduction->dims.size(); ++d)
      out << (d ? ", " : "") << reduction->dims[d];
    out << "], keepdim=" << (reduction->keepdim ? "true" : "false")
        << ") : " << dtype_name(steps[output].dtype) << "  <- output\n";
  }
  return out.str();
}

}  // namespace glass::compiler
