// compiler/pointwise.cpp — building, printing, generating, compiling and interpreting a
// fused pointwise group (pointwise.h). Invariant: the dtype rules live in core (the
// builders ask result_type with stand-in tensors), so a step's dtype is eager's.
#include "compiler/pointwise.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "compiler/kernel_cache.h"
#include "core/error.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
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
    out << " : " << dtype_name(s.dtype) << (static_cast<int>(i) == output ? "  <- output" : "")
        << "\n";
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
    for (size_t i = 0; i < p.steps.size(); ++i) {
      const Step& s = p.steps[i];
      if (!live[i] || s.kind == Kind::Scalar) continue;
      if (s.kind == Kind::Input) {
        const int op = operand_of[s.input];
        src << indent << "const " << c_type(s.dtype) << " v" << i << " = ";
        if (contiguous)
          src << "in" << op << "[" << index << "];\n";
        else
          src << "*reinterpret_cast<const " << c_type(s.dtype) << "*>(data[" << op << "] + "
              << index << " * strides[" << op << "]);\n";
      } else {
        src << indent << statement(p, static_cast<int>(i)) << "\n";
      }
    }
    src << indent << dest << " = v" << p.output << ";\n";
  };

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
  live_inputs_ = program_.live_inputs();
}

Tensor CompiledPointwise::operator()(TensorList inputs) const {
  check_call(program_, inputs, "compiled pointwise group");
  for (size_t k = 0; k < inputs.size(); ++k)
    GLASS_CHECK(inputs[k].device().is_cpu(), "compiled pointwise group: input ", k, " is on ",
                inputs[k].device(), "; this kernel was compiled for the CPU");
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
  return values[p.output];
}

}  // namespace glass::compiler
