// cuda/caching_allocator.h — where CUDA tensors get their bytes: the device caching allocator.
//
// Asking the device for memory (cudaMalloc) is slow — it synchronizes, and on a GPU it
// costs tens of microseconds to milliseconds — and a training step frees and allocates the
// same sizes thousands of times. So, like PyTorch, glasstorch asks the device for big
// *segments* once, carves tensors' *blocks* out of them, and keeps freed blocks for reuse.
// This file is PyTorch's c10/cuda/CUDACachingAllocator design, written to be read.
//
// Note [Caching allocator design]
//
//   Sizes. Every request is rounded up to a multiple of 512 B, so that nearby sizes share
//   blocks and every block is 512-byte aligned (segments themselves are 256-aligned or
//   better, as cudaMalloc's are).
//
//   Two pools. Requests of at most 1 MiB come from the *small pool*, whose segments are
//   2 MiB each, so many small tensors share one segment. Larger requests come from the
//   *large pool*. A large segment is sized as PyTorch sizes it: 20 MiB for a request between
//   1 and 10 MiB (so several such tensors share it), otherwise the request rounded up to a
//   multiple of 2 MiB (so a 100 MiB tensor costs 100 MiB, not 128). Small and large blocks
//   never mix, which keeps long-lived large tensors from pinning segments full of holes.
//
//   Best fit, then split. A request takes the smallest free block that fits (ties go to the
//   lowest address). If the block is bigger than needed, it is split: the front is handed
//   out, the rest stays free, and both remember their neighbours in the segment. A small
//   block splits when at least 512 B would be left over; a large block only when more than
//   1 MiB would be (a smaller remainder is kept inside the allocation, to stop large
//   segments from fragmenting into slivers nobody can use).
//
//   Merge on free. A freed block merges with a free neighbour before and after it, so a
//   segment whose blocks are all freed is one block again. Only whole (unsplit) free
//   segments can be given back to the device (empty_cache()).
//
//   Free lists per stream. A block belongs to the stream that was current when it was
//   allocated; freed, it is reused only by allocations on that same stream. This is what
//   makes reuse safe without waiting: the old tensor's kernels and the new tensor's kernels
//   are queued on one stream, which runs them in order. (The free lists are one ordered set
//   per pool, sorted by stream, then size, then address, so "the free list of stream S" is
//   the run of entries for S, and best fit is one lower_bound.)
//
//   record_stream(ptr, stream). A tensor used on a second stream breaks that argument: its
//   block may be freed and reused on its own stream while the second stream is still
//   reading it. record_stream() notes the second stream; when the block is freed, an event
//   is recorded on every such stream, and the block becomes reusable only once all those
//   events have completed. The events are polled at the start of the next allocation (never
//   waited for), as PyTorch does.
//
//   Out of memory. When the device refuses a segment, the allocator waits for the pending
//   events above, gives every whole free segment back to the device (which synchronizes,
//   as cudaFree does), and asks once more. If that fails too, it throws glass::Error:
//   "CUDA out of memory. Tried to allocate 2.00 GiB (device 0; capacity 4.00 GiB; ...)".
//
//   One allocator per device, each with its own lock, pools and statistics; a request is
//   served by the device that is current (glass::cuda::current_device()) on the current
//   stream of that device (getCurrentCUDAStream()).
//
//   GLASS_CUDA_CACHING=0 turns caching off, for debugging: every block is its own device
//   allocation of the rounded size and every free goes straight back to the device (after
//   the record_stream events, if any). A use after free then names memory nobody owns,
//   which the simulator rejects (a copy or memset into freed device memory is an error).
//
// Invariants: every byte of a segment belongs to exactly one block; adjacent free blocks of
// one segment never coexist (they are merged) unless one still waits for events; the
// statistics below are exact at every moment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/allocator.h"
#include "cuda/runtime.h"

namespace glass::cuda {

// Counters of one device's caching allocator. The names follow torch.cuda.memory_stats():
// "current" values are exact now; max_* are high-water marks since the last
// reset_peak_memory_stats(); num_* count events since the allocator was made.
struct MemoryStats {
  int64_t allocated_bytes = 0;        // in blocks handed out to tensors (memory_allocated)
  int64_t max_allocated_bytes = 0;    // max_memory_allocated
  int64_t reserved_bytes = 0;         // in segments held from the device (memory_reserved)
  int64_t max_reserved_bytes = 0;     // max_memory_reserved
  int64_t segments = 0;               // segments held now
  int64_t active_blocks = 0;          // blocks handed out now
  int64_t inactive_split_blocks = 0;  // free blocks inside split segments (fragmentation)
  int64_t inactive_split_bytes = 0;   // their bytes
  int64_t pending_free_blocks = 0;    // freed, but waiting for record_stream events
  int64_t num_allocs = 0;             // allocations served (allocation count)
  int64_t num_cache_hits = 0;         // allocations served from a cached block
  int64_t num_splits = 0;             // blocks split to serve a smaller request
  int64_t num_merges = 0;             // free neighbours merged
  int64_t num_device_alloc = 0;       // segments asked from the device (cudaMalloc calls)
  int64_t num_device_free = 0;        // segments given back (cudaFree calls)
  int64_t num_alloc_retries = 0;      // device refusals that freed the cache and retried
  int64_t num_ooms = 0;               // out-of-memory errors thrown
};

namespace detail {
class DeviceCachingAllocator;
class EventPool;
}  // namespace detail

// The allocator registered for kCUDA. It serves every device; see Note [Caching allocator
// design]. Thread-safe. The process's one instance is caching_allocator(); tests may make
// their own over the same runtime, which then have their own pools and statistics.
class CUDACachingAllocator final : public Allocator {
 public:
  // caching: false behaves as GLASS_CUDA_CACHING=0 (see the note).
  explicit CUDACachingAllocator(Runtime& runtime, bool caching = caching_enabled_by_env());
  // Waits for pending frees and gives every cached segment back. Blocks still held by
  // tensors are left alone (their memory stays reserved on the device).
  ~CUDACachingAllocator() override;
  CUDACachingAllocator(const CUDACachingAllocator&) = delete;
  CUDACachingAllocator& operator=(const CUDACachingAllocator&) = delete;

  // A block of at least nbytes on the current device, for the current stream; null for
  // nbytes == 0 (as PyTorch). Throws glass::Error on out of memory (after one retry).
  void* allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;
  // The current device: Storage asks right after allocate(), on the same thread.
  Device device() const override;

  // Marks the block holding ptr (a pointer this allocator returned) as used by `stream`, so
  // that, once freed, it is reused only after the work queued on `stream` so far completes.
  void record_stream(void* ptr, StreamHandle stream);

  MemoryStats stats(int device);
  void reset_peak_stats(int device);
  // Waits for pending frees, then gives every whole free segment of every device back.
  void empty_cache();
  bool caching() const { return caching_; }

  // GLASS_CUDA_CACHING, read from the environment: "0" turns caching off.
  static bool caching_enabled_by_env();

 private:
  detail::DeviceCachingAllocator& of(int device);

  Runtime& runtime_;
  bool caching_;
  std::unique_ptr<detail::EventPool> events_;
  std::vector<std::unique_ptr<detail::DeviceCachingAllocator>> devices_;
};

// The process's allocator for kCUDA (made on first use, over runtime(); the backend
// registers it with set_allocator(kCUDA, ...)). Never destroyed: tensors in static objects
// may be freed after main() returns.
CUDACachingAllocator& caching_allocator();

// torch.cuda's memory API, for caching_allocator(). device -1 means the current device.
int64_t memory_allocated(int device = -1);
int64_t max_memory_allocated(int device = -1);
int64_t memory_reserved(int device = -1);
int64_t max_memory_reserved(int device = -1);
void reset_peak_memory_stats(int device = -1);
MemoryStats memory_stats(int device = -1);
void empty_cache();
// What Tensor::record_stream(s) calls: ptr is the storage's data pointer.
void record_stream(void* ptr, StreamHandle stream);

// Bytes in human units, as PyTorch prints them: "512 bytes", "1.50 KiB", "20.00 MiB",
// "4.00 GiB".
std::string format_bytes(int64_t nbytes);

}  // namespace glass::cuda
