// compiler/cpp_codegen.cpp — the C++ a fused pointwise group becomes (pointwise.h):
// TensorIterator's inner loop for the group, or its fold and reduction loops when a
// reduction ends it. Invariant: every expression is a call into core's per-element
// formulas (the prelude), with the casts eager's TensorIterator would make, so the only
// freedom left to the C++ compiler is how it schedules them.
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "compiler/pointwise.h"
#include "compiler/pointwise_detail.h"
#include "core/error.h"

namespace glass::compiler {

namespace detail {

// A literal that converts to exactly `v`: hexadecimal floating point is exact, and the
// values %a cannot spell (inf, nan) are named.
std::string literal(double v) {
  if (std::isnan(v)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v))
    return v > 0 ? "std::numeric_limits<double>::infinity()"
                 : "(-std::numeric_limits<double>::infinity())";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}
std::string literal(const Scalar& v) {
  if (v.is_floating_point()) return literal(v.toDouble());
  const int64_t i = v.toLong();
  // INT64_C(-9223372036854775808) is not a literal (its positive part overflows).
  if (i == std::numeric_limits<int64_t>::min()) return "(-INT64_C(9223372036854775807) - 1)";
  return "INT64_C(" + std::to_string(i) + ")";
}

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

}  // namespace detail

namespace {

using detail::c_type;
using detail::compute_dtype;
using detail::is_comparison_op;
using detail::Kind;
using detail::literal;
using detail::live_steps;
using detail::operand;
using detail::Step;

// formulas::<name>, in pointwise_formulas.h's spelling (UnaryOp's and BinaryOp's names).
std::string formula(UnaryOp op) {
  switch (op) {
    case UnaryOp::GeluTanh: return "gelu_tanh";
    default: return glass::to_string(op);
  }
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
      const auto bound = [&](const Scalar& v) {
        return "static_cast<" + T + ">(" + literal(v) + ")";
      };
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

}  // namespace glass::compiler
