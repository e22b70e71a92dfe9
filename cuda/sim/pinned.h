// cuda/sim/pinned.h — page-locked host memory (what cudaHostAlloc returns).
//
// A pinned block is an anonymous mapping locked into RAM with mlock, so the (simulated)
// DMA engine may read it at any time without the kernel paging it out: that is what lets
// a copy from it be queued and the host return at once. Locking is limited per process
// (RLIMIT_MEMLOCK, 8 MiB for a normal user by default; root is exempt), so allocate
// returns null when the kernel refuses, and the caller decides what to tell the user.
//
// Invariant: a pointer is pinned exactly while it lies inside a block that allocate
// returned and free has not yet taken back; every call is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace glass::cuda::sim {

class PinnedHostMemory {
 public:
  PinnedHostMemory() = default;
  PinnedHostMemory(const PinnedHostMemory&) = delete;
  PinnedHostMemory& operator=(const PinnedHostMemory&) = delete;

  // Null when page-locking is refused (EPERM, ENOMEM) or the mapping fails.
  void* allocate(size_t nbytes);
  // Takes back a block allocate returned; anything else is an error naming the pointer.
  void free(void* ptr);
  bool contains(const void* p) const;
  // True when [p, p + nbytes) lies inside one pinned block.
  bool contains_range(const void* p, size_t nbytes) const;
  size_t bytes_pinned() const;

 private:
  mutable std::mutex mutex_;
  std::map<uintptr_t, size_t> blocks_;  // start -> mapped size
  size_t bytes_ = 0;
};

}  // namespace glass::cuda::sim
