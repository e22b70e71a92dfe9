// cuda/sim/pinned.cpp — mmap + mlock, and the registry that answers is_pinned.
#include "cuda/sim/pinned.h"

#include <sys/mman.h>
#include <unistd.h>

#include <iterator>

#include "core/error.h"

namespace glass::cuda::sim {
namespace {

size_t page_round(size_t n) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

}  // namespace

void* PinnedHostMemory::allocate(size_t nbytes) {
  const size_t size = page_round(nbytes == 0 ? 1 : nbytes);
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  // mlock also faults every page in, so the first copy from the block pays no page faults.
  if (mlock(p, size) != 0) {
    munmap(p, size);
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  blocks_.emplace(reinterpret_cast<uintptr_t>(p), size);
  bytes_ += size;
  return p;
}

void PinnedHostMemory::free(void* ptr) {
  if (ptr == nullptr) return;  // as cudaFreeHost(nullptr)
  const bool inside = contains(ptr);
  size_t size = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
    GLASS_CHECK(
        it != blocks_.end(), "host_free(", ptr,
        "): the pointer was not returned by host_alloc, or was freed already.",
        inside ? " It points into the middle of a pinned block; pass the block's start." : "");
    size = it->second;
    blocks_.erase(it);
    bytes_ -= size;
  }
  munlock(ptr, size);
  munmap(ptr, size);
}

bool PinnedHostMemory::contains(const void* p) const { return contains_range(p, 1); }

bool PinnedHostMemory::contains_range(const void* p, size_t nbytes) const {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.upper_bound(a);
  if (it == blocks_.begin()) return false;
  --it;
  // Written as a difference so that a huge nbytes cannot wrap around and pass.
  const size_t offset = a - it->first;
  return offset < it->second && (nbytes == 0 ? 1 : nbytes) <= it->second - offset;
}

size_t PinnedHostMemory::bytes_pinned() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

}  // namespace glass::cuda::sim
