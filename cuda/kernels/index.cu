// cuda/kernels/index.cu — index and index_put on the device (and so gather, scatter_add,
// index_select, embedding, masked reads and writes).
//
// The operands arrive as on the CPU (core/cpu/cpu_index.cpp): (out or dst, src or values,
// idx_0 ... idx_{K-1}), the indexed tensor restrided so each element only adds
// sum_k idx_k * stride_k. One thread per element, 16 elements per thread, as the
// elementwise kernels. Each thread checks and wraps its index values itself; a bad one
// goes into the device error record (cuda/device_error.h) and the element is skipped, so
// the host learns of it at the next sync point, not by waiting now.
//
// Note [Why atomic float sums depend on order]
// index_put_ with accumulate (and scatter_add_) may add many values into one element.
// Threads do that with atomicAdd, and the order in which the atomics land is decided by
// the scheduler, differently from run to run. Float addition rounds after every step and
// is not associative: (a + b) + c and (a + c) + b may differ in the last bit. So the sum
// is correct but not bitwise reproducible. Under use_deterministic_algorithms(true) the
// launcher takes the order-independent path instead: one thread adds everything in the
// iteration order, which is the CPU's serial order — slow, but bitwise equal to the CPU.
// (PyTorch sorts the indices and gives each destination to one thread; the serial loop
// is the textbook baseline of that.)
//
// Invariant: an element whose indices are all valid is read or written exactly as the
// CPU kernel does; an element with a bad index is never read from nor written to.
#include <type_traits>

#include "core/deterministic.h"
#include "core/device_kernels.h"
#include "cuda/device_error.h"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/kernels/kernels.h"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

// More index tensors than this is rare; each count is one more instantiation per dtype.
constexpr int kMaxIndices = 4;

// The index operands' device pointers, by value.
template <int K>
struct IndexOperands {
  gptr<const char> data[K];
};

#ifndef __CUDACC__
// For the simulator's stream-race checker: the index tensors are read.
template <int K>
void append_accesses(const IndexOperands<K>& ops, std::vector<sim::Access>& out) {
  for (int k = 0; k < K; ++k) out.push_back({ops.data[k].get(), false});
}
#endif

// The indexed dims (IndexArgs, core/device_kernels.h), by value.
template <int K>
struct IndexDims {
  int64_t stride[K];
  int64_t size[K];
  int64_t dim[K];
  bool wrap_negative;
};

// First error wins: the thread that claims the record writes it, then marks it ready.
__device__ __forceinline__ void report_index_error(DeviceErrorSlot slot, int64_t index, int64_t dim,
                                                   int64_t size) {
  gptr<unsigned long long> words(slot.words);
  if (atomicCAS(words + kErrorClaimed, 0ull, 1ull) != 0ull) return;
  words[kErrorOp] = static_cast<unsigned long long>(slot.op);
  words[kErrorIndex] = static_cast<unsigned long long>(index);
  words[kErrorDim] = static_cast<unsigned long long>(dim);
  words[kErrorSize] = static_cast<unsigned long long>(size);
  __threadfence();  // the fields are visible before the ready flag
  atomicExch(words + kErrorReady, 1ull);
}

// Element offset (in elements of the indexed tensor) for one element, or -1 after
// reporting a bad index. off[2 + k] is the byte offset of index operand k.
template <int K>
__device__ __forceinline__ int64_t indexed_offset(const int64_t* off, const IndexOperands<K>& idx,
                                                  const IndexDims<K>& dims, DeviceErrorSlot err) {
  int64_t elem = 0;
  for (int k = 0; k < K; ++k) {
    const int64_t v = load<int64_t>(idx.data[k], off[2 + k]);
    const int64_t w = v < 0 && dims.wrap_negative ? v + dims.size[k] : v;
    if (w < 0 || w >= dims.size[k]) {
      report_index_error(err, v, dims.dim[k], dims.size[k]);
      return -1;
    }
    elem += w * dims.stride[k];
  }
  return elem;
}

template <class T, int K>
__global__ void index_kernel(int64_t n, OffsetCalculator<K + 2> calc, gptr<char> out,
                             gptr<const char> src, IndexOperands<K> idx, IndexDims<K> dims,
                             DeviceErrorSlot err) {
  int64_t i = first_element();
  for (int k = 0; k < kElementsPerThread && i < n; ++k, i += kElementwiseThreads) {
    int64_t off[K + 2];
    calc.get(i, off);
    const int64_t elem = indexed_offset<K>(off, idx, dims, err);
    if (elem >= 0) store<T>(out, off[0], load<T>(src, off[1] + elem * int64_t(sizeof(T))));
  }
}

// Serial*: one thread walks the elements in the CPU's order (deterministic mode): the
// last write wins for Store and float sums round as on the CPU for Add.
enum class PutMode : int { Store, AtomicAdd, SerialStore, SerialAdd };

// *p += v for one thread among many (see the Note at the top).
template <class T>
__device__ __forceinline__ void atomic_accumulate(T* p, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    // OR. Many threads storing `true` to one byte would still be a data race; CUDA has no
    // byte atomics, so the byte's bit is OR-ed into its aligned 32-bit word (the caching
    // allocator rounds every block to 512 bytes, so the word lies inside it).
    if (v) {
      const auto addr = reinterpret_cast<uintptr_t>(p);
      atomicOr(reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3}),
               1u << (8 * static_cast<unsigned>(addr & 3)));
    }
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // Two's complement: adding as unsigned gives the signed sum.
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    atomicAdd(p, v);  // int, float, double
  }
}

template <class T, int K>
__device__ __forceinline__ void put_one(int64_t i, PutMode mode,
                                        const OffsetCalculator<K + 2>& calc, gptr<char> dst,
                                        gptr<const char> values, const IndexOperands<K>& idx,
                                        const IndexDims<K>& dims, DeviceErrorSlot err) {
  int64_t off[K + 2];
  calc.get(i, off);
  const int64_t elem = indexed_offset<K>(off, idx, dims, err);
  if (elem < 0) return;
  const int64_t at = off[0] + elem * int64_t(sizeof(T));
  const T v = load<T>(values, off[1]);
  if (mode == PutMode::Store || mode == PutMode::SerialStore) {
    store<T>(dst, at, v);
  } else if (mode == PutMode::AtomicAdd) {
    // Through gptr_cast, so the simulator checks and counts the whole element.
    atomic_accumulate(&gptr_cast<T>(dst + at)[0], v);
  } else if constexpr (std::is_same_v<T, bool>) {
    store<bool>(dst, at, load<bool>(dst, at) || v);
  } else {
    store<T>(dst, at, static_cast<T>(load<T>(dst, at) + v));
  }
}

// Store and AtomicAdd: launched with one thread per 16 elements. Serial modes: launched
// as one thread, which walks all n elements in order (slow on a GPU for large n: the price
// of reproducibility, as PyTorch's deterministic index_put_ pays with a sort).
template <class T, int K>
__global__ void index_put_kernel(int64_t n, PutMode mode, OffsetCalculator<K + 2> calc,
                                 gptr<char> dst, gptr<const char> values, IndexOperands<K> idx,
                                 IndexDims<K> dims, DeviceErrorSlot err) {
  if (mode == PutMode::SerialStore || mode == PutMode::SerialAdd) {
    for (int64_t i = 0; i < n; ++i) put_one<T, K>(i, mode, calc, dst, values, idx, dims, err);
    return;
  }
  int64_t i = first_element();
  for (int k = 0; k < kElementsPerThread && i < n; ++k, i += kElementwiseThreads)
    put_one<T, K>(i, mode, calc, dst, values, idx, dims, err);
}

// ---- host side ---------------------------------------------------------------------------

template <int K>
IndexOperands<K> index_operands(const TensorIterator& iter) {
  IndexOperands<K> ops;
  for (int k = 0; k < K; ++k) ops.data[k] = gptr<const char>(iter.data_ptr(2 + k));
  return ops;
}

template <int K>
IndexDims<K> index_dims(const IndexArgs& args) {
  IndexDims<K> d{};
  for (int k = 0; k < K; ++k) {
    d.stride[k] = args.dims[k].stride;
    d.size[k] = args.dims[k].size;
    d.dim[k] = args.dims[k].dim;
  }
  d.wrap_negative = args.wrap_negative;
  return d;
}

// Calls f.template operator()<K>() for K = the number of index operands.
template <class F>
void dispatch_index_count(const IndexArgs& args, F&& f) {
  const int k = static_cast<int>(args.dims.size());
  GLASS_CHECK(k >= 1 && k <= kMaxIndices, args.op, "(): CUDA index kernels take 1 to ", kMaxIndices,
              " index tensors; got ", k, " (index fewer dims at once, or run it on the CPU)");
  switch (k) {
    case 1: return f.template operator()<1>();
    case 2: return f.template operator()<2>();
    case 3: return f.template operator()<3>();
    default: return f.template operator()<4>();
  }
}

DeviceErrorSlot error_slot(const TensorIterator& iter, const char* op) {
  const CUDAStream stream = stream_for(iter);
  return device_error_slot(stream.device_index(), op, stream.stream());
}

}  // namespace

void launch_index(TensorIterator& iter, const IndexArgs& args) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  dispatch_index_count(args, [&]<int K>() {
    dispatch_dtype(iter.dtype(0), args.op, [&]<class T>() {
      const std::string name = kernel_name("index", scalar_type_of<T>);
      launch_kernel(name.c_str(), index_kernel<T, K>, elementwise_grid(n),
                    Dim3(kElementwiseThreads), 0, stream_for(iter), n,
                    make_offset_calculator<K + 2>(iter), gptr<char>(iter.data_ptr(0)),
                    gptr<const char>(iter.data_ptr(1)), index_operands<K>(iter),
                    index_dims<K>(args), error_slot(iter, args.op));
    });
  });
}

void launch_index_put(TensorIterator& iter, const IndexArgs& args, bool accumulate) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  // Duplicate indices make both modes order-dependent: which store lands last, and in
  // what order float atomics add up.
  const bool serial = are_deterministic_algorithms_enabled();
  const PutMode mode = accumulate ? (serial ? PutMode::SerialAdd : PutMode::AtomicAdd)
                                  : (serial ? PutMode::SerialStore : PutMode::Store);
  dispatch_index_count(args, [&]<int K>() {
    dispatch_dtype(iter.dtype(0), args.op, [&]<class T>() {
      const std::string name =
          kernel_name(serial ? "index_put_serial" : "index_put", scalar_type_of<T>);
      launch_kernel(name.c_str(), index_put_kernel<T, K>, serial ? Dim3(1) : elementwise_grid(n),
                    Dim3(serial ? 1 : kElementwiseThreads), 0, stream_for(iter), n, mode,
                    make_offset_calculator<K + 2>(iter), gptr<char>(iter.data_ptr(0)),
                    gptr<const char>(iter.data_ptr(1)), index_operands<K>(iter),
                    index_dims<K>(args), error_slot(iter, args.op));
    });
  });
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
