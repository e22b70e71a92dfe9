// cuda/sim/shared_array.h — what a GLASS_SHARED name is in the simulator: a view that sees
// each element access.
//
// GLASS_SHARED(float[17], tile, 16) declares the storage (a thread_local array: one
// block's shared memory, device.h) and a local SharedView named `tile` over it. tile[i]
// is a row view, tile[i][j] a float&: the same types of expression as on the array, so
// kernel code is unchanged, but each element access first tells the watcher which
// element it touches (kernel_watch.h), which the shared-memory race detector and the
// counters need. Whether the access reads or writes, the watcher finds out afterwards by
// comparing the element's bytes (shared_race.h): a T& cannot tell.
//
// A block's shared memory starts undefined on a GPU; here it would hold what the previous
// block on the same OS thread left, and a write of the same value again would go unseen.
// So, while watching, an array's bytes are filled with a pattern (changing from block to
// block) when the block first touches it; a kernel that reads before writing then reads
// garbage, as it might on a GPU. An array first used through a pointer is left alone.
//
// Differences from a real array, all compile-time: sizeof(tile) is the view's size, and
// `tile` converts to a pointer (T*, or U(*)[M]) instead of decaying; accesses through
// such a pointer are not watched (atomicAdd(&s[0], 1) is meant not to be).
//
// Invariant: a view's operator[] returns a reference to exactly the element the array
// would; with watching off it costs a thread-local load and a branch.
#pragma once

#include <concepts>
#include <cstddef>
#include <type_traits>

#include "cuda/sim/kernel_watch.h"

namespace glass::cuda::sim {

// The elements of one row of a multi-dimensional shared array (T may itself be an array).
template <class T>
class SharedRow {
 public:
  using Row = std::remove_extent_t<T>;
  constexpr SharedRow(T* row, const void* array, size_t array_bytes, const char* name)
      : row_(row), array_(array), array_bytes_(array_bytes), name_(name) {}

  template <std::integral I>
  auto operator[](I i) const -> decltype(auto) {
    if constexpr (std::is_array_v<T>) {
      return SharedRow<Row>(row_[i], array_, array_bytes_, name_);
    } else {
      if (detail::t_watch) [[unlikely]]
        detail::watch_shared(&row_[i], sizeof(T), array_, array_bytes_, name_);
      return static_cast<T&>(row_[i]);
    }
  }
  operator T*() const {  // NOLINT: decays as an array does
    if (detail::t_watch) [[unlikely]]
      detail::watch_decay(array_, array_bytes_);
    return row_;
  }

 private:
  T* row_;
  const void* array_;
  size_t array_bytes_;
  const char* name_;
};

// A shared array of N elements of T (T may be an array type), or of unknown length
// (N == 0: the launch's dynamic shared memory).
template <class T, size_t N>
class SharedView {
 public:
  SharedView(T* data, const char* name) : data_(data), name_(name) {}
  SharedView(void* data, size_t bytes, const char* name)
      : data_(static_cast<T*>(data)), bytes_(bytes), name_(name) {}

  template <std::integral I>
  auto operator[](I i) const -> decltype(auto) {
    return SharedRow<T>(data_, data_, bytes_, name_)[i];
  }
  operator T*() const {  // NOLINT: decays as an array does
    if (detail::t_watch) [[unlikely]]
      detail::watch_decay(data_, bytes_);
    return data_;
  }

 private:
  T* data_;
  size_t bytes_ = sizeof(T) * N;
  const char* name_;
};

}  // namespace glass::cuda::sim
