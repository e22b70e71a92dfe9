// cuda/sim/arena.h — the simulated GPU's device memory: one arena, mapped twice.
//
// All devices' memory is one virtual range, device d's slice at base + d * capacity.
// Device addresses (what malloc returns and tensors carry) lie in a PROT_NONE
// reservation, so a host dereference faults as it would on a GPU; the same layout is
// mapped again, readable and writable, at g_host_offset from it (address_space.h), and
// only the SMs and copy engines read through that view. Both mappings are
// MAP_NORESERVE: a 4 GiB device costs address space, and RAM only for pages touched.
// Inside each slice a DeviceHeap hands out 2 MiB-granular ranges, as cudaMalloc does.
//
// Invariant: at most one Arena exists per process (g_host_offset is set once); every
// call is thread-safe (one lock per device); a freed range's pages go back to the OS
// (madvise), so resident memory follows what is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace glass::cuda::sim {

class Arena {
 public:
  Arena(int devices, size_t bytes_per_device);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  int num_devices() const { return devices_; }
  size_t capacity() const { return bytes_per_device_; }  // per device

  // The device whose slice holds p, or -1 when p is not a device address.
  int device_of(const void* p) const;
  // Null when the device has no free range big enough (never throws for that).
  void* malloc(int device, size_t nbytes);
  // Frees what malloc(device, ...) returned; returns the range's size. A pointer that is
  // not a live allocation of `device` is an error naming it (and the device it is on).
  size_t free(int device, void* ptr);

  struct Range {
    uintptr_t begin = 0;
    size_t size = 0;
  };
  // The live allocation holding p, if any.
  std::optional<Range> allocation_containing(const void* p) const;
  size_t bytes_in_use(int device) const;
  size_t largest_free_range(int device) const;

 private:
  struct Slice;
  Slice& slice(int device) const;

  int devices_;
  size_t bytes_per_device_;
  uintptr_t base_ = 0;    // the device view (PROT_NONE)
  char* host_ = nullptr;  // the accessible view, 2 MiB-aligned inside host_mapping_
  void* host_mapping_ = nullptr;
  size_t host_bytes_ = 0;
  size_t total_ = 0;
  void* reservation_ = nullptr;  // what munmap gets back (base_ is aligned inside it)
  size_t reservation_bytes_ = 0;
  std::vector<std::unique_ptr<Slice>> slices_;
};

}  // namespace glass::cuda::sim
