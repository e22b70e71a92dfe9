// cuda/sim/device_atomics.h — CUDA's atomic functions, for the simulator.
//
// The threads of one block share an OS thread, but the blocks of a grid run at the same
// time on different SM workers, so an atomic on global memory must be a real atomic:
// each function is one std::atomic_ref operation on the host-view address (&p[i] of a
// gptr, or an element of a shared array). Memory order is relaxed, as CUDA's atomics
// are: they order nothing but themselves (fence with __threadfence()).
//
// Invariant: the overloads accept exactly CUDA's types (atomicAdd on int, unsigned,
// unsigned long long, float, double, ...), so code that compiles here compiles under
// nvcc. Each takes a plain pointer or a gptr (p + i, which under nvcc is a plain pointer).
#pragma once

#include <atomic>
#include <concepts>
#include <type_traits>

#include "cuda/sim/gptr.h"
#include "cuda/sim/kernel_watch.h"

namespace glass::cuda::sim::detail {

template <class T, class... U>
concept OneOf = (std::same_as<T, U> || ...);
template <class T>
concept AtomicAddType = OneOf<T, int, unsigned, unsigned long long, float, double>;
template <class T>
concept AtomicSubType = OneOf<T, int, unsigned>;
template <class T>
concept AtomicExchType = OneOf<T, int, unsigned, unsigned long long, float>;
template <class T>
concept AtomicMinMaxType = OneOf<T, int, unsigned, long long, unsigned long long>;
template <class T>
concept AtomicBitType = OneOf<T, int, unsigned, unsigned long long>;

// The atomic view of *address. A shared-memory race is two plain accesses; telling the
// watcher that this one is atomic keeps it out of the race detector (kernel_watch.h).
template <class T>
std::atomic_ref<T> atomic_at(T* address) {
  note_atomic(address);
  return std::atomic_ref<T>(*address);
}

// Replaces *address by next(old) atomically (a compare-and-swap loop); returns old.
template <class T, class F>
T atomic_update(T* address, F next) {
  std::atomic_ref<T> a = atomic_at(address);
  T old = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(old, next(old), std::memory_order_relaxed)) {
  }
  return old;
}

}  // namespace glass::cuda::sim::detail

// Each returns the value *address held before the operation, as CUDA's do.

template <glass::cuda::sim::detail::AtomicAddType T>
T atomicAdd(T* address, std::type_identity_t<T> val) {
  return glass::cuda::sim::detail::atomic_at(address).fetch_add(val, std::memory_order_relaxed);
}
template <glass::cuda::sim::detail::AtomicSubType T>
T atomicSub(T* address, std::type_identity_t<T> val) {
  return glass::cuda::sim::detail::atomic_at(address).fetch_sub(val, std::memory_order_relaxed);
}
template <glass::cuda::sim::detail::AtomicExchType T>
T atomicExch(T* address, std::type_identity_t<T> val) {
  return glass::cuda::sim::detail::atomic_at(address).exchange(val, std::memory_order_relaxed);
}
template <glass::cuda::sim::detail::AtomicMinMaxType T>
T atomicMax(T* address, std::type_identity_t<T> val) {
  return glass::cuda::sim::detail::atomic_update(address,
                                                 [&](T old) { return old < val ? val : old; });
}
template <glass::cuda::sim::detail::AtomicMinMaxType T>
T atomicMin(T* address, std::type_identity_t<T> val) {
  return glass::cuda::sim::detail::atomic_update(address,
                                                 [&](T old) { return val < old ? val : old; });
}
// Stores val if *address == compare.
template <glass::cuda::sim::detail::AtomicBitType T>
T atomicCAS(T* address, std::type_identity_t<T> compare, std::type_identity_t<T> val) {
  glass::cuda::sim::detail::atomic_at(address).compare_exchange_strong(compare, val,
                                                                       std::memory_order_relaxed);
  return compare;  // the old value, whether or not the swap happened
}
template <glass::cuda::sim::detail::AtomicBitType T>
T atomicAnd(T* address, std::type_identity_t<T> val) {
  return glass::cuda::sim::detail::atomic_at(address).fetch_and(val, std::memory_order_relaxed);
}
template <glass::cuda::sim::detail::AtomicBitType T>
T atomicOr(T* address, std::type_identity_t<T> val) {
  return glass::cuda::sim::detail::atomic_at(address).fetch_or(val, std::memory_order_relaxed);
}
template <glass::cuda::sim::detail::AtomicBitType T>
T atomicXor(T* address, std::type_identity_t<T> val) {
  return glass::cuda::sim::detail::atomic_at(address).fetch_xor(val, std::memory_order_relaxed);
}
// ((old >= val) ? 0 : old + 1): a counter that wraps at val.
inline unsigned atomicInc(unsigned* address, unsigned val) {
  return glass::cuda::sim::detail::atomic_update(
      address, [&](unsigned old) { return old >= val ? 0u : old + 1; });
}
// ((old == 0 || old > val) ? val : old - 1)
inline unsigned atomicDec(unsigned* address, unsigned val) {
  return glass::cuda::sim::detail::atomic_update(
      address, [&](unsigned old) { return old == 0 || old > val ? val : old - 1; });
}

// The same on a gptr (p + i is a gptr in the simulator, a T* under nvcc).
template <glass::cuda::sim::detail::AtomicAddType T>
T atomicAdd(glass::cuda::gptr<T> address, std::type_identity_t<T> val) {
  return atomicAdd(&*address, val);
}
template <glass::cuda::sim::detail::AtomicSubType T>
T atomicSub(glass::cuda::gptr<T> address, std::type_identity_t<T> val) {
  return atomicSub(&*address, val);
}
template <glass::cuda::sim::detail::AtomicExchType T>
T atomicExch(glass::cuda::gptr<T> address, std::type_identity_t<T> val) {
  return atomicExch(&*address, val);
}
template <glass::cuda::sim::detail::AtomicMinMaxType T>
T atomicMax(glass::cuda::gptr<T> address, std::type_identity_t<T> val) {
  return atomicMax(&*address, val);
}
template <glass::cuda::sim::detail::AtomicMinMaxType T>
T atomicMin(glass::cuda::gptr<T> address, std::type_identity_t<T> val) {
  return atomicMin(&*address, val);
}
template <glass::cuda::sim::detail::AtomicBitType T>
T atomicCAS(glass::cuda::gptr<T> address, std::type_identity_t<T> compare,
            std::type_identity_t<T> val) {
  return atomicCAS(&*address, compare, val);
}
template <glass::cuda::sim::detail::AtomicBitType T>
T atomicAnd(glass::cuda::gptr<T> address, std::type_identity_t<T> val) {
  return atomicAnd(&*address, val);
}
template <glass::cuda::sim::detail::AtomicBitType T>
T atomicOr(glass::cuda::gptr<T> address, std::type_identity_t<T> val) {
  return atomicOr(&*address, val);
}
template <glass::cuda::sim::detail::AtomicBitType T>
T atomicXor(glass::cuda::gptr<T> address, std::type_identity_t<T> val) {
  return atomicXor(&*address, val);
}
inline unsigned atomicInc(glass::cuda::gptr<unsigned> address, unsigned val) {
  return atomicInc(&*address, val);
}
inline unsigned atomicDec(glass::cuda::gptr<unsigned> address, unsigned val) {
  return atomicDec(&*address, val);
}
