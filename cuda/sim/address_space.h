// cuda/sim/address_space.h — device addresses and their host-accessible alias.
//
// The simulator maps its device memory twice: once as a reservation with no access
// rights, whose addresses tensors carry (so a host dereference of a device pointer
// faults, exactly as on a GPU), and once readable and writable, at a fixed distance,
// which only the simulated SMs and copy engines use. The launch path and the copy
// engines translate with host_view(); nothing else may.
//
// Invariant: for every device address p of the simulator, host_view(p) == p + g_host_offset,
// and g_host_offset never changes after the simulator has started.
#pragma once

#include <cstddef>
#include <cstdint>

namespace glass::cuda::sim {

// Set once, when the simulator maps its arena (0 before that).
extern std::ptrdiff_t g_host_offset;

template <class T>
inline T* host_view(T* device_ptr) {
  return reinterpret_cast<T*>(reinterpret_cast<uintptr_t>(device_ptr) + g_host_offset);
}

// True when p lies in the simulator's device address range (any device).
bool is_device_address(const void* p);

}  // namespace glass::cuda::sim
