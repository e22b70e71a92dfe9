// compiler/cuda_codegen.cpp — the CUDA C++ a fused pointwise group becomes (cuda_pointwise.h).
// Invariant: every expression is a call of the device functor eager's CUDA kernel uses for
// that op (cuda/kernels/pointwise_ops.cuh), with the casts eager's TensorIterator would
// make, and every global access goes through a gptr, so the simulator sees all of them.
#include <sstream>

#include "compiler/cuda_pointwise.h"
#include "compiler/pointwise_detail.h"
#include "core/error.h"

namespace glass::compiler {
namespace {

using detail::c_type;
using detail::compute_dtype;
using detail::is_comparison_op;
using detail::Kind;
using detail::literal;
using detail::live_steps;
using detail::operand;
using detail::Step;

// The eager kernel's launch shape (cuda/kernels/elementwise.cuh): 128 threads a block, 16
// elements a thread, 128 apart, so a warp's 32 threads touch 32 neighbours at once.
constexpr int kThreads = 128;
constexpr int kElementsPerThread = 16;

// The functor launch_unary (cuda/kernels/pointwise.cu) picks for `op` on values of type t.
std::string unary_functor(UnaryOp op, ScalarType t) {
  const std::string T = c_type(t);
  if (t == ScalarType::Bool) {
    if (op == UnaryOp::LogicalNot) return "LogicalNotOp{}";
    if (op == UnaryOp::Sign) return "BoolIdentityOp{}";
  } else if (is_integral_type(t, false)) {
    switch (op) {
      case UnaryOp::Neg: return "NegOp<" + T + ">{}";
      case UnaryOp::Abs: return "AbsOp<" + T + ">{}";
      case UnaryOp::Relu: return "ReluOp<" + T + ">{}";
      case UnaryOp::Sign: return "SignOp<" + T + ">{}";
      default: break;
    }
  } else {
    switch (op) {
      case UnaryOp::Neg: return "NegOp<" + T + ">{}";
      case UnaryOp::Abs: return "FAbsOp<" + T + ">{}";
      case UnaryOp::Exp: return "ExpOp<" + T + ">{}";
      case UnaryOp::Log: return "LogOp<" + T + ">{}";
      case UnaryOp::Log1p: return "Log1pOp<" + T + ">{}";
      case UnaryOp::Sqrt: return "SqrtOp<" + T + ">{}";
      case UnaryOp::Rsqrt: return "RsqrtOp<" + T + ">{}";
      case UnaryOp::Sin: return "SinOp<" + T + ">{}";
      case UnaryOp::Cos: return "CosOp<" + T + ">{}";
      case UnaryOp::Tanh: return "TanhOp<" + T + ">{}";
      case UnaryOp::Sigmoid: return "SigmoidOp<" + T + ">{}";
      case UnaryOp::Relu: return "ReluOp<" + T + ">{}";
      case UnaryOp::Gelu: return "GeluOp<" + T + ">{}";
      case UnaryOp::GeluTanh: return "GeluTanhOp<" + T + ">{}";
      case UnaryOp::Sign: return "SignOp<" + T + ">{}";
      case UnaryOp::LogicalNot: break;
    }
  }
  GLASS_CHECK(false, "emit_cuda: ", glass::to_string(op), " has no CUDA functor for ",
              dtype_name(t));
  return "";
}

// The functor launch_binary picks for an arithmetic `op` computed in type c.
std::string binary_functor(BinaryOp op, ScalarType c) {
  if (op == BinaryOp::LogicalAnd) return "AndOp{}";
  if (op == BinaryOp::LogicalOr) return "OrOp{}";
  if (c == ScalarType::Bool) {  // PyTorch's Bool arithmetic
    switch (op) {
      case BinaryOp::Add:
      case BinaryOp::Maximum: return "OrOp{}";
      case BinaryOp::Mul:
      case BinaryOp::Minimum: return "AndOp{}";
      case BinaryOp::Pow: return "BoolPowOp{}";
      default: break;
    }
    GLASS_CHECK(false, "emit_cuda: ", glass::to_string(op), " has no CUDA functor for bool");
  }
  const std::string C = c_type(c);
  switch (op) {
    case BinaryOp::Add: return "AddOp<" + C + ">{}";
    case BinaryOp::Sub: return "SubOp<" + C + ">{}";
    case BinaryOp::Mul: return "MulOp<" + C + ">{}";
    case BinaryOp::Div: return "DivOp<" + C + ">{}";
    case BinaryOp::Pow: return "PowOp<" + C + ">{}";
    case BinaryOp::Maximum: return "MaximumOp<" + C + ">{}";
    case BinaryOp::Minimum: return "MinimumOp<" + C + ">{}";
    case BinaryOp::Eq: return "EqOp<" + C + ">{}";
    case BinaryOp::Ne: return "NeOp<" + C + ">{}";
    case BinaryOp::Lt: return "LtOp<" + C + ">{}";
    case BinaryOp::Le: return "LeOp<" + C + ">{}";
    case BinaryOp::Gt: return "GtOp<" + C + ">{}";
    case BinaryOp::Ge: return "GeOp<" + C + ">{}";
    case BinaryOp::LogicalAnd: return "AndOp{}";
    case BinaryOp::LogicalOr: return "OrOp{}";
  }
  return "";
}

// `const T vI = <expression>;` for step i (inputs are loaded by the caller).
std::string statement(const PointwiseProgram& p, int i) {
  const Step& s = p.steps[i];
  const std::string T = c_type(s.dtype);
  const std::string lhs = "const " + T + " v" + std::to_string(i) + " = ";
  switch (s.kind) {
    case Kind::Input:
    case Kind::Scalar: return "";
    case Kind::Unary:
      return lhs + unary_functor(s.unary, s.dtype) + "(" + operand(p, s.args[0], s.dtype) + ");";
    case Kind::Binary: {
      // Logical ops read their operands as bool; the others in the common dtype.
      const bool logical = s.binary == BinaryOp::LogicalAnd || s.binary == BinaryOp::LogicalOr;
      const ScalarType c = logical ? ScalarType::Bool : compute_dtype(p, s);
      return lhs + binary_functor(s.binary, c) + "(" + operand(p, s.args[0], c) + ", " +
             operand(p, s.args[1], c) + ");";
    }
    case Kind::Clamp: {
      const std::string x = operand(p, s.args[0], s.dtype);
      const auto bound = [&](const Scalar& v) {
        return "static_cast<" + T + ">(" + literal(v) + ")";
      };
      if (s.lo && s.hi)
        return lhs + "ClampOp<" + T + ">{" + bound(*s.lo) + ", " + bound(*s.hi) + "}(" + x + ");";
      if (s.lo) return lhs + "ClampMinOp<" + T + ">{" + bound(*s.lo) + "}(" + x + ");";
      return lhs + "ClampMaxOp<" + T + ">{" + bound(*s.hi) + "}(" + x + ");";
    }
    case Kind::Where:  // as where_kernel: a copy of the chosen value, no arithmetic
      return lhs + "(" + operand(p, s.args[0], ScalarType::Bool) + " ? " +
             operand(p, s.args[1], s.dtype) + " : " + operand(p, s.args[2], s.dtype) + ");";
  }
  return "";
}

// The statements for element `i` of a thread: loads, the live steps, the store.
void emit_element(std::ostringstream& src, const PointwiseProgram& p, const std::vector<bool>& live,
                  const std::vector<int>& operand_of, bool flat) {
  const std::string indent = "    ";
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    if (!live[i] || s.kind == Kind::Scalar) continue;
    if (s.kind == Kind::Input) {
      const int k = operand_of[s.input];
      const std::string T = c_type(s.dtype);
      src << indent << "const " << T << " v" << i << " = ";
      if (flat)
        src << "in" << k << "[i];\n";
      else
        src << "gptr_cast<const " << T << ">(in" << k << " + off[" << k << "])[0];\n";
    } else {
      src << indent << statement(p, static_cast<int>(i)) << "\n";
    }
  }
  const std::string out_t = c_type(p.output_dtype());
  if (flat)
    src << indent << "out[i] = v" << p.output << ";\n";
  else
    src << indent << "gptr_cast<" << out_t << ">(out + off[0])[0] = v" << p.output << ";\n";
}

void emit_kernel(std::ostringstream& src, const PointwiseProgram& p, int index) {
  GLASS_CHECK(p.output >= 0, "emit_cuda: the program has no output");
  GLASS_CHECK(!p.reduction, "emit_cuda: group ", index, " ends in a reduction; CUDA groups are ",
              "elementwise (eager's reduce kernel runs the reduction)");
  const std::vector<bool> live = live_steps(p);
  const std::vector<int> inputs = p.live_inputs();
  std::vector<int> operand_of(p.inputs.size(), -1);
  for (size_t j = 0; j < inputs.size(); ++j) operand_of[inputs[j]] = static_cast<int>(j) + 1;
  const int operands = static_cast<int>(inputs.size()) + 1;
  const std::string name = "glass_cuda_kernel_" + std::to_string(index);
  const std::string out_t = c_type(p.output_dtype());

  src << "\n// " << name << ":\n";
  std::istringstream ir(p.to_string());
  for (std::string line; std::getline(ir, line);) src << "//   " << line << "\n";
  const std::string loop =
      "  int64_t i = int64_t(blockIdx.x) * (kThreads * kElementsPerThread) + threadIdx.x;\n"
      "  for (int k = 0; k < kElementsPerThread && i < n; ++k, i += kThreads) {\n";
  // Strided operands: byte offsets from TensorIterator's metadata.
  // extern "C": the names NVRTC's module exports, and dlsym()-free in the simulator's build.
  src << "extern \"C\" __global__ void " << name << "(int64_t n, Offsets<" << operands
      << "> calc, gptr<char> out";
  for (int k = 1; k < operands; ++k) src << ", gptr<const char> in" << k;
  src << ") {\n" << loop << "    int64_t off[" << operands << "];\n    calc.get(i, off);\n";
  emit_element(src, p, live, operand_of, false);
  src << "  }\n}\n";
  // Every operand one contiguous run: typed pointers, element i at index i.
  src << "extern \"C\" __global__ void " << name << "_flat(int64_t n, gptr<" << out_t << "> out";
  for (int k : inputs) src << ", gptr<const " << c_type(p.inputs[k]) << "> in" << operand_of[k];
  src << ") {\n" << loop;
  emit_element(src, p, live, operand_of, true);
  src << "  }\n}\n";
}

void emit_launcher(std::ostringstream& src, const PointwiseProgram& p, int index) {
  const std::vector<int> inputs = p.live_inputs();
  const int operands = static_cast<int>(inputs.size()) + 1;
  const std::string id = std::to_string(index);
  const std::string out_t = c_type(p.output_dtype());
  src << "\nextern \"C\" void glass_cuda_launch_" << id
      << "(int64_t n, int ndim, const int64_t* sizes, const int64_t* strides,\n"
      << "                                  char* const* data, void* stream) {\n"
      << "  using namespace glass::cuda::GLASS_KERNEL_NS::generated;\n"
      << "  const glass::cuda::Dim3 grid(static_cast<unsigned>((n + kThreads * "
         "kElementsPerThread - 1) /\n"
      << "                                                    (kThreads * kElementsPerThread)));\n"
      << "  const glass::cuda::Dim3 block(kThreads);\n"
      << "  if (ndim < 0) {\n"
      << "    glass::cuda::launch_kernel(\"fused_" << id << "\", glass_cuda_kernel_" << id
      << "_flat, grid, block, 0, stream, n,\n"
      << "                               reinterpret_cast<" << out_t << "*>(data[0])";
  for (int j = 1; j < operands; ++j)
    src << ",\n                               reinterpret_cast<const "
        << c_type(p.inputs[inputs[j - 1]]) << "*>(data[" << j << "])";
  src << ");\n    return;\n  }\n"
      << "  Offsets<" << operands << "> calc;\n"
      << "  calc.ndim = ndim;\n"
      << "  for (int d = 0; d < ndim; ++d) {\n"
      << "    calc.sizes[d] = sizes[d];\n"
      << "    for (int k = 0; k < " << operands << "; ++k) calc.strides[d][k] = strides[d * "
      << operands << " + k];\n"
      << "  }\n"
      << "  glass::cuda::launch_kernel(\"fused_" << id << "\", glass_cuda_kernel_" << id
      << ", grid, block, 0, stream, n, calc,\n"
      << "                             data[0]";
  for (int j = 1; j < operands; ++j)
    src << ",\n                             static_cast<const char*>(data[" << j << "])";
  src << ");\n}\n";
}

}  // namespace

std::string emit_cuda(const std::vector<PointwiseProgram>& programs) {
  std::ostringstream src;
  src << "// Generated by glasstorch's compiler (compiler/cuda_codegen.cpp): CUDA C++ in the\n"
         "// project's kernel convention (cuda/kernel.h), with eager's device functors.\n"
         "#include <cstdint>\n"
         "#include <limits>\n\n"
         "#include \"cuda/kernel.h\"\n"
         "#include \"cuda/kernels/pointwise_ops.cuh\"\n\n"
         "namespace glass::cuda::GLASS_KERNEL_NS::generated {\n\n"
         "inline constexpr int kThreads = "
      << kThreads << ";\ninline constexpr int kElementsPerThread = " << kElementsPerThread
      << ";\n\n"
         "// Byte offsets of element i in each operand: the address formula over TensorIterator's\n"
         "// broadcast, coalesced shape (dim 0 innermost), as cuda/kernels/offset_calculator.cuh.\n"
         "template <int N>\n"
         "struct Offsets {\n"
         "  int64_t ndim = 0;  // int64_t throughout: the host fills it as an array of int64_t\n"
         "  int64_t sizes[16] = {};\n"
         "  int64_t strides[16][N] = {};\n"
         "  __device__ void get(int64_t linear, int64_t (&off)[N]) const {\n"
         "    for (int k = 0; k < N; ++k) off[k] = 0;\n"
         "    for (int d = 0; d < ndim; ++d) {\n"
         "      const int64_t index = linear % sizes[d];\n"
         "      linear /= sizes[d];\n"
         "      for (int k = 0; k < N; ++k) off[k] += index * strides[d][k];\n"
         "    }\n"
         "  }\n"
         "};\n";
  for (size_t i = 0; i < programs.size(); ++i) emit_kernel(src, programs[i], static_cast<int>(i));
  src << "\n}  // namespace glass::cuda::GLASS_KERNEL_NS::generated\n";
  // The launchers are host code, for the simulator's build; NVRTC compiles device code only
  // (on a GPU the compiler launches the kernels through the runtime, cuda_pointwise_run.cpp).
  src << "\n#ifndef __CUDACC_RTC__\n";
  for (size_t i = 0; i < programs.size(); ++i) emit_launcher(src, programs[i], static_cast<int>(i));
  src << "#endif  // !__CUDACC_RTC__\n";
  return src.str();
}

}  // namespace glass::compiler
