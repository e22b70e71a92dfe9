// core/allocator.cpp — the CPU caching allocator.
//
// Size classes: a request is rounded up to one of four steps per power of two (so at
// most 25% is wasted), one of 2 MiB and more to a multiple of 2 MiB (a few percent at
// most, where a quarter would be megabytes), and each class has a LIFO free list, so the block
// reused is the one most recently touched and most likely still in cache. Small blocks (< 512 B)
// are rounded to 64 B steps. One mutex guards the lists; it is held for a few instructions.
#include "core/allocator.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/events.h"

namespace glass {
namespace {

constexpr size_t kAlignment = 64;

// Blocks of at least 2 MiB are aligned to 2 MiB and offered to the kernel as huge-page
// candidates (Linux madvise; what PyTorch does under THP_MEM_ALLOC_ENABLE). One huge page
// replaces 512 small ones: a fresh 64 MiB tensor takes 32 page faults instead of 16k, and
// a transposed walk through it (16 KiB between consecutive reads) stays inside a handful
// of TLB entries instead of touching a new page per element.
constexpr size_t kHugePage = size_t{2} << 20;

void* os_allocate(size_t size) {
  if (size < kHugePage) return std::aligned_alloc(kAlignment, size);
  void* p = std::aligned_alloc(kHugePage, size);  // size is a multiple of 2 MiB here
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p) madvise(p, size, MADV_HUGEPAGE);  // advice only: failure just means small pages
#endif
  return p;
}

size_t round_size(size_t n) {
  if (n <= 512) return (n + 63) / 64 * 64;
  // A 2 MiB multiple, so aligned_alloc(2 MiB, size) is valid. Not a quarter-power-of-two
  // step: a 33 MiB buffer (a sharded model's flat parameters) would take 40 MiB.
  if (n >= kHugePage) return (n + kHugePage - 1) / kHugePage * kHugePage;
  size_t pow2 = 1;
  while (pow2 * 2 < n) pow2 *= 2;  // pow2 < n <= 2 * pow2
  size_t step = pow2 / 4;
  return (n + step - 1) / step * step;
}

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  return (end && *end == '\0') ? x : fallback;
}

class CpuCachingAllocator final : public Allocator {
 public:
  CpuCachingAllocator()
      : caching_(env_int("GLASS_CPU_CACHING", 1) != 0),
        limit_(env_int("GLASS_CPU_CACHE_LIMIT_MB", 2048) << 20) {}
  ~CpuCachingAllocator() override { empty_cache(); }

  void* allocate(size_t nbytes) override {
    size_t size = round_size(nbytes == 0 ? 1 : nbytes);
    void* ptr = nullptr;
    bool hit = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.num_allocs++;
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        ptr = it->second.back();
        it->second.pop_back();
        stats_.cached_bytes -= static_cast<int64_t>(size);
        stats_.num_cache_hits++;
        hit = true;
      }
      stats_.allocated_bytes += static_cast<int64_t>(size);
      if (stats_.allocated_bytes > stats_.peak_allocated_bytes)
        stats_.peak_allocated_bytes = stats_.allocated_bytes;
    }
    if (!ptr) {
      ptr = os_allocate(size);
      if (!ptr) {
        std::lock_guard<std::mutex> lock(mutex_);
        stats_.allocated_bytes -= static_cast<int64_t>(size);
        GLASS_CHECK(false, "CPU allocator: out of memory allocating ", nbytes, " bytes (",
                    stats_.allocated_bytes, " bytes in use, ", stats_.cached_bytes,
                    " cached; glass::cpu_empty_cache() returns the cached ones)");
      }
    }
    if (events::enabled())
      events::publish({.kind = events::Kind::Allocation,
                       .bytes = static_cast<int64_t>(size),
                       .value = hit ? 1 : 0,
                       .ptr = ptr});
    return ptr;
  }

  void deallocate(void* ptr, size_t nbytes) override {
    if (!ptr) return;
    size_t size = round_size(nbytes == 0 ? 1 : nbytes);
    bool kept = false;
    const bool publish = events::enabled();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stats_.allocated_bytes -= static_cast<int64_t>(size);
      if (caching_ && stats_.cached_bytes + static_cast<int64_t>(size) <= limit_) {
        // With subscribers, the block goes on its free list only after its Free event is
        // out: once listed, another thread may get it and publish its Allocation, and a
        // subscriber that tracks blocks by address must see this Free first.
        if (!publish) free_[size].push_back(ptr);
        stats_.cached_bytes += static_cast<int64_t>(size);
        kept = true;
      }
    }
    if (publish)
      events::publish({.kind = events::Kind::Free,
                       .bytes = static_cast<int64_t>(size),
                       .value = kept ? 1 : 0,
                       .ptr = ptr});
    if (!kept) {
      std::free(ptr);
    } else if (publish) {
      std::unique_lock<std::mutex> lock(mutex_);
      if (caching_) {
        free_[size].push_back(ptr);
      } else {
        // Caching was turned off while the event was out (set_caching emptied the lists
        // then): this block goes back to the OS instead of into a list nobody empties.
        stats_.cached_bytes -= static_cast<int64_t>(size);
        lock.unlock();
        std::free(ptr);
      }
    }
  }

  Device device() const override { return Device(kCPU); }

  MemoryStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
  }
  void empty_cache() {
    std::lock_guard<std::mutex> lock(mutex_);
    // Subtracts what it frees rather than zeroing: a block whose Free event is being
    // published (deallocate) is counted as cached but not listed yet.
    for (auto& [size, list] : free_) {
      for (void* p : list) std::free(p);
      stats_.cached_bytes -= static_cast<int64_t>(size * list.size());
    }
    free_.clear();
  }
  void set_caching(bool on) {
    if (!on) empty_cache();
    std::lock_guard<std::mutex> lock(mutex_);
    caching_ = on;
  }
  bool caching() {
    std::lock_guard<std::mutex> lock(mutex_);
    return caching_;
  }
  void set_limit(int64_t bytes) {
    GLASS_CHECK(bytes >= 0, "cpu_set_cache_limit(): limit must be >= 0, got ", bytes);
    empty_cache();
    std::lock_guard<std::mutex> lock(mutex_);
    limit_ = bytes;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  MemoryStats stats_;
  bool caching_;
  int64_t limit_;
};

CpuCachingAllocator& cpu_allocator() {
  // Leaked on purpose: tensors in static objects may be freed after main() returns.
  static auto* a = new CpuCachingAllocator();
  return *a;
}

// Atomic: cuda/ registers it while other threads may already ask (is_pinned()).
std::atomic<Allocator*> g_pinned_allocator{nullptr};

std::array<Allocator*, kNumDeviceTypes>& allocators() {
  static std::array<Allocator*, kNumDeviceTypes> table{&cpu_allocator(), nullptr};
  return table;
}

}  // namespace

Allocator* get_allocator(DeviceType type) {
  Allocator* a = allocators()[static_cast<int>(type)];
  GLASS_CHECK(
      a != nullptr, "no allocator registered for device type ", type,
      (type == kCUDA ? " (glasstorch was built without CUDA, or no GPU is available; "
                       "GLASS_CUDA=sim or glass::cuda::use_simulator() gives the simulated GPU)"
                     : ""));
  return a;
}

void set_allocator(DeviceType type, Allocator* allocator) {
  allocators()[static_cast<int>(type)] = allocator;
}

Allocator* get_pinned_allocator() { return g_pinned_allocator.load(std::memory_order_acquire); }
void set_pinned_allocator(Allocator* allocator) {
  g_pinned_allocator.store(allocator, std::memory_order_release);
}

MemoryStats cpu_memory_stats() { return cpu_allocator().stats(); }
void cpu_reset_peak_memory_stats() { cpu_allocator().reset_peak(); }
void cpu_empty_cache() { cpu_allocator().empty_cache(); }
void cpu_set_caching_enabled(bool enabled) { cpu_allocator().set_caching(enabled); }
bool cpu_caching_enabled() { return cpu_allocator().caching(); }
void cpu_set_cache_limit(int64_t bytes) { cpu_allocator().set_limit(bytes); }

}  // namespace glass
