// cuda/caching_allocator.cpp — the device caching allocator; the design is Note [Caching
// allocator design] in caching_allocator.h.
//
// Index:
//   [SECTION] sizes          rounding, segment sizes, when to split
//   [SECTION] blocks         Block, the per-stream ordered pools
//   [SECTION] events         a pool of reusable events for record_stream
//   [SECTION] one device     DeviceCachingAllocator: malloc, free, events, out of memory
//   [SECTION] the allocator  CUDACachingAllocator and torch.cuda's functions
//
// Invariant: each device's state (pools, blocks, statistics) is touched only under that
// device's mutex; the event pool has its own, always taken after a device's.
#include "cuda/caching_allocator.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <set>
#include <unordered_map>

#include "core/error.h"
#include "core/events.h"
#include "cuda/sim/sim_runtime.h"
#include "cuda/stream.h"

namespace glass::cuda {

std::string format_bytes(int64_t nbytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  char buf[64];
  double n = static_cast<double>(nbytes);
  if (nbytes < 1024) {
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(nbytes));
  } else if (n < kMiB) {
    std::snprintf(buf, sizeof buf, "%.2f KiB", n / kKiB);
  } else if (n < kGiB) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", n / kMiB);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", n / kGiB);
  }
  return buf;
}

namespace detail {
namespace {

// ---- [SECTION] sizes ----------------------------------------------------------------------

constexpr size_t kMinBlockSize = 512;                // every size is a multiple of this
constexpr size_t kSmallSize = size_t{1} << 20;       // largest request of the small pool
constexpr size_t kSmallBuffer = size_t{2} << 20;     // a small-pool segment
constexpr size_t kMinLargeAlloc = size_t{10} << 20;  // below this, a large request shares...
constexpr size_t kLargeBuffer = size_t{20} << 20;    // ...a 20 MiB segment
constexpr size_t kRoundLarge = size_t{2} << 20;      // bigger segments: multiples of 2 MiB

size_t round_size(size_t nbytes) {
  return (nbytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t segment_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

// ---- [SECTION] blocks ---------------------------------------------------------------------

struct BlockPool;

// A range of one segment: handed out (allocated), free in a pool, or freed but waiting for
// the events of the streams recorded by record_stream (event_count > 0).
struct Block {
  Block(StreamHandle s, size_t n, BlockPool* p, char* address)
      : stream(s), size(n), pool(p), ptr(address) {}

  StreamHandle stream;  // the stream it was allocated on; its free list
  size_t size;          // bytes, a multiple of 512
  BlockPool* pool;
  char* ptr;
  bool allocated = false;
  int event_count = 0;                    // record_stream events not yet completed
  std::vector<StreamHandle> stream_uses;  // other streams that used it (record_stream)
  Block* prev = nullptr;                  // neighbours in the same segment, by address
  Block* next = nullptr;

  bool is_split() const { return prev != nullptr || next != nullptr; }
  bool is_free() const { return !allocated && event_count == 0; }
};

// Free blocks in (stream, size, address) order: the entries of one stream are its free list,
// and lower_bound({stream, size}) is best fit with ties to the lowest address.
struct BlockOrder {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) return std::less<StreamHandle>()(a->stream, b->stream);
    if (a->size != b->size) return a->size < b->size;
    return std::less<char*>()(a->ptr, b->ptr);
  }
};

struct BlockPool {
  explicit BlockPool(bool small_) : small(small_) {}
  std::set<Block*, BlockOrder> blocks;
  bool small;
};

bool should_split(const Block& block, size_t size) {
  size_t remaining = block.size - size;
  return block.pool->small ? remaining >= kMinBlockSize : remaining > kSmallSize;
}

}  // namespace

// ---- [SECTION] events ---------------------------------------------------------------------

// record_stream needs an event per stream per freed block; creating and destroying one each
// time would cost a driver call each, so used events go back to a per-device free list.
class EventPool {
 public:
  explicit EventPool(Runtime& runtime) : runtime_(runtime) {}
  ~EventPool() {
    for (auto& [device, list] : free_)
      for (EventHandle e : list) runtime_.event_destroy(e);
  }
  EventHandle acquire(int device) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& list = free_[device];
      if (!list.empty()) {
        EventHandle e = list.back();
        list.pop_back();
        return e;
      }
    }
    return runtime_.event_create(device, /*enable_timing=*/false);
  }
  void release(int device, EventHandle event) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_[device].push_back(event);
  }

 private:
  Runtime& runtime_;
  std::mutex mutex_;
  std::unordered_map<int, std::vector<EventHandle>> free_;
};

// ---- [SECTION] one device -----------------------------------------------------------------

class DeviceCachingAllocator {
 public:
  DeviceCachingAllocator(Runtime& runtime, EventPool& events, int device, bool caching)
      : runtime_(runtime),
        sim_(dynamic_cast<sim::SimRuntime*>(&runtime)),
        events_(events),
        device_(device),
        caching_(caching) {}

  ~DeviceCachingAllocator() {
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      release_cached_blocks();
    } catch (...) {
      // A destructor must not throw; a sticky device error surfaces on the next CUDA call.
    }
    // Blocks still held by tensors keep their device memory; only the bookkeeping goes.
    for (auto& [ptr, block] : active_) delete block;
    for (BlockPool* pool : {&small_, &large_})
      for (Block* b : pool->blocks) delete b;
  }

  void* malloc(size_t nbytes, StreamHandle stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    process_events();
    size_t size = round_size(nbytes);
    BlockPool& pool = size <= kSmallSize ? small_ : large_;
    Block* block = caching_ ? take_free_block(pool, size, stream) : nullptr;
    bool hit = block != nullptr;
    if (!block) {
      size_t want = caching_ ? segment_size(size) : size;
      block = alloc_segment(want, stream, pool);
      if (!block) {
        release_cached_blocks();
        stats_.num_alloc_retries++;
        block = alloc_segment(want, stream, pool);
      }
      if (!block) {
        stats_.num_ooms++;
        throw_out_of_memory(size, want);
      }
    }
    if (caching_ && should_split(*block, size)) split(block, size);

    block->allocated = true;
    active_.emplace(block->ptr, block);
    stats_.num_allocs++;
    stats_.num_cache_hits += hit ? 1 : 0;
    stats_.active_blocks++;
    stats_.allocated_bytes += static_cast<int64_t>(block->size);
    stats_.max_allocated_bytes = std::max(stats_.max_allocated_bytes, stats_.allocated_bytes);
    if (sim_) sim_->register_block(block->ptr, block->size);
    if (events::enabled())
      events::publish({.kind = events::Kind::Allocation,
                       .device = Device(kCUDA, device_),
                       .bytes = static_cast<int64_t>(block->size),
                       .value = hit ? 1 : 0,
                       .ptr = block->ptr});
    return block->ptr;
  }

  // False when ptr is not a block of this device.
  bool free(void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = active_.find(ptr);
    if (it == active_.end()) return false;
    Block* block = it->second;
    active_.erase(it);
    block->allocated = false;
    stats_.active_blocks--;
    stats_.allocated_bytes -= static_cast<int64_t>(block->size);
    if (sim_) sim_->unregister_block(block->ptr);
    if (events::enabled())
      events::publish({.kind = events::Kind::Free,
                       .device = Device(kCUDA, device_),
                       .bytes = static_cast<int64_t>(block->size),
                       .value = caching_ ? 1 : 0,
                       .ptr = block->ptr});
    if (block->stream_uses.empty()) {
      free_block(block);
    } else {
      record_events(block);
    }
    return true;
  }

  // False when ptr is not a block of this device.
  bool record_stream(void* ptr, StreamHandle stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = active_.find(ptr);
    if (it == active_.end()) return false;
    Block* block = it->second;
    // Work on the block's own stream is ordered with its reuse already.
    if (stream == block->stream) return true;
    auto& uses = block->stream_uses;
    if (std::find(uses.begin(), uses.end(), stream) == uses.end()) uses.push_back(stream);
    return true;
  }

  MemoryStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    MemoryStats s = stats_;
    // Counted when asked rather than kept up to date: a split or merge changes it.
    for (const BlockPool* pool : {&small_, &large_}) {
      for (const Block* b : pool->blocks) {
        if (!b->is_split()) continue;
        s.inactive_split_blocks++;
        s.inactive_split_bytes += static_cast<int64_t>(b->size);
      }
    }
    return s;
  }

  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.max_allocated_bytes = stats_.allocated_bytes;
    stats_.max_reserved_bytes = stats_.reserved_bytes;
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    release_cached_blocks();
  }

 private:
  // Best fit on the stream's free list: the smallest block >= size, lowest address first.
  Block* take_free_block(BlockPool& pool, size_t size, StreamHandle stream) {
    Block key(stream, size, &pool, nullptr);
    auto it = pool.blocks.lower_bound(&key);
    if (it == pool.blocks.end() || (*it)->stream != stream) return nullptr;
    Block* block = *it;
    pool.blocks.erase(it);
    return block;
  }

  Block* alloc_segment(size_t size, StreamHandle stream, BlockPool& pool) {
    void* ptr = runtime_.malloc(device_, size);
    if (!ptr) return nullptr;
    stats_.segments++;
    stats_.num_device_alloc++;
    stats_.reserved_bytes += static_cast<int64_t>(size);
    stats_.max_reserved_bytes = std::max(stats_.max_reserved_bytes, stats_.reserved_bytes);
    return new Block(stream, size, &pool, static_cast<char*>(ptr));
  }

  // Hands out the front `size` bytes of block; the rest becomes a free block after it.
  void split(Block* block, size_t size) {
    auto* rest = new Block(block->stream, block->size - size, block->pool, block->ptr + size);
    rest->prev = block;
    rest->next = block->next;
    if (rest->next) rest->next->prev = rest;
    block->next = rest;
    block->size = size;
    block->pool->blocks.insert(rest);
    stats_.num_splits++;
  }

  // A block nobody uses any more: merge it with free neighbours and cache it, or (caching
  // off) give it back to the device.
  void free_block(Block* block) {
    GLASS_INTERNAL_ASSERT(block->is_free(), "freeing a block that is in use or has pending events");
    if (!caching_) {
      // cudaFree waits for the device to go idle (kernels queued before the free may still
      // use the block); the Runtime contract does not promise that, so wait here. A failed
      // wait (a sticky kernel error) is reported by the next synchronizing call instead:
      // this runs from tensor destructors, which must not throw.
      try {
        runtime_.device_synchronize(device_);
      } catch (const Error&) {
      }
      release_segment(block);
      return;
    }
    merge(block, block->prev);
    merge(block, block->next);
    block->pool->blocks.insert(block);
  }

  // Absorbs the neighbour src into dst if src is free (not handed out, no pending events).
  void merge(Block* dst, Block* src) {
    if (!src || !src->is_free()) return;
    dst->pool->blocks.erase(src);
    if (dst->prev == src) {
      dst->ptr = src->ptr;
      dst->prev = src->prev;
      if (dst->prev) dst->prev->next = dst;
    } else {
      dst->next = src->next;
      if (dst->next) dst->next->prev = dst;
    }
    dst->size += src->size;
    delete src;
    stats_.num_merges++;
  }

  // record_stream: an event at the current end of every stream that used the block; the
  // block is free once they have all completed.
  // Runs from a tensor's destructor, so it never throws. A record can fail only when the
  // device has a sticky error (a kernel failed): then no queued work will ever run again,
  // nothing can still touch the block, and it is free at once.
  void record_events(Block* block) {
    for (StreamHandle s : block->stream_uses) {
      int device = -1;
      EventHandle e = nullptr;
      try {
        device = runtime_.stream_device(s);
        e = events_.acquire(device);
        runtime_.event_record(e, s);
      } catch (const std::exception&) {
        if (e != nullptr) events_.release(device, e);
        continue;
      }
      pending_.push_back({e, device, block});
      block->event_count++;
    }
    block->stream_uses.clear();
    if (block->event_count == 0) {
      free_block(block);
      return;
    }
    stats_.pending_free_blocks++;
  }

  // Polls (never waits for) the events of freed blocks; completed ones free their block.
  void process_events() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (runtime_.event_query(it->event)) {
        complete(*it);
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void synchronize_and_free_events() {
    for (const Pending& p : pending_) {
      runtime_.event_synchronize(p.event);
      complete(p);
    }
    pending_.clear();
  }

  struct Pending {
    EventHandle event;
    int event_device;
    Block* block;
  };

  void complete(const Pending& p) {
    events_.release(p.event_device, p.event);
    if (--p.block->event_count > 0) return;
    stats_.pending_free_blocks--;
    free_block(p.block);
  }

  // Gives every whole free segment back to the device, after the pending frees complete.
  void release_cached_blocks() {
    synchronize_and_free_events();
    std::vector<Block*> whole;
    for (BlockPool* pool : {&small_, &large_})
      for (Block* b : pool->blocks)
        if (!b->is_split()) whole.push_back(b);
    if (whole.empty()) return;
    // cudaFree waits for the device to go idle before it unmaps; say so explicitly, so that
    // no queued kernel can still be using a segment when the runtime hands it out again.
    runtime_.device_synchronize(device_);
    for (Block* b : whole) {
      b->pool->blocks.erase(b);
      release_segment(b);
    }
  }

  void release_segment(Block* block) {
    GLASS_INTERNAL_ASSERT(!block->is_split(), "only whole segments go back to the device");
    runtime_.free(device_, block->ptr);
    stats_.segments--;
    stats_.num_device_free++;
    stats_.reserved_bytes -= static_cast<int64_t>(block->size);
    delete block;
  }

  [[noreturn]] void throw_out_of_memory(size_t size, size_t segment) {
    const DeviceProperties& props = runtime_.properties(device_);
    std::string why = segment == size ? ""
                                      : " (the allocator asked the device for a " +
                                            format_bytes(static_cast<int64_t>(segment)) +
                                            " segment to hold it)";
    GLASS_CHECK(
        false, "CUDA out of memory. Tried to allocate ", format_bytes(static_cast<int64_t>(size)),
        " (device ", device_, "; capacity ", format_bytes(props.total_memory), "; ",
        format_bytes(stats_.allocated_bytes), " allocated by tensors; ",
        format_bytes(stats_.reserved_bytes), " reserved by the allocator)", why,
        ". The cache was already emptied and the request retried; free tensors you no "
        "longer need, or make the batch smaller",
        runtime_.is_simulated() ? " (the simulated GPU's capacity is set by GLASS_SIM_MEMORY_MB)"
                                : "",
        ".");
  }

  Runtime& runtime_;
  // The simulated GPU, when it is the runtime: its stream-race checker is told which range
  // is one tensor's block, so a race report names the tensor, not the segment around it.
  sim::SimRuntime* sim_;
  EventPool& events_;
  const int device_;
  const bool caching_;
  std::mutex mutex_;
  BlockPool small_{true}, large_{false};
  std::unordered_map<void*, Block*> active_;  // blocks handed out, by address
  std::vector<Pending> pending_;              // record_stream events of freed blocks
  MemoryStats stats_;
};

}  // namespace detail

// ---- [SECTION] the allocator --------------------------------------------------------------

bool CUDACachingAllocator::caching_enabled_by_env() {
  const char* v = std::getenv("GLASS_CUDA_CACHING");
  return !(v && std::string(v) == "0");
}

CUDACachingAllocator::CUDACachingAllocator(Runtime& runtime, bool caching)
    : runtime_(runtime), caching_(caching), events_(new detail::EventPool(runtime)) {
  int n = runtime.device_count();
  for (int d = 0; d < n; ++d)
    devices_.push_back(
        std::make_unique<detail::DeviceCachingAllocator>(runtime, *events_, d, caching));
}

// The device allocators go first: their pending events return to the pool before it goes.
CUDACachingAllocator::~CUDACachingAllocator() { devices_.clear(); }

detail::DeviceCachingAllocator& CUDACachingAllocator::of(int device) {
  if (device < 0) device = current_device();
  int n = static_cast<int>(devices_.size());
  GLASS_CHECK(device >= 0 && device < n, "cuda:", device, " does not exist; this machine has ", n,
              " CUDA device", (n == 1 ? "" : "s"));
  return *devices_[device];
}

void* CUDACachingAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  int d = current_device();
  StreamHandle stream = getCurrentCUDAStream(static_cast<DeviceIndex>(d)).stream();
  return of(d).malloc(nbytes, stream);
}

void CUDACachingAllocator::deallocate(void* ptr, size_t nbytes) {
  (void)nbytes;  // the block knows its size
  if (!ptr) return;
  // A handful of devices: asking each is cheaper than keeping a second map in sync.
  for (auto& d : devices_)
    if (d->free(ptr)) return;
  GLASS_INTERNAL_ASSERT(false, "deallocate(): ", ptr, " was not allocated by this allocator");
}

Device CUDACachingAllocator::device() const { return Device(kCUDA, current_device()); }

void CUDACachingAllocator::record_stream(void* ptr, StreamHandle stream) {
  if (!ptr) return;  // an empty tensor has no block
  for (auto& d : devices_)
    if (d->record_stream(ptr, stream)) return;
  GLASS_CHECK(false, "record_stream(): ", ptr,
              " is not the start of a block from the CUDA caching allocator; pass the data "
              "pointer of a CUDA tensor's storage (storage().data()), not of a view into it");
}

MemoryStats CUDACachingAllocator::stats(int device) { return of(device).stats(); }
void CUDACachingAllocator::reset_peak_stats(int device) { of(device).reset_peak(); }
void CUDACachingAllocator::empty_cache() {
  for (auto& d : devices_) d->empty_cache();
}

CUDACachingAllocator& caching_allocator() {
  static auto* a = new CUDACachingAllocator(runtime());
  return *a;
}

int64_t memory_allocated(int device) { return memory_stats(device).allocated_bytes; }
int64_t max_memory_allocated(int device) { return memory_stats(device).max_allocated_bytes; }
int64_t memory_reserved(int device) { return memory_stats(device).reserved_bytes; }
int64_t max_memory_reserved(int device) { return memory_stats(device).max_reserved_bytes; }
void reset_peak_memory_stats(int device) { caching_allocator().reset_peak_stats(device); }
MemoryStats memory_stats(int device) { return caching_allocator().stats(device); }
void empty_cache() { caching_allocator().empty_cache(); }
void record_stream(void* ptr, StreamHandle stream) {
  caching_allocator().record_stream(ptr, stream);
}

}  // namespace glass::cuda
