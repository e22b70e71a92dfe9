// core/cpu/cpu_loop.h — turning a scalar function into a fast strided CPU loop.
//
// cpu_kernel<Out, In...>(iter, f) runs out = f(in...) over a TensorIterator. The inner
// loop picks one of three shapes per run:
//   contiguous:  every operand has stride sizeof(T)   -> a plain indexed loop that GCC
//                vectorizes (AVX2/AVX-512 with -march=native);
//   one scalar:  a binary op whose second (or first) input has stride 0, the `x + 2`
//                case -> the scalar is hoisted out of the loop, still vectorized;
//   strided:     anything else -> byte-stride arithmetic per element.
// Broadcasting never reaches this file: TensorIterator already turned it into stride 0.
//
// Long contiguous results are written with streaming stores: see Note [Streaming stores]
// in stream_store.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <tuple>
#include <utility>

#include "core/cpu/stream_store.h"
#include "core/tensor_iterator.h"

namespace glass::cpu {

namespace detail {

using stream::kBlockBytes;
using stream::kStreamBytes;
using stream::stream_copy;
using stream::stream_fence;

// out[i] = f(in[i]...) for a long contiguous run, written with streaming stores.
template <class Out, class... In, class F, size_t... I>
void run_streaming(Out* out, const std::tuple<const In*...>& in, int64_t n, const F& f,
                   std::index_sequence<I...>) {
  constexpr int64_t kBlock = kBlockBytes / static_cast<int64_t>(sizeof(Out));
  int64_t i = 0;
  // Plain stores until out + i is 64-byte aligned.
  for (; i < n && reinterpret_cast<uintptr_t>(out + i) % 64 != 0; ++i)
    out[i] = f(std::get<I>(in)[i]...);
  alignas(64) Out buf[kBlock];
  for (; i + kBlock <= n; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) buf[j] = f(std::get<I>(in)[i + j]...);
    stream_copy(reinterpret_cast<char*>(out + i), reinterpret_cast<const char*>(buf), kBlockBytes);
  }
  for (; i < n; ++i) out[i] = f(std::get<I>(in)[i]...);
  stream_fence();
}

template <class Out, class... In, class F, size_t... I>
inline void run_loop(char** data, const int64_t* strides, int64_t n, const F& f,
                     std::index_sequence<I...>) {
  constexpr size_t kIn = sizeof...(In);
  bool contiguous = strides[0] == static_cast<int64_t>(sizeof(Out)) &&
                    ((strides[I + 1] == static_cast<int64_t>(sizeof(In))) && ...);
  if (contiguous) {
    Out* out = reinterpret_cast<Out*>(data[0]);
    std::tuple<const In*...> in{reinterpret_cast<const In*>(data[I + 1])...};
    if (n * static_cast<int64_t>(sizeof(Out)) >= kStreamBytes)
      return run_streaming<Out, In...>(out, in, n, f, std::index_sequence<I...>{});
    for (int64_t i = 0; i < n; ++i) out[i] = f(std::get<I>(in)[i]...);
    return;
  }
  if constexpr (kIn == 2) {
    using A = std::tuple_element_t<0, std::tuple<In...>>;
    using B = std::tuple_element_t<1, std::tuple<In...>>;
    bool out_c = strides[0] == static_cast<int64_t>(sizeof(Out));
    if (out_c && strides[1] == static_cast<int64_t>(sizeof(A)) && strides[2] == 0) {
      Out* out = reinterpret_cast<Out*>(data[0]);
      const A* a = reinterpret_cast<const A*>(data[1]);
      const B b = *reinterpret_cast<const B*>(data[2]);
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b);
      return;
    }
    if (out_c && strides[1] == 0 && strides[2] == static_cast<int64_t>(sizeof(B))) {
      Out* out = reinterpret_cast<Out*>(data[0]);
      const A a = *reinterpret_cast<const A*>(data[1]);
      const B* b = reinterpret_cast<const B*>(data[2]);
      for (int64_t i = 0; i < n; ++i) out[i] = f(a, b[i]);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<Out*>(data[0] + i * strides[0]) =
        f(*reinterpret_cast<const In*>(data[I + 1] + i * strides[I + 1])...);
  }
}

}  // namespace detail

template <class Out, class... In, class F>
void cpu_kernel(TensorIterator& iter, const F& f) {
  iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
    detail::run_loop<Out, In...>(data, strides, n, f, std::index_sequence_for<In...>{});
  });
}

}  // namespace glass::cpu
