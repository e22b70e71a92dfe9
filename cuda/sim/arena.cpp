// cuda/sim/arena.cpp — the two mappings, address translation, and per-device heaps.
//
// Also defines address_space.h: g_host_offset and is_device_address, which read the
// arena's bounds from two atomics so that code which never started the simulator (a
// CPU-only program asking "is this a device pointer?") gets a plain "no".
#include "cuda/sim/arena.h"

#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>

#include "core/error.h"
#include "cuda/sim/address_space.h"
#include "cuda/sim/device_heap.h"

namespace glass::cuda::sim {

std::ptrdiff_t g_host_offset = 0;

namespace {
std::atomic<uintptr_t> g_arena_begin{0}, g_arena_end{0};
std::atomic<bool> g_arena_exists{false};

std::string hex(uintptr_t a) {
  std::ostringstream out;
  out << "0x" << std::hex << a;
  return out.str();
}
}  // namespace

bool is_device_address(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  return a >= g_arena_begin.load(std::memory_order_acquire) &&
         a < g_arena_end.load(std::memory_order_acquire);
}

struct Arena::Slice {
  mutable std::mutex mutex;
  DeviceHeap heap;
  explicit Slice(size_t capacity) : heap(capacity) {}
};

Arena::Arena(int devices, size_t bytes_per_device)
    : devices_(devices), bytes_per_device_(bytes_per_device) {
  GLASS_INTERNAL_ASSERT(devices >= 1 && bytes_per_device % DeviceHeap::kPageBytes == 0);
  GLASS_INTERNAL_ASSERT(!g_arena_exists.exchange(true), "a second simulator arena");
  total_ = bytes_per_device * static_cast<size_t>(devices);
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  // Over-reserve by one page so the device view can start on a 2 MiB boundary, as a
  // GPU's allocations do.
  reservation_bytes_ = total_ + DeviceHeap::kPageBytes;
  reservation_ = mmap(nullptr, reservation_bytes_, PROT_NONE, flags, -1, 0);
  if (reservation_ == MAP_FAILED) {
    const int err = errno;
    g_arena_exists = false;
    GLASS_CHECK(false, "simulated GPU: cannot reserve ", total_ >> 20, " MiB of address space for ",
                devices, " devices (", std::strerror(err),
                "). Lower GLASS_SIM_MEMORY_MB or GLASS_SIM_DEVICES.");
  }
  const auto raw = reinterpret_cast<uintptr_t>(reservation_);
  base_ = (raw + DeviceHeap::kPageBytes - 1) / DeviceHeap::kPageBytes * DeviceHeap::kPageBytes;
  // The accessible view starts on a 2 MiB boundary too, and asks for transparent huge
  // pages (this kernel's THP mode is often `madvise`): a kernel streaming 192 MiB through
  // 4 KiB pages spends its time in TLB misses and page faults (the CPU allocator does
  // the same, core/allocator.cpp).
  host_bytes_ = total_ + DeviceHeap::kPageBytes;
  void* host = mmap(nullptr, host_bytes_, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (host == MAP_FAILED) {
    const int err = errno;
    munmap(reservation_, reservation_bytes_);
    g_arena_exists = false;
    GLASS_CHECK(false, "simulated GPU: cannot map ", total_ >> 20, " MiB of device memory (",
                std::strerror(err), "). Lower GLASS_SIM_MEMORY_MB or GLASS_SIM_DEVICES.");
  }
  host_mapping_ = host;
  const auto host_raw = reinterpret_cast<uintptr_t>(host);
  host_ = reinterpret_cast<char*>((host_raw + DeviceHeap::kPageBytes - 1) / DeviceHeap::kPageBytes *
                                  DeviceHeap::kPageBytes);
  madvise(host_, total_, MADV_HUGEPAGE);  // advice only: without THP, 4 KiB pages serve
  for (int d = 0; d < devices; ++d) slices_.push_back(std::make_unique<Slice>(bytes_per_device));
  g_host_offset = static_cast<std::ptrdiff_t>(reinterpret_cast<uintptr_t>(host_) - base_);
  g_arena_begin.store(base_, std::memory_order_release);
  g_arena_end.store(base_ + total_, std::memory_order_release);
}

Arena::~Arena() {
  g_arena_end.store(0, std::memory_order_release);
  g_arena_begin.store(0, std::memory_order_release);
  munmap(host_mapping_, host_bytes_);
  munmap(reservation_, reservation_bytes_);
  g_arena_exists = false;
}

Arena::Slice& Arena::slice(int device) const {
  GLASS_INTERNAL_ASSERT(device >= 0 && device < devices_, "device ", device);
  return *slices_[static_cast<size_t>(device)];
}

int Arena::device_of(const void* p) const {
  const auto a = reinterpret_cast<uintptr_t>(p);
  if (a < base_ || a >= base_ + total_) return -1;
  return static_cast<int>((a - base_) / bytes_per_device_);
}

void* Arena::malloc(int device, size_t nbytes) {
  Slice& s = slice(device);
  std::optional<size_t> offset;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    offset = s.heap.allocate(nbytes);
  }
  if (!offset) return nullptr;
  return reinterpret_cast<void*>(base_ + static_cast<size_t>(device) * bytes_per_device_ + *offset);
}

size_t Arena::free(int device, void* ptr) {
  const int owner = device_of(ptr);
  GLASS_CHECK(owner >= 0, "free(cuda:", device, ", ", ptr,
              "): the pointer is not device memory of the simulated GPU (device memory lies in [",
              hex(base_), ", ", hex(base_ + total_),
              ")); free host memory with std::free, pinned memory with host_free.");
  GLASS_CHECK(owner == device, "free(cuda:", device, ", ", ptr,
              "): the pointer is memory of cuda:", owner, ", not cuda:", device,
              "; free it on cuda:", owner, ".");
  Slice& s = slice(device);
  const uintptr_t slice_base = base_ + static_cast<size_t>(device) * bytes_per_device_;
  std::optional<size_t> size;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    size = s.heap.release(reinterpret_cast<uintptr_t>(ptr) - slice_base);
  }
  GLASS_CHECK(size.has_value(), "free(cuda:", device, ", ", ptr,
              "): the pointer was not returned by malloc on cuda:", device,
              ", or was freed already (a double free, or a pointer into the middle of an "
              "allocation).");
  // The pages go back to the OS: resident memory drops, and the range reads as zeros
  // when it is handed out again.
  madvise(host_ + (reinterpret_cast<uintptr_t>(ptr) - base_), *size, MADV_DONTNEED);
  return *size;
}

std::optional<Arena::Range> Arena::allocation_containing(const void* p) const {
  const int device = device_of(p);
  if (device < 0) return std::nullopt;
  const uintptr_t slice_base = base_ + static_cast<size_t>(device) * bytes_per_device_;
  Slice& s = slice(device);
  std::lock_guard<std::mutex> lock(s.mutex);
  auto found = s.heap.allocation_containing(reinterpret_cast<uintptr_t>(p) - slice_base);
  if (!found) return std::nullopt;
  return Range{slice_base + found->first, found->second};
}

size_t Arena::bytes_in_use(int device) const {
  Slice& s = slice(device);
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.heap.bytes_in_use();
}

size_t Arena::largest_free_range(int device) const {
  Slice& s = slice(device);
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.heap.largest_free_range();
}

}  // namespace glass::cuda::sim
