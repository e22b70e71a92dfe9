// cuda/host_allocator.cpp — the caching pinned-host allocator; the design is in
// host_allocator.h (Note [Pinned blocks and queued copies]).
//
// Invariant: every Block in blocks_ is in exactly one of three places — handed out (its
// `allocated` set), pending_ (freed, events outstanding) or cached_ (free) — and stats_ moves
// its bytes between the counters whenever a block moves.
#include "cuda/host_allocator.h"

#include <sys/resource.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "cuda/caching_allocator.h"

namespace glass::cuda {
namespace {

std::string memlock_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0) return "unknown";
  if (rl.rlim_cur == RLIM_INFINITY) return "unlimited";
  return format_bytes(static_cast<int64_t>(rl.rlim_cur));
}

}  // namespace

CachingHostAllocator::CachingHostAllocator(Runtime& runtime) : runtime_(runtime) {}

CachingHostAllocator::~CachingHostAllocator() {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Block* b : pending_) {
      for (EventHandle e : b->events) {
        runtime_.event_synchronize(e);
        runtime_.event_destroy(e);
      }
      b->events.clear();
      cached_[b->size].push_back(b);
    }
    pending_.clear();
    for (auto& [size, list] : cached_)
      for (Block* b : list) {
        runtime_.host_free(b->ptr);
        blocks_.erase(b->ptr);
        delete b;
      }
  } catch (...) {
    // A destructor must not throw; a sticky device error surfaces on the next CUDA call.
  }
  // Blocks still held by tensors keep their memory; only the bookkeeping goes.
  for (auto& [ptr, b] : blocks_)
    if (b->allocated) delete b;
}

void* CachingHostAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  size_t size = std::bit_ceil(nbytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    process_events();
    auto it = cached_.find(size);
    if (it != cached_.end() && !it->second.empty()) {
      Block* b = it->second.back();
      it->second.pop_back();
      b->allocated = true;
      stats_.num_allocs++;
      stats_.num_cache_hits++;
      stats_.cached_bytes -= static_cast<int64_t>(size);
      stats_.allocated_bytes += static_cast<int64_t>(size);
      stats_.max_allocated_bytes = std::max(stats_.max_allocated_bytes, stats_.allocated_bytes);
      return b->ptr;
    }
  }
  // Page-locking is slow; it runs outside the lock so other threads' cache hits go on.
  void* ptr = runtime_.host_alloc(size);
  if (!ptr) {
    // Our own cached blocks count against RLIMIT_MEMLOCK too: give them back and retry.
    empty_cache();
    ptr = runtime_.host_alloc(size);
  }
  if (!ptr) return allocate_pageable(nbytes, size);

  std::lock_guard<std::mutex> lock(mutex_);
  auto* b = new Block{size, static_cast<char*>(ptr), true, {}};
  blocks_.emplace(b->ptr, b);
  stats_.num_allocs++;
  stats_.num_host_alloc++;
  stats_.reserved_bytes += static_cast<int64_t>(size);
  stats_.allocated_bytes += static_cast<int64_t>(size);
  stats_.max_allocated_bytes = std::max(stats_.max_allocated_bytes, stats_.allocated_bytes);
  return ptr;
}

void* CachingHostAllocator::allocate_pageable(size_t nbytes, size_t pinned_size) {
  size_t size = (nbytes + 63) / 64 * 64;  // aligned_alloc wants a multiple of the alignment
  void* ptr = std::aligned_alloc(64, size);
  GLASS_CHECK(ptr != nullptr, "pin_memory(): out of host memory allocating ",
              format_bytes(static_cast<int64_t>(nbytes)));
  std::lock_guard<std::mutex> lock(mutex_);
  if (!warned_) {
    warned_ = true;
    std::fprintf(stderr,
                 "pin_memory(): page-locking %s was refused (RLIMIT_MEMLOCK is %s; see `ulimit "
                 "-l`); using pageable memory, so copies from it are not asynchronous\n",
                 format_bytes(static_cast<int64_t>(pinned_size)).c_str(), memlock_limit().c_str());
  }
  pageable_.emplace(ptr, size);
  stats_.num_allocs++;
  stats_.num_pageable_fallbacks++;
  stats_.pageable_bytes += static_cast<int64_t>(size);
  return ptr;
}

void CachingHostAllocator::deallocate(void* ptr, size_t nbytes) {
  (void)nbytes;  // the block knows its size
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto p = pageable_.find(ptr); p != pageable_.end()) {
    stats_.pageable_bytes -= static_cast<int64_t>(p->second);
    pageable_.erase(p);
    std::free(ptr);
    return;
  }
  auto it = blocks_.find(static_cast<const char*>(ptr));
  GLASS_INTERNAL_ASSERT(it != blocks_.end() && it->second->allocated, "deallocate(): ", ptr,
                        " is not a block handed out by this pinned-memory allocator");
  Block* b = it->second;
  b->allocated = false;
  auto size = static_cast<int64_t>(b->size);
  stats_.allocated_bytes -= size;
  if (b->events.empty()) {
    cached_[b->size].push_back(b);
    stats_.cached_bytes += size;
  } else {
    pending_.push_back(b);
    stats_.pending_bytes += size;
  }
}

bool CachingHostAllocator::record_event(void* ptr, StreamHandle stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  const char* p = static_cast<const char*>(ptr);
  auto it = blocks_.upper_bound(p);  // the first block after p; p lies in the one before
  if (it == blocks_.begin()) return false;
  --it;
  Block* b = it->second;
  if (p >= b->ptr + b->size) return false;
  GLASS_CHECK(b->allocated, "record_event(): the pinned block holding ", ptr,
              " was already freed; record the event right after queueing the copy, while the "
              "tensor is still alive");
  EventHandle e = runtime_.event_create(runtime_.stream_device(stream), /*enable_timing=*/false);
  runtime_.event_record(e, stream);
  b->events.push_back(e);
  return true;
}

void CachingHostAllocator::process_events() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    Block* b = *it;
    std::erase_if(b->events, [&](EventHandle e) {
      if (!runtime_.event_query(e)) return false;
      runtime_.event_destroy(e);
      return true;
    });
    if (!b->events.empty()) {
      ++it;
      continue;
    }
    cached_[b->size].push_back(b);
    stats_.pending_bytes -= static_cast<int64_t>(b->size);
    stats_.cached_bytes += static_cast<int64_t>(b->size);
    it = pending_.erase(it);
  }
}

HostMemoryStats CachingHostAllocator::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingHostAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.max_allocated_bytes = stats_.allocated_bytes;
}

void CachingHostAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  process_events();
  for (auto& [size, list] : cached_) {
    for (Block* b : list) {
      runtime_.host_free(b->ptr);
      blocks_.erase(b->ptr);
      stats_.num_host_free++;
      stats_.cached_bytes -= static_cast<int64_t>(b->size);
      stats_.reserved_bytes -= static_cast<int64_t>(b->size);
      delete b;
    }
  }
  cached_.clear();
}

CachingHostAllocator& host_allocator() {
  static auto* a = new CachingHostAllocator(runtime());
  return *a;
}

bool host_allocator_record_event(void* ptr, StreamHandle stream) {
  return host_allocator().record_event(ptr, stream);
}
HostMemoryStats host_memory_stats() { return host_allocator().stats(); }
void host_empty_cache() { host_allocator().empty_cache(); }

}  // namespace glass::cuda
