// cuda/host_allocator.h — pinned (page-locked) host memory, cached: PyTorch's
// CachingHostAllocator.
//
// A copy between the device and *pinned* host memory is done by the GPU's copy engine
// (DMA) while the host goes on, so `t.pin_memory()` plus `to(kCUDA, non_blocking=true)`
// returns at once. Page-locking is slow (the kernel pins every page) and limited
// (RLIMIT_MEMLOCK), so pinned blocks are kept and reused, as the device allocator does.
//
// Note [Pinned blocks and queued copies]
//   A non-blocking copy only *queues* the transfer. If the tensor is freed right after, its
//   block must not be handed to a new tensor while the copy engine still reads (or writes)
//   it. So the backend calls record_event(ptr, stream) after queueing each such copy; that
//   records an event on the stream, and a freed block goes back to the cache only once all
//   of its events have completed (polled on the next allocate, never waited for).
//
// Sizes are rounded up to a power of two (so a block fits many nearby sizes); cached blocks
// are reused by size, most recently freed first.
//
// When page-locking is refused (host_alloc returns null: a normal user's RLIMIT_MEMLOCK is
// often 8 MiB), the allocator empties its cache and tries once more, then falls back to
// ordinary pageable memory with a one-time message on stderr. Such memory works, but
// is_pinned() is false for it and copies from it are synchronous.
//
// Invariant: a pinned block is in exactly one state — handed out, waiting for its events, or
// cached — and the statistics are exact at every moment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/allocator.h"
#include "cuda/runtime.h"

namespace glass::cuda {

struct HostMemoryStats {
  int64_t allocated_bytes = 0;         // pinned blocks handed out now
  int64_t max_allocated_bytes = 0;     // high-water mark of allocated_bytes
  int64_t cached_bytes = 0;            // pinned blocks free for reuse
  int64_t pending_bytes = 0;           // freed pinned blocks whose copies may still run
  int64_t reserved_bytes = 0;          // all pinned bytes held: allocated + cached + pending
  int64_t num_allocs = 0;              // allocations served (pinned or pageable)
  int64_t num_cache_hits = 0;          // served from a cached pinned block
  int64_t num_host_alloc = 0;          // blocks page-locked (cudaHostAlloc calls)
  int64_t num_host_free = 0;           // blocks unlocked and freed (cudaFreeHost calls)
  int64_t pageable_bytes = 0;          // fallback (pageable) memory handed out now
  int64_t num_pageable_fallbacks = 0;  // allocations that could not be pinned
};

// The Allocator of pinned tensors (which are CPU tensors: device() is kCPU). Thread-safe.
// The process's instance is host_allocator(); tests may make their own.
class CachingHostAllocator final : public Allocator {
 public:
  explicit CachingHostAllocator(Runtime& runtime);
  // Waits for pending copies and frees every cached block. Blocks still held by tensors are
  // left alone.
  ~CachingHostAllocator() override;
  CachingHostAllocator(const CachingHostAllocator&) = delete;
  CachingHostAllocator& operator=(const CachingHostAllocator&) = delete;

  // nbytes of pinned memory (pageable if page-locking is refused; see above); null for 0.
  void* allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;
  Device device() const override { return Device(kCPU); }

  // The backend calls this right after queueing a copy on `stream` that reads or writes
  // ptr (any address inside a block). Returns false, and does nothing, when ptr is not in a
  // pinned block of this allocator (pageable memory: its copies were synchronous).
  bool record_event(void* ptr, StreamHandle stream);

  HostMemoryStats stats();
  void reset_peak_stats();
  // Frees every cached block (page-unlocks it); blocks waiting for copies stay.
  void empty_cache();

 private:
  struct Block {
    size_t size;
    char* ptr;
    bool allocated = true;
    std::vector<EventHandle> events;  // of queued copies that use the block
  };

  void process_events();  // under mutex_
  void* allocate_pageable(size_t nbytes, size_t pinned_size);

  Runtime& runtime_;
  std::mutex mutex_;
  std::map<const char*, Block*> blocks_;          // every pinned block, by address
  std::map<size_t, std::vector<Block*>> cached_;  // free pinned blocks, by size
  std::vector<Block*> pending_;                   // freed, events not yet complete
  std::unordered_map<void*, size_t> pageable_;    // fallback memory handed out, and its size
  bool warned_ = false;                           // the fallback message is printed once
  HostMemoryStats stats_;
};

// The process's pinned-memory allocator, over runtime(). Never destroyed.
CachingHostAllocator& host_allocator();

// Shorthands for host_allocator(), in PyTorch's CachingHostAllocator_* spirit.
bool host_allocator_record_event(void* ptr, StreamHandle stream);
HostMemoryStats host_memory_stats();
void host_empty_cache();

}  // namespace glass::cuda
