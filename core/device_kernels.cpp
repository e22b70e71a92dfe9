// core/device_kernels.cpp — the per-device registry of kernel tables.
#include "core/device_kernels.h"

#include <array>

#include "core/cpu/cpu_kernels.h"

namespace glass {
namespace {
std::array<const DeviceKernels*, kNumDeviceTypes>& registry() {
  // The CPU backend is part of core, so it is wired in here rather than through a static
  // initializer (which a static library's linker could drop).
  static std::array<const DeviceKernels*, kNumDeviceTypes> table{cpu::cpu_kernels(), nullptr};
  return table;
}
}  // namespace

void register_device_kernels(DeviceType type, const DeviceKernels* kernels) {
  registry()[static_cast<int>(type)] = kernels;
}

const DeviceKernels& kernels_for(Device device) {
  const DeviceKernels* k = registry()[static_cast<int>(device.type())];
  GLASS_CHECK(k != nullptr, "no kernels are registered for device ", device,
              (device.is_cuda() ? ": glasstorch was built without CUDA support, or no CUDA "
                                  "runtime is in use (GLASS_CUDA=sim or "
                                  "glass::cuda::use_simulator() gives the simulated GPU)"
                                : ""));
  return *k;
}

}  // namespace glass
