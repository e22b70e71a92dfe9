// core/device_guard.h — each device type's current device, and a guard that restores it.
//
// "Which GPU?" has a per-thread answer, as in CUDA (cudaSetDevice): Device(kCUDA) with no
// index means the current device, a Storage is allocated with its device current, and a
// kernel is launched on the current device's stream. core cannot ask cudart, so a
// backend registers a DeviceGuardImplInterface for its DeviceType (c10's interface of
// the same name, cut down to what core needs) and core goes through it: cuda/ registers
// one for kCUDA; the CPU needs none (there is one CPU, index -1).
//
// Invariant: a DeviceGuard restores, on destruction, the device that was current when it
// was made, so guarded code never leaks a device change to its caller — the same
// contract as c10::DeviceGuard (cuda/ offers it as glass::cuda::CUDAGuard too).
#pragma once

#include "core/device.h"

namespace glass {

// What a backend tells core about its devices. Every call is about the calling thread.
class DeviceGuardImplInterface {
 public:
  virtual ~DeviceGuardImplInterface() = default;
  virtual DeviceType type() const = 0;
  // The current device (always with an index).
  virtual Device getDevice() const = 0;
  // Makes `d` (with an index, of this type) current. Checked: a bad index throws.
  virtual void setDevice(Device d) const = 0;
  // setDevice(d) and return the device that was current before.
  virtual Device exchangeDevice(Device d) const = 0;
  // How many devices of this type exist (0 when the backend has no runtime).
  virtual int deviceCount() const = 0;
};

// The registry, indexed by DeviceType; null when no backend registered one (the CPU
// never has one). Registering null removes an entry.
void register_device_guard_impl(DeviceType type, const DeviceGuardImplInterface* impl);
const DeviceGuardImplInterface* get_device_guard_impl(DeviceType type);

// `d` with its index filled in: Device(kCUDA) -> the current CUDA device. Devices that
// already have an index, the CPU, and types without a registered backend are returned
// unchanged (allocation reports the missing backend with the clear error).
Device resolve_device(Device d);

// Makes a device current for a scope (c10::DeviceGuard). A CPU device changes nothing;
// a device without an index keeps the current one (and restores it all the same).
class DeviceGuard {
 public:
  explicit DeviceGuard(Device device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  // Switches to another device of the same type; the destructor still restores the
  // original one.
  void reset_device(Device device);
  void set_index(int index) { reset_device(Device(original_.type(), index)); }
  // The device current when the guard was made, and the one current now.
  Device original_device() const { return original_; }
  Device current_device() const { return current_; }

 private:
  const DeviceGuardImplInterface* impl_ = nullptr;  // null for the CPU
  Device original_;
  Device current_;
};

}  // namespace glass
