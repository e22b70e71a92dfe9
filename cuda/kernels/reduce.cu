// cuda/kernels/reduce.cu — sum, prod, amax and amin over any dims, on the device.
//
// A reduction arrives as a TensorIterator whose output has stride 0 along the reduced
// dims (core/tensor_iterator.h). The host splits the iterator's dims in two: the kept
// dims number the outputs, the reduced dims number the elements each output folds, and
// one OffsetCalculator for each turns an index into byte offsets — so any strides, any
// set of dims, transposed and sliced inputs all run the same kernels. Then:
//
//   reduce_thread_kernel   short reductions (<= kShortReduction elements): one thread per
//                          output folds them alone. No cooperation, no barrier.
//   reduce_block_kernel    everything else: a block (or several) per output, a tree
//                          inside the block, warp shuffles at the bottom of the tree.
//   reduce_finish_kernel   when one output needed several blocks: folds their partial
//                          results, in block order, so the bits do not depend on timing.
//
// Invariant: out = out (op) every input element of its slice, accumulated as the CPU
// backend does (reduce.cuh), and each output is written by exactly one thread of one
// kernel. Nothing here blocks the host.
#include <algorithm>
#include <type_traits>

#include "core/device_kernels.h"
#include "core/ops/factories.h"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/kernels/kernels.h"
#include "cuda/kernels/reduce.cuh"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

inline constexpr int64_t kShortReduction = 32;
inline constexpr int kThreadKernelThreads = 128;
inline constexpr unsigned kMaxBlocksPerOutput = 65535;  // gridDim.y's limit

// out = out (op) acc, in the grid's accumulator type, written back as T.
template <ReduceOp Op, class T>
__device__ __forceinline__ void fold_into_output(gptr<char> out, int64_t offset,
                                                 GridAcc<Op, T> acc) {
  using G = GridAcc<Op, T>;
  store<T>(out, offset, static_cast<T>(combine<Op, G>(static_cast<G>(load<T>(out, offset)), acc)));
}

// Below the ladder: each thread folds its output's few elements alone, in order.
template <ReduceOp Op, class T>
__global__ void reduce_thread_kernel(int64_t num_outputs, int64_t reduce_size,
                                     OffsetCalculator<2> outputs, OffsetCalculator<1> reduction,
                                     gptr<char> out, gptr<const char> in) {
  using A = BlockAcc<Op, T>;
  const int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= num_outputs) return;
  int64_t base[2];  // this output's bytes, and its first input element's
  outputs.get(o, base);
  A acc = identity<Op, A>();
  for (int64_t r = 0; r < reduce_size; ++r) {
    int64_t off[1];
    reduction.get(r, off);
    acc = combine<Op, A>(acc, static_cast<A>(load<T>(in, base[1] + off[0])));
  }
  fold_into_output<Op, T>(out, base[0], static_cast<GridAcc<Op, T>>(acc));
}

// The reduction ladder's last rung, "grid-stride": block x reduces output x, with
// gridDim.y blocks sharing it. Each thread first folds its own elements, gridDim.y *
// blockDim.x apart (the first add during load, carried on for as many elements as it
// takes; where the reduced dims are contiguous, neighbouring threads read neighbouring
// elements and the loads coalesce), then
// block_reduce folds the block with warp shuffles and one barrier. With one block per
// output, thread 0 folds the result into the output; otherwise it leaves the block's
// partial result for reduce_finish_kernel.
template <ReduceOp Op, class T>
__global__ void reduce_block_kernel(int64_t reduce_size, OffsetCalculator<2> outputs,
                                    OffsetCalculator<1> reduction, gptr<char> out,
                                    gptr<const char> in, gptr<GridAcc<Op, T>> partials) {
  using A = BlockAcc<Op, T>;
  int64_t base[2];
  outputs.get(blockIdx.x, base);
  A acc = identity<Op, A>();
  const int64_t stride = int64_t(gridDim.y) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.y) * blockDim.x + threadIdx.x; r < reduce_size; r += stride) {
    int64_t off[1];
    reduction.get(r, off);
    acc = combine<Op, A>(acc, static_cast<A>(load<T>(in, base[1] + off[0])));
  }
  acc = block_reduce<Op, A>(acc);
  if (threadIdx.x != 0) return;
  const auto result = static_cast<GridAcc<Op, T>>(acc);
  if (gridDim.y == 1) {
    fold_into_output<Op, T>(out, base[0], result);
  } else {
    partials[int64_t(blockIdx.x) * gridDim.y + blockIdx.y] = result;
  }
}

// The second pass: one thread per output folds its `blocks` partial results in order.
template <ReduceOp Op, class T>
__global__ void reduce_finish_kernel(int64_t num_outputs, int blocks, OffsetCalculator<2> outputs,
                                     gptr<char> out, gptr<const GridAcc<Op, T>> partials) {
  using G = GridAcc<Op, T>;
  const int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= num_outputs) return;
  int64_t base[2];
  outputs.get(o, base);
  G acc = identity<Op, G>();
  for (int b = 0; b < blocks; ++b) acc = combine<Op, G>(acc, partials[o * blocks + b]);
  fold_into_output<Op, T>(out, base[0], acc);
}

// ---- host side -------------------------------------------------------------------------------

// The iterator's dims, split into kept dims (numbering the outputs) and reduced dims
// (out stride 0: numbering the elements of one output). Both keep the iterator's order,
// innermost first, so consecutive indices walk memory in its fastest direction.
struct ReduceLayout {
  int64_t num_outputs = 1;
  int64_t reduce_size = 1;
  OffsetCalculator<2> outputs;    // output index -> (out byte offset, in byte offset)
  OffsetCalculator<1> reduction;  // element index -> in byte offset, from the output's
};

ReduceLayout reduce_layout(const TensorIterator& iter) {
  GLASS_CHECK(iter.ndim() <= kMaxKernelDims, iter.op_name(), ": CUDA kernels handle at most ",
              kMaxKernelDims, " dims after merging; this reduction has ", iter.ndim());
  ReduceLayout l;
  for (int d = 0; d < iter.ndim(); ++d) {
    const int64_t size = iter.shape()[d];
    if (iter.strides(0)[d] == 0) {
      OffsetCalculator<1>& c = l.reduction;
      c.sizes[c.ndim] = size;
      c.strides[c.ndim][0] = iter.strides(1)[d];
      ++c.ndim;
      l.reduce_size *= size;
    } else {
      OffsetCalculator<2>& c = l.outputs;
      c.sizes[c.ndim] = size;
      c.strides[c.ndim][0] = iter.strides(0)[d];
      c.strides[c.ndim][1] = iter.strides(1)[d];
      ++c.ndim;
      l.num_outputs *= size;
    }
  }
  return l;
}

Dim3 blocks_for(int64_t threads_needed, int threads_per_block) {
  return Dim3(static_cast<unsigned>((threads_needed + threads_per_block - 1) / threads_per_block));
}

template <ReduceOp Op, class T>
void run_reduce(TensorIterator& iter) {
  if (iter.numel() == 0) return;  // nothing to fold: the outputs keep the identity
  GLASS_INTERNAL_ASSERT(!iter.is_cpu_scalar(1), iter.op_name(),
                        ": a CPU scalar reached a reduction");
  const ReduceLayout l = reduce_layout(iter);
  const gptr<char> out(iter.data_ptr(0));
  const gptr<const char> in(iter.data_ptr(1));
  const CUDAStream stream = stream_for(iter);
  const std::string name = kernel_name(to_string(Op), scalar_type_of<T>);

  if (l.reduce_size <= kShortReduction) {
    launch_kernel(name.c_str(), reduce_thread_kernel<Op, T>,
                  blocks_for(l.num_outputs, kThreadKernelThreads), Dim3(kThreadKernelThreads), 0,
                  stream, l.num_outputs, l.reduce_size, l.outputs, l.reduction, out, in);
    return;
  }

  using G = GridAcc<Op, T>;
  const int threads = reduce_block_threads(l.reduce_size);
  const int64_t per_block = threads * kReduceElementsPerThread;
  const auto blocks_per_output = static_cast<unsigned>(
      std::min<int64_t>((l.reduce_size + per_block - 1) / per_block, kMaxBlocksPerOutput));
  GLASS_CHECK(l.num_outputs <= int64_t{0x7fffffff}, iter.op_name(), ": ", l.num_outputs,
              " outputs are more than one CUDA grid holds (2^31 - 1)");
  const Dim3 grid(static_cast<unsigned>(l.num_outputs), blocks_per_output);
  if (blocks_per_output == 1) {
    launch_kernel(name.c_str(), reduce_block_kernel<Op, T>, grid, Dim3(threads), 0, stream,
                  l.reduce_size, l.outputs, l.reduction, out, in, gptr<G>());
    return;
  }
  // Scratch space for the partial results, from the caching allocator: freed when this
  // function returns, but the allocator hands it to no other stream, and this stream
  // runs both kernels before anything allocated after them.
  const int64_t count = l.num_outputs * blocks_per_output;
  const Tensor scratch =
      empty({(count * int64_t(sizeof(G)) + 7) / 8}, TensorOptions(kInt64).device(iter.device()));
  const gptr<G> partials(reinterpret_cast<G*>(scratch.data_ptr()));
  launch_kernel(name.c_str(), reduce_block_kernel<Op, T>, grid, Dim3(threads), 0, stream,
                l.reduce_size, l.outputs, l.reduction, out, in, partials);
  const std::string finish = name + "_finish";
  launch_kernel(finish.c_str(), reduce_finish_kernel<Op, T>,
                blocks_for(l.num_outputs, kThreadKernelThreads), Dim3(kThreadKernelThreads), 0,
                stream, l.num_outputs, static_cast<int>(blocks_per_output), l.outputs, out,
                gptr<const G>(partials));
}

}  // namespace

void launch_reduce(TensorIterator& iter, ReduceOp op) {
  dispatch_dtype(iter.common_dtype(), to_string(op), [&]<class T>() {
    switch (op) {
      case ReduceOp::Sum: return run_reduce<ReduceOp::Sum, T>(iter);
      case ReduceOp::Prod: return run_reduce<ReduceOp::Prod, T>(iter);
      case ReduceOp::Max: return run_reduce<ReduceOp::Max, T>(iter);
      case ReduceOp::Min: return run_reduce<ReduceOp::Min, T>(iter);
    }
  });
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
