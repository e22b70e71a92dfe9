// core/allocator.h — where Storage gets its bytes, and the CPU caching allocator.
//
// An Allocator hands out raw, 64-byte-aligned blocks for one device. The CPU one keeps
// freed blocks in per-size-class free lists and hands them out again, the same idea as
// PyTorch's CUDA caching allocator, taught here on the CPU first: a fresh 64 MiB buffer
// costs ~16k page faults the first time it is touched, a recycled one costs nothing.
// Blocks of 2 MiB and more are 2 MiB-aligned and offered to the kernel as huge pages.
// Invariant: every pointer returned by allocate(n) goes back through deallocate(p, n)
// with the same n; the stats below are exact at every moment.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/device.h"

namespace glass {

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t nbytes) = 0;
  virtual void deallocate(void* ptr, size_t nbytes) = 0;
  virtual Device device() const = 0;
  // Whether the block at ptr is page-locked host memory. Only the pinned-host allocator
  // ever says yes, and not for every block: where page-locking is refused (a user's
  // RLIMIT_MEMLOCK), it hands out pageable memory instead.
  virtual bool is_pinned(const void* ptr) const {
    (void)ptr;
    return false;
  }
};

// Registered per device type; cuda/ registers its allocator for kCUDA. get_allocator
// throws a clear error when the type has none (CUDA without a CUDA runtime).
Allocator* get_allocator(DeviceType type);
void set_allocator(DeviceType type, Allocator* allocator);

// Page-locked ("pinned") host memory, which a copy engine can read without the CPU, so
// host<->device copies from it can be asynchronous. cuda/ registers its caching host
// allocator here; null until then. Its blocks are host memory: a pinned tensor is a CPU
// tensor whose Storage came from this allocator and whose block it says is page-locked
// (Tensor::is_pinned() checks exactly that).
Allocator* get_pinned_allocator();
void set_pinned_allocator(Allocator* allocator);

struct MemoryStats {
  int64_t allocated_bytes = 0;       // in live tensors now (requested sizes, rounded)
  int64_t cached_bytes = 0;          // freed blocks kept for reuse
  int64_t peak_allocated_bytes = 0;  // high-water mark of allocated_bytes
  int64_t num_allocs = 0;            // calls to allocate()
  int64_t num_cache_hits = 0;        // allocations served from the cache
};

// The CPU caching allocator's controls (libtorch has no CPU equivalent; these mirror
// torch.cuda's memory_stats / empty_cache / reset_peak_memory_stats).
MemoryStats cpu_memory_stats();
void cpu_reset_peak_memory_stats();
void cpu_empty_cache();  // returns every cached block to the OS
// Caching on by default; GLASS_CPU_CACHING=0 in the environment, or this call, turns it
// off (every free goes straight back to the OS), which makes ASan see use-after-free.
void cpu_set_caching_enabled(bool enabled);
bool cpu_caching_enabled();
// Upper bound on cached bytes (default 2 GiB or GLASS_CPU_CACHE_LIMIT_MB); beyond it,
// freed blocks go back to the OS.
void cpu_set_cache_limit(int64_t bytes);

}  // namespace glass
