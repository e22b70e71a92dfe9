// tests/core/fake_cuda.h — a stand-in kCUDA backend, to test core's device plumbing on a CPU.
//
// core must keep results on their inputs' device, resolve Device(kCUDA) to the current
// device, pass CPU scalars to device kernels as values and route copies across devices —
// and all of that has to be tested on machines with no GPU and without the simulator
// (core sits below cuda/). FakeCuda registers, for the lifetime of one object, a kCUDA
// backend whose "device memory" is ordinary host memory tagged with a device index:
//   - an allocator that records which device was current at each allocation;
//   - a device guard with N devices and a per-thread current device (as cudaSetDevice);
//   - the CPU kernels for compute, plus a binary kernel that records which operands
//     arrived as CPU scalars and a cross_device_copy that records (src, dst, non_blocking);
//   - a pinned-host allocator whose blocks count as pinned.
// It restores whatever was registered before (the real cuda/ backend, or nothing). It is
// not a model of a GPU: it says where tensors are, never how fast or how asynchronous.
//
// WithoutCuda does the opposite: for its lifetime no kCUDA backend and no pinned allocator
// is registered, so a test sees the errors of a build without a CUDA runtime whatever the
// test binary links.
#pragma once

#include <cstdlib>
#include <optional>
#include <vector>

#include <glass/glass.h>

#include "core/cpu/cpu_kernels.h"

namespace glass::testing {

// What the fake backend saw; reset by each FakeCuda.
struct FakeCudaLog {
  struct Copy {
    Device src, dst;
    bool non_blocking;
  };
  std::vector<Copy> copies;
  std::vector<int> allocation_devices;  // the current device at each device allocation
  int pinned_allocations = 0;
  // Per operand of the last binary kernel: its value if it came as a CPU scalar.
  std::vector<std::optional<double>> last_binary_cpu_scalars;
};

inline FakeCudaLog& fake_cuda_log() {
  static FakeCudaLog log;
  return log;
}

namespace fake_cuda_detail {

inline thread_local int t_current = 0;

class Guard final : public DeviceGuardImplInterface {
 public:
  DeviceType type() const override { return kCUDA; }
  Device getDevice() const override { return Device(kCUDA, t_current); }
  void setDevice(Device d) const override {
    GLASS_CHECK(d.is_cuda() && d.index() >= 0 && d.index() < count, "fake cuda: bad device ", d);
    t_current = d.index();
  }
  Device exchangeDevice(Device d) const override {
    Device old = getDevice();
    setDevice(d);
    return old;
  }
  int deviceCount() const override { return count; }

  int count = 2;
};

// Host memory standing in for device (or pinned) memory.
class HostBlocks final : public Allocator {
 public:
  explicit HostBlocks(bool pinned) : pinned_(pinned) {}
  void* allocate(size_t nbytes) override {
    if (pinned_)
      fake_cuda_log().pinned_allocations++;
    else
      fake_cuda_log().allocation_devices.push_back(t_current);
    return std::aligned_alloc(64, (nbytes + 63) / 64 * 64 + 64);
  }
  void deallocate(void* ptr, size_t) override { std::free(ptr); }
  Device device() const override { return pinned_ ? Device(kCPU) : Device(kCUDA); }
  bool is_pinned(const void*) const override { return pinned_; }

 private:
  bool pinned_;
};

// The same bytes as a CPU tensor, so the CPU kernels can do a fake device's work.
inline Tensor host_alias(const Tensor& t) {
  return from_blob(t.data_ptr(), t.sizes(), t.strides(), TensorOptions(t.dtype()));
}

inline void cross_device_copy(const Tensor& dst, const Tensor& src, bool non_blocking) {
  fake_cuda_log().copies.push_back({src.device(), dst.device(), non_blocking});
  detail::copy_into(host_alias(dst), host_alias(src));
}

inline void binary(TensorIterator& iter, BinaryOp op) {
  auto& seen = fake_cuda_log().last_binary_cpu_scalars;
  seen.assign(iter.ntensors(), std::nullopt);
  for (int k = iter.noutputs(); k < iter.ntensors(); ++k)
    if (iter.is_cpu_scalar(k)) seen[k] = iter.scalar_value(k).toDouble();
  cpu::binary_kernel(iter, op);  // the host address of a CPU scalar is readable here
}

inline Tensor nonzero(const Tensor& self) {
  return cpu::nonzero_kernel(self).to(self.device());  // the CPU kernel answers on the CPU
}

// Random fills draw from the CPU's default generator, not the device's Philox one (which
// the CPU kernels cannot draw from), so a fake device's numbers equal a CPU run's.
inline GeneratorImpl& cpu_generator() { return *default_generator(kCPU).unsafeGetGeneratorImpl(); }
inline void uniform(const Tensor& t, double from, double to, GeneratorImpl&) {
  cpu::uniform_kernel(t, from, to, cpu_generator());
}
inline void normal(const Tensor& t, double mean, double std, GeneratorImpl&) {
  cpu::normal_kernel(t, mean, std, cpu_generator());
}
inline void random_int(const Tensor& t, int64_t low, int64_t high, GeneratorImpl&) {
  cpu::random_int_kernel(t, low, high, cpu_generator());
}

inline const DeviceKernels* kernels() {
  static const DeviceKernels table = [] {
    DeviceKernels k = *cpu::cpu_kernels();
    k.cross_device_copy = &cross_device_copy;
    k.binary = &binary;
    k.nonzero = &nonzero;
    k.uniform = &uniform;
    k.normal = &normal;
    k.random_int = &random_int;
    return k;
  }();
  return &table;
}

// Static, so that a tensor outliving its FakeCuda can still free its bytes.
inline Guard& guard() {
  static Guard g;
  return g;
}
inline HostBlocks& device_memory() {
  static HostBlocks a(false);
  return a;
}
inline HostBlocks& pinned_memory() {
  static HostBlocks a(true);
  return a;
}

struct Saved {
  const DeviceKernels* kernels = nullptr;
  Allocator* allocator = nullptr;
  Allocator* pinned = nullptr;
  const DeviceGuardImplInterface* guard = nullptr;

  static Saved current() {
    Saved s;
    try {
      s.kernels = &kernels_for(Device(kCUDA, 0));
    } catch (const Error&) {
    }
    try {
      s.allocator = get_allocator(kCUDA);
    } catch (const Error&) {
    }
    s.pinned = get_pinned_allocator();
    s.guard = get_device_guard_impl(kCUDA);
    return s;
  }
  void install() const {
    register_device_kernels(kCUDA, kernels);
    set_allocator(kCUDA, allocator);
    set_pinned_allocator(pinned);
    register_device_guard_impl(kCUDA, guard);
  }
};

}  // namespace fake_cuda_detail

class FakeCuda {
 public:
  explicit FakeCuda(int devices = 2) : saved_(fake_cuda_detail::Saved::current()) {
    namespace d = fake_cuda_detail;
    fake_cuda_log() = {};
    d::t_current = 0;
    d::guard().count = devices;
    d::Saved{d::kernels(), &d::device_memory(), &d::pinned_memory(), &d::guard()}.install();
  }
  ~FakeCuda() { saved_.install(); }
  FakeCuda(const FakeCuda&) = delete;
  FakeCuda& operator=(const FakeCuda&) = delete;

  const FakeCudaLog& log() const { return fake_cuda_log(); }

 private:
  fake_cuda_detail::Saved saved_;
};

class WithoutCuda {
 public:
  WithoutCuda() : saved_(fake_cuda_detail::Saved::current()) {
    fake_cuda_detail::Saved{}.install();
  }
  ~WithoutCuda() { saved_.install(); }
  WithoutCuda(const WithoutCuda&) = delete;
  WithoutCuda& operator=(const WithoutCuda&) = delete;

 private:
  fake_cuda_detail::Saved saved_;
};

}  // namespace glass::testing
