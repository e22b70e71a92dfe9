// cuda/kernels/pointwise.cu — fill, copy, unary and binary ops on the device.
//
// The host half of each entry turns the iterator's runtime dtypes and op enum into one
// kernel instantiation (elementwise.cuh + pointwise_ops.cuh) and launches it on the
// current stream of the iterator's device; it returns as soon as the launch is queued.
// Compiled twice: by the host compiler for the simulated GPU (namespace sim) and, where
// nvcc exists, for a real GPU (namespace gpu).
//
// Invariant: arguments are what core/device_kernels.h promises (validated, outputs
// allocated, inputs in the computation dtype), and nothing here blocks the host.
#include <type_traits>

#include "core/device_kernels.h"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/kernels/kernels.h"
#include "cuda/kernels/pointwise_ops.cuh"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

template <class Out, class T, class F>
void run_binary(TensorIterator& iter, const char* op, F f) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  const KernelInput<T> a = kernel_input<T>(iter, 1), b = kernel_input<T>(iter, 2);
  const gptr<char> out(iter.data_ptr(0));
  const bool flat = operand_is_flat(iter, 0, sizeof(Out)) &&
                    (a.is_value || operand_is_flat(iter, 1, sizeof(T))) &&
                    (b.is_value || operand_is_flat(iter, 2, sizeof(T)));
  const std::string name = kernel_name(op, scalar_type_of<T>);
  if (flat) {
    launch_kernel(name.c_str(), binary_flat_kernel<Out, T, F>, elementwise_grid(n),
                  Dim3(kElementwiseThreads), 0, stream_for(iter), n, out, a.data, a.is_value,
                  a.value, b.data, b.is_value, b.value, f);
  } else {
    launch_kernel(name.c_str(), binary_kernel<Out, T, F>, elementwise_grid(n),
                  Dim3(kElementwiseThreads), 0, stream_for(iter), n,
                  make_offset_calculator<3>(iter), out, a.data, a.is_value, a.value, b.data,
                  b.is_value, b.value, f);
  }
}

}  // namespace

void launch_fill(TensorIterator& iter, const Scalar& value) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  dispatch_dtype(iter.dtype(0), "fill_", [&]<class T>() {
    const std::string name = kernel_name("fill", scalar_type_of<T>);
    const gptr<char> out(iter.data_ptr(0));
    if (operand_is_flat(iter, 0, sizeof(T))) {
      launch_kernel(name.c_str(), fill_flat_kernel<T>, elementwise_grid(n),
                    Dim3(kElementwiseThreads), 0, stream_for(iter), n, out, value.to<T>());
    } else {
      launch_kernel(name.c_str(), fill_kernel<T>, elementwise_grid(n), Dim3(kElementwiseThreads), 0,
                    stream_for(iter), n, make_offset_calculator<1>(iter), out, value.to<T>());
    }
  });
}

void launch_copy(TensorIterator& iter) {
  dispatch_dtype(iter.dtype(0), "copy_", [&]<class To>() {
    dispatch_dtype(iter.dtype(1), "copy_",
                   [&]<class From>() { run_unary<To, From>(iter, "copy", CastOp<To, From>{}); });
  });
}

void launch_unary(TensorIterator& iter, UnaryOp op) {
  const char* name = to_string(op);
  dispatch_dtype(iter.common_dtype(), name, [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      switch (op) {
        case UnaryOp::LogicalNot: return run_unary<bool, bool>(iter, name, LogicalNotOp{});
        case UnaryOp::Sign: return run_unary<bool, bool>(iter, name, BoolIdentityOp{});
        default: GLASS_INTERNAL_ASSERT(false, name, " reached the CUDA kernel with Bool");
      }
    } else if constexpr (std::is_integral_v<T>) {
      switch (op) {
        case UnaryOp::Neg: return run_unary<T, T>(iter, name, NegOp<T>{});
        case UnaryOp::Abs: return run_unary<T, T>(iter, name, AbsOp<T>{});
        case UnaryOp::Relu: return run_unary<T, T>(iter, name, ReluOp<T>{});
        case UnaryOp::Sign: return run_unary<T, T>(iter, name, SignOp<T>{});
        default:
          GLASS_INTERNAL_ASSERT(false, name, " reached the CUDA kernel with an integer dtype");
      }
    } else {
      switch (op) {
        case UnaryOp::Neg: return run_unary<T, T>(iter, name, NegOp<T>{});
        case UnaryOp::Abs: return run_unary<T, T>(iter, name, FAbsOp<T>{});
        case UnaryOp::Exp: return run_unary<T, T>(iter, name, ExpOp<T>{});
        case UnaryOp::Log: return run_unary<T, T>(iter, name, LogOp<T>{});
        case UnaryOp::Log1p: return run_unary<T, T>(iter, name, Log1pOp<T>{});
        case UnaryOp::Sqrt: return run_unary<T, T>(iter, name, SqrtOp<T>{});
        case UnaryOp::Rsqrt: return run_unary<T, T>(iter, name, RsqrtOp<T>{});
        case UnaryOp::Sin: return run_unary<T, T>(iter, name, SinOp<T>{});
        case UnaryOp::Cos: return run_unary<T, T>(iter, name, CosOp<T>{});
        case UnaryOp::Tanh: return run_unary<T, T>(iter, name, TanhOp<T>{});
        case UnaryOp::Sigmoid: return run_unary<T, T>(iter, name, SigmoidOp<T>{});
        case UnaryOp::Relu: return run_unary<T, T>(iter, name, ReluOp<T>{});
        case UnaryOp::Gelu: return run_unary<T, T>(iter, name, GeluOp<T>{});
        case UnaryOp::GeluTanh: return run_unary<T, T>(iter, name, GeluTanhOp<T>{});
        case UnaryOp::Sign: return run_unary<T, T>(iter, name, SignOp<T>{});
        case UnaryOp::LogicalNot: break;
      }
      GLASS_INTERNAL_ASSERT(false, name, " has no floating-point CUDA kernel");
    }
  });
}

void launch_binary(TensorIterator& iter, BinaryOp op) {
  const char* name = to_string(op);
  if (op == BinaryOp::LogicalAnd) return run_binary<bool, bool>(iter, name, AndOp{});
  if (op == BinaryOp::LogicalOr) return run_binary<bool, bool>(iter, name, OrOp{});
  dispatch_dtype(iter.common_dtype(), name, [&]<class T>() {
    if (is_comparison(op)) {
      switch (op) {
        case BinaryOp::Eq: return run_binary<bool, T>(iter, name, EqOp<T>{});
        case BinaryOp::Ne: return run_binary<bool, T>(iter, name, NeOp<T>{});
        case BinaryOp::Lt: return run_binary<bool, T>(iter, name, LtOp<T>{});
        case BinaryOp::Le: return run_binary<bool, T>(iter, name, LeOp<T>{});
        case BinaryOp::Gt: return run_binary<bool, T>(iter, name, GtOp<T>{});
        case BinaryOp::Ge: return run_binary<bool, T>(iter, name, GeOp<T>{});
        default: GLASS_INTERNAL_ASSERT(false, name, " is not a comparison");
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      switch (op) {
        case BinaryOp::Add:
        case BinaryOp::Maximum: return run_binary<bool, bool>(iter, name, OrOp{});
        case BinaryOp::Mul:
        case BinaryOp::Minimum: return run_binary<bool, bool>(iter, name, AndOp{});
        case BinaryOp::Pow: return run_binary<bool, bool>(iter, name, BoolPowOp{});
        default: GLASS_INTERNAL_ASSERT(false, name, " reached the CUDA kernel with Bool");
      }
    } else {
      switch (op) {
        case BinaryOp::Add: return run_binary<T, T>(iter, name, AddOp<T>{});
        case BinaryOp::Sub: return run_binary<T, T>(iter, name, SubOp<T>{});
        case BinaryOp::Mul: return run_binary<T, T>(iter, name, MulOp<T>{});
        case BinaryOp::Div: return run_binary<T, T>(iter, name, DivOp<T>{});
        case BinaryOp::Pow: return run_binary<T, T>(iter, name, PowOp<T>{});
        case BinaryOp::Maximum: return run_binary<T, T>(iter, name, MaximumOp<T>{});
        case BinaryOp::Minimum: return run_binary<T, T>(iter, name, MinimumOp<T>{});
        default: GLASS_INTERNAL_ASSERT(false, name, " has no arithmetic CUDA kernel");
      }
    }
  });
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
