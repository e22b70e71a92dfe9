// compiler/pointwise.cpp — building, printing, generating, compiling and interpreting a
// fused pointwise group (pointwise.h). Invariant: the dtype rules live in core (the
// builders ask result_type with stand-in tensors), so a step's dtype is eager's.
#include "compiler/pointwise.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <sstream>

#include "compiler/kernel_cache.h"
#include "core/error.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/ops/reduce.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "core/tensor_iterator.h"
#include "core/type_promotion.h"

namespace glass::compiler {
namespace {

using Step = PointwiseProgram::Step;
using Kind = Step::Kind;

// Unary ops that compute in floating point even on integer inputs (eager promotes them).
bool is_float_op(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Abs:
    case UnaryOp::Relu:
    case UnaryOp::Sign:
    case UnaryOp::LogicalNot: return false;
    default: return true;
  }
}

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

// formulas::<name>, in pointwise_formulas.h's spelling (UnaryOp's and BinaryOp's names).
std::string formula(UnaryOp op) {
  switch (op) {
    case UnaryOp::GeluTanh: return "gelu_tanh";
    default: return glass::to_string(op);
  }
}

bool is_comparison_op(BinaryOp op) {
  return is_comparison(op) && op != BinaryOp::LogicalAnd && op != BinaryOp::LogicalOr;
}

const char* comparison_operator(BinaryOp op) {
  switch (op) {
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    default: return "";
  }
}

// A literal that converts to exactly `v` (hexadecimal floating point is exact).
std::string literal(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}
std::string literal(const Scalar& v) {
  if (v.is_floating_point()) return literal(v.toDouble());
  return "INT64_C(" + std::to_string(v.toLong()) + ")";
}

}  // namespace

// [SECTION] building ---------------------------------------------------------------------

namespace {

// What a step looks like to core's type promotion: an empty tensor of its dtype, or the
// wrapped number a Python float becomes.
Tensor stand_in(const Step& s) {
  if (s.kind == Kind::Scalar) return wrapped_scalar_tensor(s.value);
  return empty({0}, TensorOptions(s.dtype));
}

void check_operand(const PointwiseProgram& p, int step, const char* what) {
  GLASS_CHECK(step >= 0 && step < static_cast<int>(p.steps.size()), "PointwiseProgram::", what,
              ": operand %", step, " is not an earlier step (there are ", p.steps.size(), ")");
}

}  // namespace

int PointwiseProgram::input(int index, ScalarType dtype) {
  GLASS_CHECK(index >= 0, "PointwiseProgram::input: index must be >= 0, got ", index);
  c_type(dtype);
  if (static_cast<size_t>(index) >= inputs.size())
    inputs.resize(static_cast<size_t>(index) + 1, ScalarType::Undefined);
  GLASS_CHECK(inputs[index] == ScalarType::Undefined || inputs[index] == dtype,
              "PointwiseProgram::input: input ", index, " was ", dtype_name(inputs[index]),
              ", now ", dtype_name(dtype));
  inputs[index] = dtype;
  Step s;
  s.kind = Kind::Input;
  s.dtype = dtype;
  s.input = index;
  steps.push_back(s);
  return static_cast<int>(steps.size()) - 1;
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
  GLASS_CHECK(in.dtype != ScalarType::Bool && op != UnaryOp::LogicalNot,
              "compile: ", glass::to_string(op), " of a bool tensor cannot be fused yet");
  Step s;
  s.kind = Kind::Unary;
  s.unary = op;
  s.args[0] = x;
  s.dtype = is_float_op(op) && is_integral_type(in.dtype, false) ? ScalarType::Float32 : in.dtype;
  steps.push_back(s);
  return static_cast<int>(steps.size()) - 1;
}

int PointwiseProgram::binary(BinaryOp op, int a, int b) {
  check_operand(*this, a, "binary");
  check_operand(*this, b, "binary");
  GLASS_CHECK(steps[a].kind != Kind::Scalar || steps[b].kind != Kind::Scalar,
              "PointwiseProgram::binary: ", glass::to_string(op),
              " of two scalars is a constant; fold it before building the group");
  Step s;
  s.kind = Kind::Binary;
  s.binary = op;
  s.args = {a, b, -1};
  if (op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr) {
    s.dtype = ScalarType::Bool;
  } else {
    const ScalarType common = result_type(stand_in(steps[a]), stand_in(steps[b]));
    GLASS_CHECK(common != ScalarType::Bool || is_comparison_op(op),
                "compile: ", glass::to_string(op), " of bool tensors cannot be fused yet");
    if (is_comparison_op(op))
      s.dtype = ScalarType::Bool;
    else if (op == BinaryOp::Div && is_integral_type(common, true))
      s.dtype = ScalarType::Float32;  // true division
    else
      s.dtype = common;
  }
  steps.push_back(s);
  return static_cast<int>(steps.size()) - 1;
}

int PointwiseProgram::clamp(int x, std::optional<double> lo, std::optional<double> hi) {
  check_operand(*this, x, "clamp");
  GLASS_CHECK(lo || hi, "PointwiseProgram::clamp: give at least one of lo and hi");
  GLASS_CHECK(steps[x].kind != Kind::Scalar && steps[x].dtype != ScalarType::Bool,
              "compile: clamp needs a numeric tensor operand");
  Step s;
  s.kind = Kind::Clamp;
  s.args[0] = x;
  s.lo = lo;
  s.hi = hi;
  Tensor t = stand_in(steps[x]);
  ScalarType dtype = t.dtype();
  for (const auto& bound : {lo, hi})
    if (bound) dtype = result_type(empty({0}, TensorOptions(dtype)), Scalar(*bound));
  s.dtype = dtype;
  steps.push_back(s);
  return static_cast<int>(steps.size()) - 1;
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
  s.dtype = result_type(stand_in(steps[a]), stand_in(steps[b]));
  steps.push_back(s);
  return static_cast<int>(steps.size()) - 1;
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

std::string PointwiseProgram::to_string() const {
  std::ostringstream out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    out << "%" << i << " = ";
    switch (s.kind) {
      case Kind::Input: out << "input(" << s.input << ")"; break;
      case Kind::Scalar:
        out << "scalar(";
        if (s.value.is_floating_point())
          out << s.value.toDouble();
        else
          out << s.value.toLong();
        out << ")";
        break;
      case Kind::Unary: out << glass::to_string(s.unary) << "(%" << s.args[0] << ")"; break;
      case Kind::Binary:
        out << glass::to_string(s.binary) << "(%" << s.args[0] << ", %" << s.args[1] << ")";
        break;
      case Kind::Clamp:
        out << "clamp(%" << s.args[0] << ", " << (s.lo ? std::to_string(*s.lo) : "None") << ", "
            << (s.hi ? std::to_string(*s.hi) : "None") << ")";
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

// [SECTION] generating C++ -----------------------------------------------------------------

namespace {

// Step i's value converted to `to`, as TensorIterator converts an operand to the op's
// computation dtype (a scalar becomes a literal of that type).
std::string operand(const PointwiseProgram& p, int i, ScalarType to) {
  const Step& s = p.steps[i];
  if (s.kind == Kind::Scalar)
    return std::string("static_cast<") + c_type(to) + ">(" + literal(s.value) + ")";  // exact
  const std::string v = "v" + std::to_string(i);
  if (s.dtype == to) return v;
  return std::string("static_cast<") + c_type(to) + ">(" + v + ")";
}

// The computation dtype of a binary or where step: its operands' common dtype.
ScalarType compute_dtype(const PointwiseProgram& p, const Step& s) {
  if (s.kind == Kind::Binary &&
      (s.binary == BinaryOp::LogicalAnd || s.binary == BinaryOp::LogicalOr))
    return ScalarType::Bool;
  if (s.kind == Kind::Binary && is_comparison_op(s.binary))
    return result_type(stand_in(p.steps[s.args[0]]), stand_in(p.steps[s.args[1]]));
  return s.dtype;
}

// `const T vI = <expression>;` for step i (inputs are loaded by the caller).
std::string statement(const PointwiseProgram& p, int i) {
  const Step& s = p.steps[i];
  const std::string lhs =
      std::string("const ") + c_type(s.dtype) + " v" + std::to_string(i) + " = ";
  const std::string T = c_type(s.dtype);
  switch (s.kind) {
    case Kind::Input:
    case Kind::Scalar: return "";
    case Kind::Unary:
      return lhs + "f::" + formula(s.unary) + "<" + T + ">(" + operand(p, s.args[0], s.dtype) +
             ");";
    case Kind::Binary: {
      const ScalarType c = compute_dtype(p, s);
      const std::string a = operand(p, s.args[0], c), b = operand(p, s.args[1], c);
      if (is_comparison_op(s.binary))
        return lhs + "(" + a + " " + comparison_operator(s.binary) + " " + b + ");";
      if (s.binary == BinaryOp::LogicalAnd) return lhs + "(" + a + " && " + b + ");";
      if (s.binary == BinaryOp::LogicalOr) return lhs + "(" + a + " || " + b + ");";
      if (s.binary == BinaryOp::Pow && is_integral_type(c, false))
        return lhs + "glass::scalar_ops::int_pow<" + T + ">(" + a + ", " + b + ");";
      return lhs + "f::" + glass::to_string(s.binary) + "<" + T + ">(" + a + ", " + b + ");";
    }
    case Kind::Clamp: {
      const std::string x = operand(p, s.args[0], s.dtype);
      const auto bound = [&](double v) { return "static_cast<" + T + ">(" + literal(v) + ")"; };
      if (s.lo && s.hi)
        return lhs + "f::clamp<" + T + ">(" + x + ", " + bound(*s.lo) + ", " + bound(*s.hi) + ");";
      if (s.lo) return lhs + "f::clamp_min<" + T + ">(" + x + ", " + bound(*s.lo) + ");";
      return lhs + "f::clamp_max<" + T + ">(" + x + ", " + bound(*s.hi) + ");";
    }
    case Kind::Where:
      return lhs + "f::select<" + T + ">(" + operand(p, s.args[0], ScalarType::Bool) + ", " +
             operand(p, s.args[1], s.dtype) + ", " + operand(p, s.args[2], s.dtype) + ");";
  }
  return "";
}

}  // namespace

namespace {

// Which steps the output depends on (an input the output ignores is not even read).
std::vector<bool> live_steps(const PointwiseProgram& p) {
  std::vector<bool> live(p.steps.size(), false);
  live[p.output] = true;
  for (int i = p.output; i >= 0; --i)
    if (live[i])
      for (int a : p.steps[i].args)
        if (a >= 0) live[a] = true;
  return live;
}

}  // namespace

std::vector<int> PointwiseProgram::live_inputs() const {
  GLASS_CHECK(output >= 0, "PointwiseProgram: no output set");
  const std::vector<bool> live = live_steps(*this);
  std::vector<bool> used(inputs.size(), false);
  for (size_t i = 0; i < steps.size(); ++i)
    if (live[i] && steps[i].kind == Kind::Input) used[steps[i].input] = true;
  std::vector<int> result;
  for (size_t k = 0; k < used.size(); ++k)
    if (used[k]) result.push_back(static_cast<int>(k));
  return result;
}

namespace {

// The statements that compute element `index`: loads (typed pointers `inK` when
// contiguous, byte strides otherwise), the live steps, then `store`.
void emit_element(std::ostringstream& src, const PointwiseProgram& p, const std::vector<bool>& live,
                  const std::vector<int>& operand_of, bool contiguous, const std::string& indent,
                  const std::string& index, const std::string& store) {
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    if (!live[i] || s.kind == Kind::Scalar) continue;
    if (s.kind == Kind::Input) {
      const int op = operand_of[s.input];
      src << indent << "const " << c_type(s.dtype) << " v" << i << " = ";
      if (contiguous)
        src << "in" << op << "[" << index << "];\n";
      else
        src << "*reinterpret_cast<const " << c_type(s.dtype) << "*>(data[" << op << "] + " << index
            << " * strides[" << op << "]);\n";
    } else {
      src << indent << statement(p, static_cast<int>(i)) << "\n";
    }
  }
  src << indent << store << "\n";
}

// A group that ends with a reduction: NAME_fold folds a run of values into an accumulator
// (16 lanes when the inputs are contiguous, so the loop vectorizes without reassociating),
// NAME is TensorIterator's loop, folding a run into its output (stride 0) or combining
// runs elementwise (an outer reduction), as core/cpu/cpu_reduce.cpp does for eager mode.
void emit_reduction(std::ostringstream& src, const PointwiseProgram& p,
                    const std::vector<bool>& live, const std::vector<int>& inputs,
                    const std::vector<int>& operand_of, const std::string& name) {
  const PointwiseProgram::Reduction& r = *p.reduction;
  const std::string T = c_type(p.output_dtype());
  const bool widen = (r.op == ReduceOp::Sum || r.op == ReduceOp::Prod) && T == "float";
  const std::string A = widen ? "double" : T;  // float sums accumulate in double, as eager's
  const std::string identity = r.op == ReduceOp::Sum    ? "0"
                               : r.op == ReduceOp::Prod ? "1"
                               : r.op == ReduceOp::Max
                                   ? "-std::numeric_limits<" + A + ">::infinity()"
                                   : "std::numeric_limits<" + A + ">::infinity()";
  // combine(a, b), NaN winning in max and min as in eager's reduce kernel.
  const auto combine = [&](const std::string& a, const std::string& b) {
    switch (r.op) {
      case ReduceOp::Sum: return "(" + a + " + " + b + ")";
      case ReduceOp::Prod: return "(" + a + " * " + b + ")";
      case ReduceOp::Max:
        return "((" + a + " != " + a + " || " + a + " > " + b + ") ? " + a + " : " + b + ")";
      case ReduceOp::Min:
        return "((" + a + " != " + a + " || " + a + " < " + b + ") ? " + a + " : " + b + ")";
    }
    return std::string();
  };
  const std::string value = "static_cast<" + A + ">(v" + std::to_string(p.output) + ")";

  src << "extern \"C\" void " << name
      << "_fold(char** data, const int64_t* strides, int64_t n, void* acc_io) {\n"
      << "  " << A << " acc = *static_cast<" << A << "*>(acc_io);\n"
      << "  int64_t i = 0;\n";
  if (r.op == ReduceOp::Sum || r.op == ReduceOp::Prod) {
    src << "  if (n >= 32";
    for (int k : inputs)
      src << " && strides[" << operand_of[k] << "] == sizeof(" << c_type(p.inputs[k]) << ")";
    src << ") {\n";
    for (int k : inputs)
      src << "    const " << c_type(p.inputs[k]) << "* __restrict__ in" << operand_of[k]
          << " = reinterpret_cast<const " << c_type(p.inputs[k]) << "*>(data[" << operand_of[k]
          << "]);\n";
    src << "    " << A << " lanes[16];\n"
        << "    for (int l = 0; l < 16; ++l) lanes[l] = " << identity << ";\n"
        << "    for (; i + 16 <= n; i += 16) {\n"
        << "      for (int64_t l = 0; l < 16; ++l) {\n";
    emit_element(src, p, live, operand_of, true, "        ", "i + l",
                 "lanes[l] = " + combine("lanes[l]", value) + ";");
    src << "      }\n    }\n"
        << "    for (int l = 0; l < 16; ++l) acc = " << combine("acc", "lanes[l]") << ";\n"
        << "  }\n";
  }
  src << "  for (; i < n; ++i) {\n";
  emit_element(src, p, live, operand_of, false, "    ", "i",
               "acc = " + combine("acc", value) + ";");
  src << "  }\n  *static_cast<" << A << "*>(acc_io) = acc;\n}\n";

  src << "extern \"C\" void " << name << "(char** data, const int64_t* strides, int64_t n) {\n"
      << "  if (strides[0] == 0) {  // an inner reduction: the run folds into one output\n"
      << "    " << T << "* out = reinterpret_cast<" << T << "*>(data[0]);\n"
      << "    " << A << " acc = static_cast<" << A << ">(*out);\n"
      << "    " << name << "_fold(data, strides, n, &acc);\n"
      << "    *out = static_cast<" << T << ">(acc);\n"
      << "    return;\n  }\n"
      << "  for (int64_t i = 0; i < n; ++i) {  // an outer one: combine elementwise\n";
  const std::string o = "*reinterpret_cast<" + T + "*>(data[0] + i * strides[0])";
  emit_element(src, p, live, operand_of, false, "    ", "i",
               o + " = static_cast<" + T + ">(" +
                   combine("static_cast<" + A + ">(" + o + ")", value) + ");");
  src << "  }\n}\n";
}

// One kernel function (the prelude comes once per source, before all of them). Its
// operands: 0 the output, then the live inputs in input order.
void emit_kernel(std::ostringstream& src, const PointwiseProgram& p, const std::string& name) {
  GLASS_CHECK(p.output >= 0, "emit_cpp: the program has no output");
  for (size_t k = 0; k < p.inputs.size(); ++k)
    GLASS_CHECK(p.inputs[k] != ScalarType::Undefined, "emit_cpp: input ", k, " is never declared");
  const std::vector<bool> live = live_steps(p);
  const std::vector<int> inputs = p.live_inputs();
  std::vector<int> operand_of(p.inputs.size(), -1);
  for (size_t j = 0; j < inputs.size(); ++j) operand_of[inputs[j]] = static_cast<int>(j) + 1;
  src << "\n// " << name << ":\n";
  std::istringstream ir(p.to_string());
  for (std::string line; std::getline(ir, line);) src << "//   " << line << "\n";

  // The statements for element `index`: loads (typed pointers when contiguous, byte
  // strides otherwise), the live steps, and the store to `dest`.
  const auto body = [&](bool contiguous, const std::string& indent, const std::string& index,
                        const std::string& dest) {
    emit_element(src, p, live, operand_of, contiguous, indent, index,
                 dest + " = v" + std::to_string(p.output) + ";");
  };
  if (p.reduction) return emit_reduction(src, p, live, inputs, operand_of, name);

  const std::string out_t = c_type(p.output_dtype());
  src << "extern \"C\" void " << name << "(char** data, const int64_t* strides, int64_t n) {\n"
      << "  // Every operand contiguous: typed pointers, a loop the compiler vectorizes.\n"
      << "  if (strides[0] == sizeof(" << out_t << ")";
  for (int k : inputs)
    src << " && strides[" << operand_of[k] << "] == sizeof(" << c_type(p.inputs[k]) << ")";
  src << ") {\n    " << out_t << "* __restrict__ out = reinterpret_cast<" << out_t
      << "*>(data[0]);\n";
  for (int k : inputs)
    src << "    const " << c_type(p.inputs[k]) << "* __restrict__ in" << operand_of[k]
        << " = reinterpret_cast<const " << c_type(p.inputs[k]) << "*>(data[" << operand_of[k]
        << "]);\n";
  src << "    if (n * static_cast<int64_t>(sizeof(" << out_t
      << ")) < glass::cpu::stream::kStreamBytes) {\n"
      << "      for (int64_t i = 0; i < n; ++i) {\n";
  body(true, "        ", "i", "out[i]");
  src << "      }\n      return;\n    }\n"
      << "    // A long result: blocks computed into a stack buffer, streamed out without\n"
      << "    // reading the destination first (Note [Streaming stores], stream_store.h).\n"
      << "    constexpr int64_t kBlock = glass::cpu::stream::kBlockBytes / sizeof(" << out_t
      << ");\n"
      << "    int64_t i = 0;\n"
      << "    for (; i < n && reinterpret_cast<uintptr_t>(out + i) % 64 != 0; ++i) {\n";
  body(true, "      ", "i", "out[i]");
  src << "    }\n    alignas(64) " << out_t << " buf[kBlock];\n"
      << "    for (; i + kBlock <= n; i += kBlock) {\n"
      << "      for (int64_t j = 0; j < kBlock; ++j) {\n";
  body(true, "        ", "i + j", "buf[j]");
  src << "      }\n"
      << "      glass::cpu::stream::stream_copy(reinterpret_cast<char*>(out + i),\n"
      << "                                      reinterpret_cast<const char*>(buf),\n"
      << "                                      glass::cpu::stream::kBlockBytes);\n"
      << "    }\n"
      << "    for (; i < n; ++i) {\n";
  body(true, "      ", "i", "out[i]");
  src << "    }\n    glass::cpu::stream::stream_fence();\n    return;\n  }\n"
      << "  // Anything else (broadcast, transposed, sliced): byte strides per operand.\n"
      << "  for (int64_t i = 0; i < n; ++i) {\n";
  body(false, "    ", "i",
       std::string("*reinterpret_cast<") + out_t + "*>(data[0] + i * strides[0])");
  src << "  }\n}\n";
}

std::string source_header() {
  return "// Generated by glasstorch's compiler (compiler/pointwise.cpp).\n" + kernel_prelude() +
         "\nnamespace f = glass::cpu::formulas;\n";
}

}  // namespace

std::string emit_cpp(const PointwiseProgram& p, const std::string& name) {
  std::ostringstream src;
  src << source_header();
  emit_kernel(src, p, name);
  return src.str();
}

std::string emit_cpp(const std::vector<PointwiseProgram>& programs) {
  std::ostringstream src;
  src << source_header();
  for (size_t i = 0; i < programs.size(); ++i)
    emit_kernel(src, programs[i], "glass_kernel_" + std::to_string(i));
  return src.str();
}

// [SECTION] running -------------------------------------------------------------------------

namespace {

void check_call(const PointwiseProgram& p, TensorList inputs, const char* who) {
  GLASS_CHECK(p.output >= 0, who, ": the program has no output");
  GLASS_CHECK(inputs.size() == p.inputs.size(), who, ": the group takes ", p.inputs.size(),
              " inputs, got ", inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    GLASS_CHECK(inputs[k].defined(), who, ": input ", k, " is undefined");
    GLASS_CHECK(inputs[k].dtype() == p.inputs[k], who, ": input ", k, " must be ",
                dtype_name(p.inputs[k]), ", got ", dtype_name(inputs[k].dtype()));
  }
}

}  // namespace

CompiledPointwise::CompiledPointwise(PointwiseProgram program,
                                     std::shared_ptr<KernelLibrary> library,
                                     const std::string& symbol)
    : program_(std::move(program)), library_(std::move(library)) {
  kernel_ = library_->function<Kernel>(symbol);
  if (program_.reduction) fold_ = library_->function<Fold>(symbol + "_fold");
  live_inputs_ = program_.live_inputs();
}

namespace {

// The value a reduction's output starts from (eager's identity(), core/ops/reduce.cpp).
double reduction_identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return 0;
    case ReduceOp::Prod: return 1;
    case ReduceOp::Max: return -std::numeric_limits<double>::infinity();
    case ReduceOp::Min: return std::numeric_limits<double>::infinity();
  }
  return 0;
}

// Folds per-thread partial results in the order of their slices, so that a given thread
// count always gives the same bits (as eager's full reductions do). A: the accumulator.
template <class A>
void fold_in_parallel(const TensorIterator& iter, ReduceOp op,
                      void (*fold)(char**, const int64_t*, int64_t, void*)) {
  const auto combine = [op](A a, A b) -> A {
    switch (op) {
      case ReduceOp::Sum: return a + b;
      case ReduceOp::Prod: return a * b;
      case ReduceOp::Max: return (a != a || a > b) ? a : b;
      case ReduceOp::Min: return (a != a || a < b) ? a : b;
    }
    return a;
  };
  std::mutex m;
  std::vector<std::pair<int64_t, A>> partials;
  parallel_for(0, iter.numel(), 65536, [&](int64_t b, int64_t e) {
    A local = static_cast<A>(reduction_identity(op));
    iter.serial_for_each(
        [&](char** data, const int64_t* strides, int64_t n) { fold(data, strides, n, &local); }, b,
        e);
    std::lock_guard<std::mutex> lock(m);
    partials.emplace_back(b, local);
  });
  std::sort(partials.begin(), partials.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  A total = static_cast<A>(reduction_identity(op));
  for (const auto& [begin, partial] : partials) total = combine(total, partial);
  if (iter.dtype(0) == kFloat)
    *reinterpret_cast<float*>(iter.data_ptr(0)) = static_cast<float>(total);
  else
    *reinterpret_cast<double*>(iter.data_ptr(0)) = static_cast<double>(total);
}

}  // namespace

Tensor CompiledPointwise::reduce(TensorList inputs) const {
  const PointwiseProgram::Reduction& r = *program_.reduction;
  const char* name = r.mean ? "mean" : glass::to_string(r.op);
  // The value's shape: what its live inputs broadcast to.
  DimVector shape;
  bool first = true;
  for (int k : live_inputs_) {
    shape = first ? DimVector(inputs[k].sizes()) : broadcast_shapes(shape, inputs[k].sizes(), name);
    first = false;
  }
  const int64_t ndim = static_cast<int64_t>(shape.size());
  std::vector<bool> mask(static_cast<size_t>(ndim), r.dims.empty());
  for (int64_t d : r.dims) {
    const int64_t w = wrap_dim(d, ndim, name);
    if (ndim == 0) continue;
    GLASS_CHECK(!mask[w], name, "(): dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  DimVector keep = shape, dropped;
  int64_t count = 1;
  for (int64_t d = 0; d < ndim; ++d) {
    if (mask[d]) {
      count *= shape[d];
      keep[d] = 1;
    } else {
      dropped.push_back(shape[d]);
    }
  }
  if (r.op == ReduceOp::Max || r.op == ReduceOp::Min)
    for (int64_t d = 0; d < ndim; ++d)
      GLASS_CHECK(!(mask[d] && shape[d] == 0), name, "(): expected reduction dim ", d,
                  " to have non-zero size (the value has shape ", IntArrayRef(shape), ")");
  const ScalarType dtype = program_.output_dtype();
  Tensor out = empty(keep, TensorOptions(dtype));
  detail::fill_into(out, Scalar(reduction_identity(r.op)));
  TensorIteratorConfig config(name);
  config.add_output(out);
  for (int k : live_inputs_) config.add_const_input(inputs[k]);
  config.is_reduction(true).declare_static_common_dtype(dtype);
  TensorIterator iter = config.build();
  const bool widen = r.op == ReduceOp::Sum || r.op == ReduceOp::Prod;
  if (iter.is_scalar(0) && iter.numel() >= 65536 && get_num_threads() > 1 &&
      !in_parallel_region()) {
    if (dtype == kFloat && !widen)
      fold_in_parallel<float>(iter, r.op, fold_);
    else
      fold_in_parallel<double>(iter, r.op, fold_);
  } else {
    Kernel* kernel = kernel_;
    iter.for_each(
        [kernel](char** data, const int64_t* strides, int64_t n) { kernel(data, strides, n); });
  }
  if (r.mean) out = div(out, static_cast<double>(count));  // eager's mean: sum / count
  return r.keepdim ? out : out.view(dropped);
}

Tensor CompiledPointwise::operator()(TensorList inputs) const {
  check_call(program_, inputs, "compiled pointwise group");
  for (size_t k = 0; k < inputs.size(); ++k)
    GLASS_CHECK(inputs[k].device().is_cpu(), "compiled pointwise group: input ", k, " is on ",
                inputs[k].device(), "; this kernel was compiled for the CPU");
  if (program_.reduction) return reduce(inputs);
  TensorIteratorConfig config("fused");
  config.add_output(Tensor());
  for (int k : live_inputs_) config.add_const_input(inputs[k]);
  config.declare_static_output_dtype(program_.output_dtype());
  config.declare_static_common_dtype(program_.output_dtype());
  TensorIterator iter = config.build();
  Kernel* kernel = kernel_;
  iter.for_each(
      [kernel](char** data, const int64_t* strides, int64_t n) { kernel(data, strides, n); });
  return iter.output(0);
}

namespace {

// GLASS_COMPILE_DEBUG=1 (like TORCH_LOGS=output_code): the generated kernels on stderr,
// each with its IR, without the prelude every source starts with.
std::shared_ptr<KernelLibrary> build(const std::string& source) {
  if (const char* debug = std::getenv("GLASS_COMPILE_DEBUG"); debug && std::string(debug) == "1") {
    const size_t kernels = source.find("\n// glass_kernel");
    std::fprintf(stderr, "[glass compile] generated C++ (after the %zu-byte prelude):\n%s\n",
                 kernels, source.substr(kernels == std::string::npos ? 0 : kernels + 1).c_str());
  }
  return load_or_compile(source);
}

}  // namespace

CompiledPointwise compile_pointwise(const PointwiseProgram& program) {
  return CompiledPointwise(program, build(emit_cpp(program)), "glass_kernel");
}

std::vector<CompiledPointwise> compile_pointwise(const std::vector<PointwiseProgram>& programs) {
  std::shared_ptr<KernelLibrary> library = build(emit_cpp(programs));
  std::vector<CompiledPointwise> compiled;
  for (size_t i = 0; i < programs.size(); ++i)
    compiled.emplace_back(programs[i], library, "glass_kernel_" + std::to_string(i));
  return compiled;
}

Tensor interpret_pointwise(const PointwiseProgram& p, TensorList inputs) {
  check_call(p, inputs, "interpret_pointwise");
  std::vector<Tensor> values(p.steps.size());
  const auto value = [&](int i) -> Tensor {
    const Step& s = p.steps[i];
    return s.kind == Kind::Scalar ? wrapped_scalar_tensor(s.value) : values[i];
  };
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    switch (s.kind) {
      case Kind::Input: values[i] = inputs[s.input]; break;
      case Kind::Scalar: break;
      case Kind::Unary: values[i] = ops::unary(s.unary, value(s.args[0])); break;
      case Kind::Binary:
        values[i] = ops::binary(s.binary, value(s.args[0]), value(s.args[1]));
        break;
      case Kind::Clamp: {
        std::optional<Scalar> lo, hi;
        if (s.lo) lo = Scalar(*s.lo);
        if (s.hi) hi = Scalar(*s.hi);
        values[i] = glass::clamp(value(s.args[0]), lo, hi);
        break;
      }
      case Kind::Where:
        values[i] = glass::where(value(s.args[0]), value(s.args[1]), value(s.args[2]));
        break;
    }
  }
  if (!p.reduction) return values[p.output];
  const PointwiseProgram::Reduction& r = *p.reduction;
  if (r.mean) return glass::mean(values[p.output], r.dims, r.keepdim);
  return ops::reduce(r.op, values[p.output], r.dims, r.keepdim, std::nullopt);
}

}  // namespace glass::compiler
