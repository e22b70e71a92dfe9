// core/cpu/cpu_reduce.cpp — CPU kernels for reductions, arg-reductions and softmax.
//
// Reductions arrive as a TensorIterator whose output has stride 0 along reduced dims.
// A run therefore either folds n inputs into one output (out stride 0: an "inner"
// reduction, e.g. sum over the last dim) or combines two equal-length rows
// elementwise (an "outer" reduction, e.g. sum over dim 0), which vectorizes as is.
// Inner runs use 16 independent accumulators: each lane is a separate sum, so the
// compiler can vectorize without reassociating (no -ffast-math needed), and float
// sums accumulate in double to keep 16M-element sums accurate. Integer sums and
// products accumulate in uint64_t: they wrap modulo 2^64 as PyTorch's do, and unsigned
// arithmetic wraps by definition where signed overflow would be undefined behaviour.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

#include "core/cpu/cpu_kernels.h"
#include "core/cpu/fold_slices.h"
#include "core/cpu/vec_math.h"
#include "core/parallel.h"

namespace glass::cpu {
namespace {

// The accumulator of a sum or product. The result converts back to T at the end; for
// integers that conversion is modulo 2^64 (well defined since C++20).
template <class T>
using acc_t = std::conditional_t<std::is_floating_point_v<T>, double,
                                 std::conditional_t<std::is_same_v<T, bool>, bool, uint64_t>>;

template <class T>
bool isnan_(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  return false;
}

// The combine step of each reduction (NaN propagates through max/min, as in PyTorch).
template <ReduceOp Op, class A>
inline A combine(A a, A b) {
  if constexpr (Op == ReduceOp::Sum) {
    if constexpr (std::is_same_v<A, bool>)
      return a || b;
    else
      return a + b;
  } else if constexpr (Op == ReduceOp::Prod) {
    if constexpr (std::is_same_v<A, bool>)
      return a && b;
    else
      return a * b;
  } else if constexpr (Op == ReduceOp::Max) {
    return (isnan_(a) || a > b) ? a : b;
  } else {
    return (isnan_(a) || a < b) ? a : b;
  }
}

// Folds n elements of a (possibly strided) run into `acc`.
template <ReduceOp Op, class T, class A>
A fold_run(const char* p, int64_t stride, int64_t n, A acc) {
  if (stride == static_cast<int64_t>(sizeof(T)) && n >= 32 && Op != ReduceOp::Max &&
      Op != ReduceOp::Min) {
    const T* x = reinterpret_cast<const T*>(p);
    constexpr int kLanes = 16;
    A lanes[kLanes];
    for (int l = 0; l < kLanes; ++l) lanes[l] = Op == ReduceOp::Sum ? A(0) : A(1);
    int64_t i = 0;
    if constexpr (Op == ReduceOp::Sum && std::is_same_v<T, float>) {
      // Float lanes within a block of 1024 (64 additions per lane: error ~1e-6 relative),
      // then each block folds into the double lanes: full vector width for the loads,
      // double accuracy across blocks (a 16M sum in float alone drifts by ~1e-3).
      constexpr int64_t kBlock = 1024;
      for (; i + kBlock <= n; i += kBlock) {
        float block[kLanes] = {};
        for (int64_t j = 0; j < kBlock; j += kLanes)
          for (int l = 0; l < kLanes; ++l) block[l] += x[i + j + l];
        for (int l = 0; l < kLanes; ++l) lanes[l] += static_cast<A>(block[l]);
      }
    }
    for (; i + kLanes <= n; i += kLanes)
      for (int l = 0; l < kLanes; ++l)
        lanes[l] = combine<Op, A>(lanes[l], static_cast<A>(x[i + l]));
    for (int l = 0; l < kLanes; ++l) acc = combine<Op, A>(acc, lanes[l]);
    for (; i < n; ++i) acc = combine<Op, A>(acc, static_cast<A>(x[i]));
    return acc;
  }
  for (int64_t i = 0; i < n; ++i)
    acc = combine<Op, A>(acc, static_cast<A>(*reinterpret_cast<const T*>(p + i * stride)));
  return acc;
}

template <ReduceOp Op, class T>
void reduce_impl(TensorIterator& iter) {
  using A = std::conditional_t<Op == ReduceOp::Max || Op == ReduceOp::Min, T, acc_t<T>>;
  auto loop = [](char** data, const int64_t* strides, int64_t n) {
    T* out = reinterpret_cast<T*>(data[0]);
    if (strides[0] == 0) {
      *out = static_cast<T>(fold_run<Op, T, A>(data[1], strides[1], n, static_cast<A>(*out)));
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      T* o = reinterpret_cast<T*>(data[0] + i * strides[0]);
      const T* x = reinterpret_cast<const T*>(data[1] + i * strides[1]);
      *o = static_cast<T>(combine<Op, A>(static_cast<A>(*o), static_cast<A>(*x)));
    }
  };
  // A full reduction of a large input: per-thread slices, combined in order (fold_slices.h).
  bool full = iter.is_scalar(0);
  if (full && iter.numel() >= 65536 && get_num_threads() > 1 && !in_parallel_region()) {
    T* out = reinterpret_cast<T*>(iter.data_ptr(0));
    // Sum and Prod slices start from their identity; Max and Min from the output, which
    // holds theirs (an empty slice must not win).
    const A start = Op == ReduceOp::Sum ? A(0) : Op == ReduceOp::Prod ? A(1) : static_cast<A>(*out);
    const A total = fold_slices_in_order<A>(
        iter, start, 65536,
        [](char** data, const int64_t* strides, int64_t n, A& acc) {
          acc = fold_run<Op, T, A>(data[1], strides[1], n, acc);
        },
        [](A a, A b) { return combine<Op, A>(a, b); });
    *out = static_cast<T>(combine<Op, A>(static_cast<A>(*out), total));
    return;
  }
  iter.for_each(loop);
}

}  // namespace

void reduce_kernel(TensorIterator& iter, ReduceOp op) {
  dispatch_dtype(iter.common_dtype(), to_string(op), [&]<class T>() {
    switch (op) {
      case ReduceOp::Sum: return reduce_impl<ReduceOp::Sum, T>(iter);
      case ReduceOp::Prod: return reduce_impl<ReduceOp::Prod, T>(iter);
      case ReduceOp::Max: return reduce_impl<ReduceOp::Max, T>(iter);
      case ReduceOp::Min: return reduce_impl<ReduceOp::Min, T>(iter);
    }
  });
}

void arg_reduce_kernel(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool is_max,
                       const Tensor& values, const Tensor& indices) {
  dispatch_dtype(in.dtype(), is_max ? "max" : "min", [&]<class T>() {
    const T* x = in.data_ptr<T>();
    T* v = values.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        const T* row = x + o * n * inner + j;
        T best = row[0];
        int64_t best_i = 0;
        for (int64_t i = 1; i < n && !isnan_(best); ++i) {
          T cur = row[i * inner];
          bool better = isnan_(cur) || (is_max ? cur > best : cur < best);
          if (better) {
            best = cur;
            best_i = i;
          }
        }
        v[o * inner + j] = best;
        idx[o * inner + j] = best_i;
      }
    }
  });
}

void softmax_kernel(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool log,
                    const Tensor& out) {
  dispatch_floating(in.dtype(), log ? "log_softmax" : "softmax", [&]<class T>() {
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    parallel_for(0, outer * inner, 16, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        int64_t o = r / inner, j = r % inner;
        const T* xr = x + o * n * inner + j;
        T* yr = y + o * n * inner + j;
        // Subtracting the max keeps exp() from overflowing; the result is unchanged.
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t i = 0; i < n; ++i) m = std::max(m, xr[i * inner]);
        // An all -inf row: keep exp(-inf) = 0 rather than NaN. (A +inf stays the max, so
        // inf - inf makes the row NaN, as in PyTorch and on CUDA.)
        if (m == -std::numeric_limits<T>::infinity()) m = 0;
        double s = 0;
        for (int64_t i = 0; i < n; ++i) {
          T ex = vec_math::exp(xr[i * inner] - m);
          if (!log) yr[i * inner] = ex;
          s += static_cast<double>(ex);
        }
        if (log) {
          T lse = m + static_cast<T>(std::log(s));
          for (int64_t i = 0; i < n; ++i) yr[i * inner] = xr[i * inner] - lse;
        } else {
          T inv = static_cast<T>(1.0 / s);
          for (int64_t i = 0; i < n; ++i) yr[i * inner] *= inv;
        }
      }
    });
  });
}

}  // namespace glass::cpu
