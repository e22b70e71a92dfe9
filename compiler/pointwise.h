// compiler/pointwise.h — a fused group of elementwise ops: its IR, the C++ loop the code
// generator writes for it, and the two ways to run it (compiled, or interpreted by eager
// ops, the reference and the fallback when there is no compiler).
//
// `((a*b + a) * 0.5 - b).relu().sigmoid()` is six eager ops: six passes over memory and
// five temporaries. As one group it is one loop that reads a and b once and writes the
// result once — what Inductor (and Triton under it) generates for a pointwise chain:
//
//   PointwiseProgram p;
//   int a = p.input(0, kFloat), b = p.input(1, kFloat);
//   int ab = p.binary(BinaryOp::Mul, a, b);
//   int t = p.binary(BinaryOp::Sub, p.binary(BinaryOp::Mul, p.binary(BinaryOp::Add, ab, a),
//                                            p.scalar(0.5)), b);
//   p.set_output(p.unary(UnaryOp::Sigmoid, p.unary(UnaryOp::Relu, t)));
//   CompiledPointwise fused = compile_pointwise(p);   // C++ -> shared object, cached
//   Tensor y = fused({x1, x2});                        // == interpret_pointwise(p, {x1, x2})
//
// The program is SSA: each step's operands are earlier steps, and each step has the dtype
// eager mode's op would give it (the builders ask core's type promotion), so the generated
// code casts exactly where eager's TensorIterator would. Each element is computed with the
// formulas eager's CPU kernels use (core/cpu/pointwise_formulas.h, embedded in the
// source), compiled with eager's flags (a Release build's). What can still differ is rounding
// between ops: in one loop the compiler may contract a*b + c into one fused multiply-add (one
// rounding where eager, storing a*b first, has two), so compiled agrees with eager to the dtype's
// tolerance, and bit for bit where no such pair meets. Broadcasting, strides and threads
// are TensorIterator's, as for any eager kernel: the generated function is the inner loop.
//
// Only the steps the output depends on are computed, and only the inputs it depends on
// are read and broadcast (the result has the shape eager's would). A reduction may end the
// group (Inductor's "reduction as the last op of a fused kernel"): the values are folded
// as they are computed, never stored, in the manner of eager's reduce kernel (16 lanes,
// per-thread partials combined in order; float sums accumulate in double throughout,
// where eager adds blocks of 1024 in float first), so sums agree to the dtype's tolerance.
//
// Invariants: steps only refer to earlier steps; a program has an output before it runs;
// Scalar steps are "wrapped numbers" (they never widen a tensor's dtype, as in x * 0.5).
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device_kernels.h"
#include "core/scalar.h"
#include "core/scalar_type.h"
#include "core/tensor.h"

namespace glass::compiler {

class KernelLibrary;

struct PointwiseProgram {
  struct Step {
    enum class Kind : uint8_t { Input, Scalar, Unary, Binary, Clamp, Where };
    Kind kind = Kind::Input;
    ScalarType dtype = ScalarType::Undefined;  // of this step's value
    std::array<int, 3> args{-1, -1, -1};       // operand steps
    UnaryOp unary{};
    BinaryOp binary{};
    int input = -1;                // Input: which tensor of the call
    Scalar value;                  // Scalar: 0.5 or 3, as in eager's x * 0.5 or i - 3
    std::optional<Scalar> lo, hi;  // Clamp's bounds
  };
  // A reduction of the output's value, the group's last op (sum, mean, amax, amin, prod
  // over `dims`, all of them when empty), as eager's sum(dims, keepdim) would take it.
  struct Reduction {
    ReduceOp op = ReduceOp::Sum;
    bool mean = false;  // sum, then divided by the count of each output's elements
    std::vector<int64_t> dims;
    bool keepdim = false;
  };
  std::vector<Step> steps;
  std::vector<ScalarType> inputs;  // the dtype each input tensor must have
  // Whether each input is 0-dim: promotion ranks a 0-dim tensor below one with dims
  // (x[5] f32 + y[] f64 is f32), so a program is built for one or the other.
  std::vector<bool> zero_dim_inputs;
  int output = -1;
  std::optional<Reduction> reduction;

  // Builders; each returns the new step's index and gives it the dtype eager's op gives
  // (found by running that op on empty stand-ins of its operands).
  int input(int index, ScalarType dtype, bool zero_dim = false);
  int scalar(const Scalar& value);  // a number in an op, as in x * 0.5 or i - 3
  int unary(UnaryOp op, int x);
  int binary(BinaryOp op, int a, int b);
  int clamp(int x, std::optional<Scalar> lo, std::optional<Scalar> hi);
  int where(int condition, int a, int b);
  void set_output(int step);
  // Ends the group with a reduction of the output step (floating point values only).
  void reduce(ReduceOp op, std::vector<int64_t> dims = {}, bool keepdim = false);
  void mean(std::vector<int64_t> dims = {}, bool keepdim = false);

  // The dtype of the output step's value, which a reduction keeps.
  ScalarType output_dtype() const;
  // The inputs the output depends on, in order: the kernel's operands 1, 2, ...
  std::vector<int> live_inputs() const;
  // The IR as text, one step per line: "%3 = mul(%0, %1) : float32".
  std::string to_string() const;
};

// The C++ source of the group's kernel: the embedded formulas, then
//   extern "C" void <name>(char** data, const int64_t* strides, int64_t n)
// TensorIterator's inner-loop signature (operand 0 the output, then the inputs), with a
// contiguous loop the compiler vectorizes and a strided one.
std::string emit_cpp(const PointwiseProgram& program, const std::string& name = "glass_kernel");
// Several groups in one source (one compiler run, one shared object): glass_kernel_0, ...
std::string emit_cpp(const std::vector<PointwiseProgram>& programs);

// A program compiled and loaded (from the kernel cache when it was built before).
class CompiledPointwise {
 public:
  CompiledPointwise(PointwiseProgram program, std::shared_ptr<KernelLibrary> library,
                    const std::string& symbol);
  // Runs the kernel over the broadcast shape of `inputs` on the CPU's thread pool; the
  // inputs must have the program's dtypes (and 0-dim-ness). Returns a new tensor. Not
  // differentiable yet: with grad mode on, an input that requires grad is an error.
  Tensor operator()(TensorList inputs) const;
  const PointwiseProgram& program() const { return program_; }
  const KernelLibrary& library() const { return *library_; }

 private:
  using Kernel = void(char** data, const int64_t* strides, int64_t n);
  // A reduction's fold: n values of a run into *acc (a double for sums of float).
  using Fold = void(char** data, const int64_t* strides, int64_t n, void* acc);
  Tensor reduce(TensorList inputs) const;
  PointwiseProgram program_;
  std::shared_ptr<KernelLibrary> library_;
  Kernel* kernel_ = nullptr;
  Fold* fold_ = nullptr;
  std::vector<int> live_inputs_;
};

// Generates, compiles (or loads from the cache) and binds. Throws glass::Error when there
// is no compiler (compiler::host_compiler().available()) or the source does not compile.
CompiledPointwise compile_pointwise(const PointwiseProgram& program);
// Many groups, one compiler run: what a graph's fused groups (and the tests) use.
std::vector<CompiledPointwise> compile_pointwise(const std::vector<PointwiseProgram>& programs);

// The same computation with eager ops, step by step: the reference the tests hold compiled
// code to, and what runs where no compiler is installed.
Tensor interpret_pointwise(const PointwiseProgram& program, TensorList inputs);

// The formulas every generated kernel starts with (built from core's headers at configure
// time; compiler/CMakeLists.txt).
const std::string& kernel_prelude();

}  // namespace glass::compiler
