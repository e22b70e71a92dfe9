// cuda/kernels/pointwise_select.cu — clamp, where and masked_fill_ on the device.
//
// The elementwise ops that choose between values rather than compute new ones. clamp
// reuses the unary kernels of elementwise.cuh with a clamp functor; where and
// masked_fill_ have three inputs, so they get their own (small) kernels here, written
// like binary_kernel: TensorIterator's metadata by value (OffsetCalculator), each
// thread kElementsPerThread elements kElementwiseThreads apart, and any input that is a
// CPU scalar passed as a value (Note [CPU scalars in device iterations]).
//
// Invariant: the same results as the CPU kernels (core/cpu/cpu_pointwise.cpp) bit for
// bit — clamp of NaN is NaN, where/masked_fill_ copy values without arithmetic — and
// each output element is written exactly once, by one thread.
#include <type_traits>

#include "core/device_kernels.h"
#include "core/scalar_ops.h"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/kernels/kernels.h"
#include "cuda/kernels/pointwise_ops.cuh"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

// ---- kernels ---------------------------------------------------------------------------------

// out = cond ? a : b. Operands: 0 out, 1 cond (Bool), 2 a, 3 b; any input may be a value.
template <class T>
__global__ void where_kernel(int64_t n, OffsetCalculator<4> calc, gptr<char> out,
                             gptr<const char> cond, bool cond_is_value, bool cond_value,
                             gptr<const char> a, bool a_is_value, T a_value, gptr<const char> b,
                             bool b_is_value, T b_value) {
  int64_t i = first_element();
  for (int k = 0; k < kElementsPerThread && i < n; ++k, i += kElementwiseThreads) {
    int64_t off[4];
    calc.get(i, off);
    const bool c = cond_is_value ? cond_value : load<bool>(cond, off[1]);
    // Only the chosen input is read: a GPU skips the other load entirely.
    T value;
    if (c)
      value = a_is_value ? a_value : load<T>(a, off[2]);
    else
      value = b_is_value ? b_value : load<T>(b, off[3]);
    store<T>(out, off[0], value);
  }
}

// out = mask ? value : self. Operands: 0 out, 1 self, 2 mask (Bool; may be a value).
template <class T>
__global__ void masked_fill_kernel(int64_t n, OffsetCalculator<3> calc, gptr<char> out,
                                   gptr<const char> self, gptr<const char> mask, bool mask_is_value,
                                   bool mask_value, T value) {
  int64_t i = first_element();
  for (int k = 0; k < kElementsPerThread && i < n; ++k, i += kElementwiseThreads) {
    int64_t off[3];
    calc.get(i, off);
    const bool m = mask_is_value ? mask_value : load<bool>(mask, off[2]);
    store<T>(out, off[0], m ? value : load<T>(self, off[1]));
  }
}

// ---- host side -------------------------------------------------------------------------------

}  // namespace

void launch_clamp(TensorIterator& iter, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  dispatch_numeric(iter.common_dtype(), "clamp", [&]<class T>() {
    if (lo && hi) return run_unary<T, T>(iter, "clamp", ClampOp<T>{lo->to<T>(), hi->to<T>()});
    if (lo) return run_unary<T, T>(iter, "clamp", ClampMinOp<T>{lo->to<T>()});
    GLASS_INTERNAL_ASSERT(hi.has_value(), "clamp: neither bound reached the kernel");
    return run_unary<T, T>(iter, "clamp", ClampMaxOp<T>{hi->to<T>()});
  });
}

void launch_where(TensorIterator& iter) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  dispatch_dtype(iter.common_dtype(), "where", [&]<class T>() {
    const KernelInput<bool> cond = kernel_input<bool>(iter, 1);
    const KernelInput<T> a = kernel_input<T>(iter, 2), b = kernel_input<T>(iter, 3);
    const std::string name = kernel_name("where", scalar_type_of<T>);
    launch_kernel(name.c_str(), where_kernel<T>, elementwise_grid(n), Dim3(kElementwiseThreads), 0,
                  stream_for(iter), n, make_offset_calculator<4>(iter),
                  gptr<char>(iter.data_ptr(0)), cond.data, cond.is_value, cond.value, a.data,
                  a.is_value, a.value, b.data, b.is_value, b.value);
  });
}

void launch_masked_fill(TensorIterator& iter, const Scalar& value) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  GLASS_INTERNAL_ASSERT(!iter.is_cpu_scalar(1), "masked_fill_: self reached the kernel on the CPU");
  dispatch_dtype(iter.common_dtype(), "masked_fill_", [&]<class T>() {
    const KernelInput<bool> mask = kernel_input<bool>(iter, 2);
    const std::string name = kernel_name("masked_fill", scalar_type_of<T>);
    launch_kernel(
        name.c_str(), masked_fill_kernel<T>, elementwise_grid(n), Dim3(kElementwiseThreads), 0,
        stream_for(iter), n, make_offset_calculator<3>(iter), gptr<char>(iter.data_ptr(0)),
        gptr<const char>(iter.data_ptr(1)), mask.data, mask.is_value, mask.value, value.to<T>());
  });
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
