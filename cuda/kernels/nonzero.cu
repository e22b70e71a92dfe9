// cuda/kernels/nonzero.cu — the coordinates of the nonzero elements: a stream compaction.
//
// Thread-parallel output needs each nonzero element's row in the output before anyone
// writes, and that row is the number of nonzeros before it: an exclusive prefix sum.
// Three kernels, the classic scan-then-scatter:
//   1. count    block b counts the nonzeros of its tile of kTile elements;
//   2. scan     one block turns the counts into exclusive offsets (offsets[b] = the
//               nonzeros before tile b) and the total (offsets[blocks]);
//   3. write    block b scans its tile again, chunk by chunk in element order, and each
//               nonzero element writes its coordinates at row offsets[b] + (nonzeros
//               before it in the tile).
// Rows come out in row-major order of the elements, as on the CPU.
//
// nonzero is a synchronization point, in PyTorch too: the output's shape (count, dim)
// depends on the data, so the host must read the total back from the device — waiting
// for every queued kernel — before it can allocate the output and launch the write.
//
// Invariant: the input is contiguous (core passes self.contiguous()); element i's
// coordinates are i unravelled by the sizes, written by the one thread that owns i.
#include <cstdint>
#include <limits>

#include "core/device_kernels.h"
#include "core/ops/factories.h"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/kernels/kernels.h"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

inline constexpr int kNonzeroThreads = 256;                  // 8 warps
inline constexpr int kChunks = 4;                            // chunks of a tile
inline constexpr int64_t kTile = kNonzeroThreads * kChunks;  // elements per block
inline constexpr int kMaxNonzeroDims = 16;

// The input's sizes, passed by value.
struct Sizes {
  int64_t size[kMaxNonzeroDims];
  int dims;
};

// Chunk k of block b: the kNonzeroThreads consecutive elements starting here.
__device__ __forceinline__ int64_t chunk_start(int k) {
  return int64_t(blockIdx.x) * kTile + int64_t(k) * kNonzeroThreads;
}

template <class T>
__device__ __forceinline__ bool is_nonzero(gptr<const T> in, int64_t numel, int64_t i) {
  return i < numel && in[i] != T(0);  // NaN is nonzero, as on the CPU
}

// 1. counts[b] = nonzeros of tile b.
template <class T>
__global__ void nonzero_count_kernel(int64_t numel, gptr<const T> in, gptr<int64_t> counts) {
  int64_t count = 0;
  for (int k = 0; k < kChunks; ++k)
    count += __syncthreads_count(is_nonzero(in, numel, chunk_start(k) + threadIdx.x));
  if (threadIdx.x == 0) counts[blockIdx.x] = count;
}

// Within one block: the number of true predicates of the threads before this one
// (`before`) and in the whole block (the return value). A warp counts its own with a
// ballot; warp totals go through shared memory. Ends with a barrier, so it may run again.
__device__ int block_exclusive_count(bool pred, int& before) {
  GLASS_SHARED(int, warp_total, kNonzeroThreads / 32);
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  const unsigned ballot = __ballot_sync(0xffffffffu, pred);
  if (lane == 0) warp_total[warp] = __popc(ballot);
  __syncthreads();
  before = __popc(ballot & ((1u << lane) - 1u));  // lanes below this one
  int total = 0;
  for (int w = 0; w < kNonzeroThreads / warpSize; ++w) {
    if (w < warp) before += warp_total[w];
    total += warp_total[w];
  }
  __syncthreads();
  return total;
}

// 2. offsets[b] = counts[0] + ... + counts[b-1]; offsets[blocks] = the total. One block
// walks the counts kNonzeroThreads at a time, carrying the running sum.
__global__ void nonzero_scan_kernel(int64_t blocks, gptr<const int64_t> counts,
                                    gptr<int64_t> offsets) {
  GLASS_SHARED(int64_t, warp_total, kNonzeroThreads / 32);
  const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
  int64_t carry = 0;
  for (int64_t first = 0; first < blocks; first += kNonzeroThreads) {
    const int64_t b = first + threadIdx.x;
    const int64_t mine = b < blocks ? counts[b] : 0;
    // Inclusive scan within the warp (Hillis-Steele on shuffles).
    int64_t incl = mine;
    for (int delta = 1; delta < warpSize; delta *= 2) {
      const int64_t other = __shfl_up_sync(0xffffffffu, incl, delta);
      if (lane >= delta) incl += other;
    }
    if (lane == warpSize - 1) warp_total[warp] = incl;
    __syncthreads();
    int64_t before_warp = 0, chunk_total = 0;
    for (int w = 0; w < kNonzeroThreads / warpSize; ++w) {
      if (w < warp) before_warp += warp_total[w];
      chunk_total += warp_total[w];
    }
    if (b < blocks) offsets[b] = carry + before_warp + incl - mine;
    carry += chunk_total;
    __syncthreads();
  }
  if (threadIdx.x == 0) offsets[blocks] = carry;
}

// 3. Each nonzero element of tile b writes its coordinates at its row of out (count, dims).
template <class T>
__global__ void nonzero_write_kernel(int64_t numel, gptr<const T> in, gptr<const int64_t> offsets,
                                     Sizes sizes, gptr<int64_t> out) {
  int64_t row = offsets[blockIdx.x];
  for (int k = 0; k < kChunks; ++k) {
    const int64_t i = chunk_start(k) + threadIdx.x;
    const bool pred = is_nonzero(in, numel, i);
    int before = 0;
    const int chunk_total = block_exclusive_count(pred, before);
    if (pred) {
      int64_t rest = i;  // unravel i, last dim fastest
      for (int d = sizes.dims - 1; d >= 0; --d) {
        out[(row + before) * sizes.dims + d] = rest % sizes.size[d];
        rest /= sizes.size[d];
      }
    }
    row += chunk_total;
  }
}

}  // namespace

Tensor launch_nonzero(const Tensor& self) {
  const int dims = static_cast<int>(self.dim());
  const TensorOptions long_options = TensorOptions(kInt64).device(self.device());
  const int64_t numel = self.numel();
  if (numel == 0) return empty({0, dims}, long_options);
  GLASS_CHECK(dims <= kMaxNonzeroDims, "nonzero(): CUDA handles at most ", kMaxNonzeroDims,
              " dims; got a tensor of ", dims);
  Sizes sizes{};
  sizes.dims = dims;
  for (int d = 0; d < dims; ++d) sizes.size[d] = self.size(d);

  const int64_t blocks = (numel + kTile - 1) / kTile;
  GLASS_CHECK(blocks <= std::numeric_limits<int32_t>::max(), "nonzero(): ", numel,
              " elements are more than one launch of the CUDA kernel covers");
  // counts and offsets: scratch on the device, freed (to the caching allocator) on return,
  // which is safe: a later allocation on this stream runs after these kernels.
  Tensor counts = empty({blocks}, long_options);
  Tensor offsets = empty({blocks + 1}, long_options);
  const CUDAStream stream = getCurrentCUDAStream(static_cast<DeviceIndex>(self.device().index()));
  const gptr<int64_t> counts_ptr(counts.data_ptr<int64_t>());
  const gptr<int64_t> offsets_ptr(offsets.data_ptr<int64_t>());

  Tensor out;
  dispatch_dtype(self.dtype(), "nonzero", [&]<class T>() {
    const gptr<const T> in(static_cast<const T*>(self.data_ptr()));
    launch_kernel(kernel_name("nonzero_count", scalar_type_of<T>).c_str(), nonzero_count_kernel<T>,
                  Dim3(static_cast<unsigned>(blocks)), Dim3(kNonzeroThreads), 0, stream, numel, in,
                  counts_ptr);
    GLASS_LAUNCH(nonzero_scan_kernel, Dim3(1), Dim3(kNonzeroThreads), 0, stream, blocks,
                 gptr<const int64_t>(counts_ptr), offsets_ptr);
    // The sync point: item() copies the total to the host once the kernels have run.
    const int64_t count = offsets.select(0, blocks).item<int64_t>();
    out = empty({count, dims}, long_options);
    if (count == 0 || dims == 0) return;  // a 0-dim tensor: (1, 0) or (0, 0), no coordinates
    launch_kernel(kernel_name("nonzero_write", scalar_type_of<T>).c_str(), nonzero_write_kernel<T>,
                  Dim3(static_cast<unsigned>(blocks)), Dim3(kNonzeroThreads), 0, stream, numel, in,
                  gptr<const int64_t>(offsets_ptr), sizes, gptr<int64_t>(out.data_ptr<int64_t>()));
  });
  return out;
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
