// cuda/backend.cpp — plugs the CUDA backend into core for kCUDA.
//
// core knows devices only through its registries (core/device_kernels.h,
// core/allocator.h, core/device_guard.h); this file fills the kCUDA entries: the
// kernel table, the caching allocator, the pinned host allocator and the current-device
// hooks. Registration is cheap and touches no runtime: the runtime is chosen on the
// first real CUDA call, so use_simulator() in main() still comes first.
//
// Invariant: every entry of core's kernel contract is a CUDA kernel (cuda/kernels/); none
// falls back to the CPU behind the user's back.
#include "cuda/backend.h"

#include <optional>

#include "core/allocator.h"
#include "core/device_guard.h"
#include "core/device_kernels.h"
#include "core/error.h"
#include "cuda/caching_allocator.h"
#include "cuda/copy.h"
#include "cuda/host_allocator.h"
#include "cuda/kernels/kernels.h"
#include "cuda/runtime.h"
#include "cuda/stream.h"

namespace glass::cuda {
namespace {

// ---- which build of the kernels runs ---------------------------------------------------

bool kernels_are_simulated() {
  if (runtime().is_simulated()) return true;
#ifndef GLASS_HAVE_GPU_KERNELS
  GLASS_CHECK(false,
              "this build of glasstorch has no GPU kernels (nvcc was not found when it was built); "
              "rebuild with the CUDA toolkit, or use the simulated GPU (GLASS_CUDA=sim)");
#endif
  return false;
}

#ifdef GLASS_HAVE_GPU_KERNELS
#define GLASS_CUDA_KERNEL(entry, ...) \
  (kernels_are_simulated() ? sim::entry(__VA_ARGS__) : gpu::entry(__VA_ARGS__))
#else
#define GLASS_CUDA_KERNEL(entry, ...) (kernels_are_simulated(), sim::entry(__VA_ARGS__))
#endif

void copy(TensorIterator& iter) { GLASS_CUDA_KERNEL(launch_copy, iter); }
void fill(TensorIterator& iter, const Scalar& value) {
  GLASS_CUDA_KERNEL(launch_fill, iter, value);
}
void unary(TensorIterator& iter, UnaryOp op) { GLASS_CUDA_KERNEL(launch_unary, iter, op); }
void binary(TensorIterator& iter, BinaryOp op) { GLASS_CUDA_KERNEL(launch_binary, iter, op); }
void index(TensorIterator& iter, const IndexArgs& args) {
  GLASS_CUDA_KERNEL(launch_index, iter, args);
}
void index_put(TensorIterator& iter, const IndexArgs& args, bool accumulate) {
  GLASS_CUDA_KERNEL(launch_index_put, iter, args, accumulate);
}
void clamp(TensorIterator& iter, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  GLASS_CUDA_KERNEL(launch_clamp, iter, lo, hi);
}
void where(TensorIterator& iter) { GLASS_CUDA_KERNEL(launch_where, iter); }
void masked_fill(TensorIterator& iter, const Scalar& value) {
  GLASS_CUDA_KERNEL(launch_masked_fill, iter, value);
}
void reduce(TensorIterator& iter, ReduceOp op) { GLASS_CUDA_KERNEL(launch_reduce, iter, op); }
void arg_reduce(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool is_max,
                const Tensor& values, const Tensor& indices) {
  GLASS_CUDA_KERNEL(launch_arg_reduce, in, outer, n, inner, is_max, values, indices);
}

// ---- softmax, matmul, nonzero, random fills ------------------------------------------------

void softmax(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool log,
             const Tensor& out) {
  GLASS_CUDA_KERNEL(launch_softmax, in, outer, n, inner, log, out);
}
void bmm(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& beta,
         const Scalar& alpha) {
  GLASS_CUDA_KERNEL(launch_bmm, a, b, out, beta, alpha);
}
Tensor nonzero(const Tensor& self) { return GLASS_CUDA_KERNEL(launch_nonzero, self); }
void uniform(const Tensor& self, double from, double to, GeneratorImpl& gen) {
  GLASS_CUDA_KERNEL(launch_uniform, self, from, to, gen);
}
void normal(const Tensor& self, double mean, double std, GeneratorImpl& gen) {
  GLASS_CUDA_KERNEL(launch_normal, self, mean, std, gen);
}
void random_int(const Tensor& self, int64_t low, int64_t high, GeneratorImpl& gen) {
  GLASS_CUDA_KERNEL(launch_random_int, self, low, high, gen);
}

const DeviceKernels* cuda_kernels() {
  static const DeviceKernels table{
      .copy = copy,
      .cross_device_copy = copy_between_devices,
      .fill = fill,
      .unary = unary,
      .binary = binary,
      .clamp = clamp,
      .where = where,
      .masked_fill = masked_fill,
      .reduce = reduce,
      .arg_reduce = arg_reduce,
      .softmax = softmax,
      .bmm = bmm,
      .index = index,
      .index_put = index_put,
      .nonzero = nonzero,
      .uniform = uniform,
      .normal = normal,
      .random_int = random_int,
  };
  return &table;
}

// ---- allocators: thin forwarders, so nothing picks a runtime at registration ------------

class DeviceAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override { return caching_allocator().allocate(nbytes); }
  void deallocate(void* ptr, size_t nbytes) override {
    caching_allocator().deallocate(ptr, nbytes);
  }
  Device device() const override { return caching_allocator().device(); }
};

class PinnedAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override { return host_allocator().allocate(nbytes); }
  void deallocate(void* ptr, size_t nbytes) override { host_allocator().deallocate(ptr, nbytes); }
  Device device() const override { return Device(kCPU); }
  // False for the pageable memory handed out when page-locking was refused.
  bool is_pinned(const void* ptr) const override { return runtime().is_pinned(ptr); }
};

// ---- the current device, for core's DeviceGuard ---------------------------------------

class CUDAGuardImpl final : public DeviceGuardImplInterface {
 public:
  DeviceType type() const override { return kCUDA; }
  Device getDevice() const override { return Device(kCUDA, current_device()); }
  void setDevice(Device d) const override { set_device(d.index()); }
  Device exchangeDevice(Device d) const override {
    Device old = getDevice();
    setDevice(d);
    return old;
  }
  int deviceCount() const override { return device_count(); }
};

}  // namespace

bool detail::register_backend() {
  static const bool done = [] {
    static DeviceAllocator device_allocator;
    static PinnedAllocator pinned_allocator;
    static CUDAGuardImpl guard_impl;
    register_device_kernels(kCUDA, cuda_kernels());
    set_allocator(kCUDA, &device_allocator);
    set_pinned_allocator(&pinned_allocator);
    register_device_guard_impl(kCUDA, &guard_impl);
    return true;
  }();
  return done;
}

}  // namespace glass::cuda
