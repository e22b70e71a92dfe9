// core/device_guard.cpp — the per-type registry of device guards, and DeviceGuard.
#include "core/device_guard.h"

#include <array>
#include <atomic>

#include "core/error.h"

namespace glass {
namespace {

// Atomic: a backend registers once at start-up while other threads may already allocate.
std::array<std::atomic<const DeviceGuardImplInterface*>, kNumDeviceTypes>& registry() {
  static std::array<std::atomic<const DeviceGuardImplInterface*>, kNumDeviceTypes> table{};
  return table;
}

const DeviceGuardImplInterface& checked_impl(DeviceType type) {
  const DeviceGuardImplInterface* impl = get_device_guard_impl(type);
  GLASS_CHECK(impl != nullptr, "DeviceGuard: no ", type,
              " runtime is registered, so there is no current ", type,
              " device (a CUDA build without a GPU needs GLASS_CUDA=sim or "
              "glass::cuda::use_simulator() for the simulated GPU)");
  return *impl;
}

}  // namespace

void register_device_guard_impl(DeviceType type, const DeviceGuardImplInterface* impl) {
  GLASS_CHECK(type != kCPU, "register_device_guard_impl(): the CPU has no current device");
  GLASS_INTERNAL_ASSERT(impl == nullptr || impl->type() == type,
                        "a device guard registered for the wrong device type");
  registry()[static_cast<int>(type)].store(impl, std::memory_order_release);
}

const DeviceGuardImplInterface* get_device_guard_impl(DeviceType type) {
  return registry()[static_cast<int>(type)].load(std::memory_order_acquire);
}

Device resolve_device(Device d) {
  if (d.is_cpu() || d.index() >= 0) return d;
  const DeviceGuardImplInterface* impl = get_device_guard_impl(d.type());
  return impl ? impl->getDevice() : d;
}

DeviceGuard::DeviceGuard(Device device) : original_(device), current_(device) {
  if (device.is_cpu()) return;
  impl_ = &checked_impl(device.type());
  original_ = device.index() < 0 ? impl_->getDevice() : impl_->exchangeDevice(device);
  current_ = device.index() < 0 ? original_ : device;
}

// Restores unconditionally: the guarded code may have changed the device behind the
// guard's back (cuda::set_device), and the caller must get its device back all the same.
DeviceGuard::~DeviceGuard() {
  if (impl_) impl_->setDevice(original_);
}

void DeviceGuard::reset_device(Device device) {
  GLASS_CHECK(device.type() == original_.type(), "DeviceGuard::reset_device(): the guard is for ",
              original_.type(), " devices, got ", device,
              " (use a second DeviceGuard for another device type)");
  if (!impl_ || device.index() < 0) return;
  impl_->setDevice(device);
  current_ = device;
}

}  // namespace glass
