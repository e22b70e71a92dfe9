// cuda/sim/device_heap.cpp — best fit with splitting and merging over 2 MiB pages.
//
// Two indexes over the same free ranges: by offset (to find a freed range's neighbours)
// and by (size, offset) (to find the best fit in O(log n)). Every change goes through
// add_free/remove_free, which keep the two in step.
#include "cuda/sim/device_heap.h"

#include "core/error.h"

namespace glass::cuda::sim {

DeviceHeap::DeviceHeap(size_t capacity) : capacity_(capacity) {
  GLASS_INTERNAL_ASSERT(capacity > 0 && capacity % kPageBytes == 0, "capacity ", capacity);
  add_free(0, capacity);
}

std::optional<size_t> DeviceHeap::allocate(size_t nbytes) {
  if (nbytes == 0 || nbytes > capacity_) return std::nullopt;
  const size_t size = (nbytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  auto fit = free_by_size_.lower_bound({size, 0});
  if (fit == free_by_size_.end()) return std::nullopt;
  const size_t offset = fit->second;
  const size_t free_size = fit->first;
  remove_free(free_by_offset_.find(offset));
  if (free_size > size) add_free(offset + size, free_size - size);  // split: the tail stays free
  allocated_.emplace(offset, size);
  in_use_ += size;
  return offset;
}

std::optional<size_t> DeviceHeap::release(size_t offset) {
  auto it = allocated_.find(offset);
  if (it == allocated_.end()) return std::nullopt;
  const size_t size = it->second;
  allocated_.erase(it);
  in_use_ -= size;
  size_t start = offset, end = offset + size;
  // Merge with the free range just after, then the one just before.
  auto next = free_by_offset_.find(end);
  if (next != free_by_offset_.end()) {
    end += next->second;
    remove_free(next);
  }
  auto after = free_by_offset_.lower_bound(start);
  if (after != free_by_offset_.begin()) {
    auto prev = std::prev(after);
    if (prev->first + prev->second == start) {
      start = prev->first;
      remove_free(prev);
    }
  }
  add_free(start, end - start);
  return size;
}

std::optional<std::pair<size_t, size_t>> DeviceHeap::allocation_containing(size_t offset) const {
  auto it = allocated_.upper_bound(offset);
  if (it == allocated_.begin()) return std::nullopt;
  --it;
  if (offset >= it->first + it->second) return std::nullopt;
  return *it;
}

size_t DeviceHeap::largest_free_range() const {
  return free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
}

void DeviceHeap::add_free(size_t offset, size_t size) {
  free_by_offset_.emplace(offset, size);
  free_by_size_.emplace(size, offset);
}

void DeviceHeap::remove_free(std::map<size_t, size_t>::iterator it) {
  free_by_size_.erase({it->second, it->first});
  free_by_offset_.erase(it);
}

}  // namespace glass::cuda::sim
