// cuda/sim/gptr.h — gptr<T>: a pointer into the simulated GPU's global memory.
//
// Kernels declare their pointer parameters as gptr<T> (cuda/kernel.h). Under nvcc that is
// plain T*; in the simulator it is this class, because no macro can intercept p[i] on a
// raw pointer and the simulator must see every global-memory access. A gptr holds a
// device address — the one tensors carry, which faults when host code reads it, as on a
// GPU — and translates it through host_view() (address_space.h) on each dereference.
// Arithmetic, comparison and null behave as on T*, so kernel code reads like CUDA.
//
// Invariant: a gptr holds a device address or null, never a host-view address, and every
// access to global memory through it goes through access() — the one place where bounds
// checks and per-kernel traffic counters belong.
//
// Cost: one add per dereference (and a null test, and a test of the thread-local watch
// flag); a gptr is a trivially copyable
// pointer-sized value, passed to kernels by value like T*.
#pragma once

#include <compare>
#include <cstddef>
#include <type_traits>

#include "cuda/sim/address_space.h"
#include "cuda/sim/kernel_watch.h"

namespace glass::cuda {

namespace sim::detail {
// Throws glass::Error: a kernel dereferenced a null gptr (on a GPU: an illegal address).
[[noreturn]] void null_gptr_access();
}  // namespace sim::detail

template <class T>
class gptr {
 public:
  using element_type = T;

  constexpr gptr() = default;
  constexpr gptr(std::nullptr_t) {}  // NOLINT: as T* converts from nullptr
  // From a device address (a CUDA tensor's data_ptr()). Explicit, so that a host-view
  // address (&p[i] is one) cannot silently become a device address again.
  constexpr explicit gptr(T* device_address) : p_(device_address) {}
  // gptr<T> -> gptr<const T>, as T* -> const T*.
  template <class U>
  requires std::is_same_v<T, const U>
  constexpr gptr(gptr<U> other) : p_(other.get()) {}  // NOLINT: implicit, as on pointers

  T& operator*() const { return *access(p_); }
  T* operator->() const { return access(p_); }
  T& operator[](std::ptrdiff_t i) const { return *access(p_ + i); }

  gptr& operator+=(std::ptrdiff_t n) {
    p_ += n;
    return *this;
  }
  gptr& operator-=(std::ptrdiff_t n) {
    p_ -= n;
    return *this;
  }
  gptr& operator++() { return *this += 1; }
  gptr& operator--() { return *this -= 1; }
  gptr operator++(int) {
    gptr old = *this;
    ++*this;
    return old;
  }
  gptr operator--(int) {
    gptr old = *this;
    --*this;
    return old;
  }
  friend gptr operator+(gptr p, std::ptrdiff_t n) { return p += n; }
  friend gptr operator+(std::ptrdiff_t n, gptr p) { return p += n; }
  friend gptr operator-(gptr p, std::ptrdiff_t n) { return p -= n; }
  friend std::ptrdiff_t operator-(gptr a, gptr b) { return a.p_ - b.p_; }

  friend bool operator==(const gptr&, const gptr&) = default;
  friend auto operator<=>(const gptr&, const gptr&) = default;
  explicit operator bool() const { return p_ != nullptr; }

  // The device address. Host code may pass it on (to the runtime, to another gptr) but
  // never read through it; kernel code has no get() under nvcc, where gptr<T> is T*.
  T* get() const { return p_; }

 private:
  static T* access(T* device_address) {
    if (device_address == nullptr) [[unlikely]]
      sim::detail::null_gptr_access();
    if (sim::detail::t_watch) [[unlikely]]  // counters and bounds checks (kernel_watch.h)
      sim::detail::watch_global(device_address, sizeof(T), std::is_const_v<T>);
    return sim::host_view(device_address);
  }

  T* p_ = nullptr;
};

// The same address as a pointer to U: reinterpret_cast for gptrs. A kernel that moves
// several elements at once (a 16-byte vector of 4 floats) reads through gptr_cast, not
// through reinterpret_cast<U*>(&p[i]): then the simulator sees a sizeof(U)-byte access
// (counted and bounds-checked whole) instead of a one-element one. Under nvcc it is
// reinterpret_cast (cuda/kernel.h).
template <class U, class T>
gptr<U> gptr_cast(gptr<T> p) {
  static_assert(std::is_const_v<U> || !std::is_const_v<T>,
                "gptr_cast: casting away const (a gptr<const T> is read-only)");
  return gptr<U>(reinterpret_cast<U*>(p.get()));
}

}  // namespace glass::cuda
