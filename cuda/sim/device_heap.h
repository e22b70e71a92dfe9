// cuda/sim/device_heap.h — the driver's allocator inside one device's memory.
//
// What cudaMalloc does below PyTorch's caching allocator: hands out ranges of one
// device's memory in 2 MiB pages, best fit (the smallest free range that fits; the lowest
// address among equals), and merges a freed range with its free neighbours, so freeing
// everything always leaves one range as big as the device. It works on offsets from the
// start of the device's arena and knows nothing of addresses or threads (the caller
// locks).
//
// Invariant: the free ranges and the allocated ranges tile [0, capacity) exactly, no
// two free ranges touch (they would have been merged), and every range starts and
// ends on a multiple of kPageBytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace glass::cuda::sim {

class DeviceHeap {
 public:
  static constexpr size_t kPageBytes = size_t{2} << 20;

  explicit DeviceHeap(size_t capacity);  // capacity: a multiple of kPageBytes

  // The offset of a new range of at least nbytes (rounded up to kPageBytes), or nullopt
  // when no free range is big enough (out of memory is an answer, not an error).
  std::optional<size_t> allocate(size_t nbytes);
  // Frees the range that allocate() returned at `offset`; returns its size, or nullopt
  // (changing nothing) when no allocated range starts there.
  std::optional<size_t> release(size_t offset);
  // The allocated range (offset, size) containing `offset`, if any.
  std::optional<std::pair<size_t, size_t>> allocation_containing(size_t offset) const;

  size_t capacity() const { return capacity_; }
  size_t bytes_in_use() const { return in_use_; }
  size_t largest_free_range() const;
  size_t num_free_ranges() const { return free_by_offset_.size(); }

 private:
  void add_free(size_t offset, size_t size);
  void remove_free(std::map<size_t, size_t>::iterator it);

  size_t capacity_;
  size_t in_use_ = 0;
  std::map<size_t, size_t> allocated_;                // offset -> size
  std::map<size_t, size_t> free_by_offset_;           // offset -> size
  std::set<std::pair<size_t, size_t>> free_by_size_;  // (size, offset): best fit
};

}  // namespace glass::cuda::sim
