// core/device_kernels.h — the kernel contract: what a device backend must implement.
//
// Everything above this list is device-independent: argument checks, shapes, type
// promotion, allocation (through the device's Allocator) and the TensorIterator that
// turns any strided, broadcast operand set into 1-D runs. A backend (core/cpu/ now,
// cuda/ later) fills in these entries and registers them for its DeviceType; every op
// in core/ops/ then works on that device. Like tinygrad's list of primitives, it is
// deliberately short; composite ops (mean, var, softmax's callers, matmul's batching,
// cat) are built from it in core/ops/.
//
// Contract for every entry: arguments have been validated, outputs are allocated with
// the right shape and dtype on this device, and iterator operands already have the
// computation dtype (iter.common_dtype()) unless the entry says otherwise. A kernel
// never allocates user-visible tensors and never throws for valid input.
//
// CPU scalars (Note [CPU scalars in device iterations], tensor_iterator.h): an input k of
// a TensorIterator on a device may be a 0-dim CPU tensor — the 2 in x * 2 — for which
// iter.is_cpu_scalar(k) is true. Its data_ptr(k) is a host address; a device kernel
// takes iter.scalar_value(k) as a kernel argument instead and never reads data_ptr(k).
// CPU iterations never have such operands.
#pragma once

#include <cstdint>
#include <optional>

#include "core/device.h"
#include "core/scalar.h"
#include "core/small_vector.h"
#include "core/tensor.h"
#include "core/tensor_iterator.h"

namespace glass {

class GeneratorImpl;  // core/generator.h

// Elementwise functions of one input.
enum class UnaryOp : uint8_t {
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tanh,
  Sigmoid,
  Relu,
  Gelu,
  GeluTanh,
  Sign,
  LogicalNot,
  Log1p,  // log(1 + x), exact for tiny x where log(1 + x) rounds 1 + x first
};
// PyTorch's names: "neg", ...; inplace_name gives the in-place spelling, "neg_".
const char* to_string(UnaryOp op);
const char* inplace_name(UnaryOp op);

// Elementwise functions of two inputs. Comparisons and logical ops write Bool outputs.
enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Maximum,
  Minimum,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  LogicalAnd,
  LogicalOr,
};
const char* to_string(BinaryOp op);  // "add", ...; inplace_name: "add_"
const char* inplace_name(BinaryOp op);
constexpr bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq; }

// Reductions with an identity, accumulating into an output that starts at that identity.
enum class ReduceOp : uint8_t { Sum, Prod, Max, Min };
const char* to_string(ReduceOp op);  // "sum", "prod", "amax", "amin"

// Note [Index errors are found by the kernel]
// Index values live on the tensor's device, so only a kernel can see them without a
// round-trip to the host (reading min()/max() with item() would make every indexing op
// a sync point). So the index kernels check each value as they use it:
//   * CPU: the error is thrown at once, before anything is written (index_put checks
//     every index in a first pass);
//   * CUDA: the kernel records the first bad index in a small per-device error record
//     (cuda/device_error.h) and carries on without touching memory for it; the next sync
//     point (a stream, event or device synchronize, a blocking copy to the host, item())
//     throws glass::Error with the CPU's message, and the device keeps working. As with
//     a device-side assert on a GPU, the op's output (or, for index_put_, the destination)
//     may then hold partial results.
// The message is index_error_message() (core/ops/indexing.h):
//   "index(): index 5 is out of bounds for dimension 0 with size 3".

// One indexed dim of an index/index_put kernel, in index-operand order.
struct IndexedDim {
  int64_t stride = 0;  // in elements of the indexed tensor
  int64_t size = 0;    // valid values: [0, size), or [-size, size) with wrap_negative
  int64_t dim = 0;     // the dim number the error message gives
};
struct IndexArgs {
  const char* op = "index";   // names the op in the error message
  bool wrap_negative = true;  // advanced indexing wraps -1 to size - 1; gather does not
  SmallVector<IndexedDim, 4> dims;
};

struct DeviceKernels {
  // iter: (out, in). out = in converted to out's dtype (operands keep their dtypes).
  void (*copy)(TensorIterator& iter);
  // dst and src on different devices (one of them this backend's), same shape, any
  // dtypes and strides. non_blocking: the caller allows the copy to be queued and to
  // return before it completes (honoured only where that is safe, e.g. with pinned host
  // memory; otherwise the copy behaves as a blocking one). Null for the CPU backend;
  // cuda/ fills it in for host<->device and device<->device copies.
  void (*cross_device_copy)(const Tensor& dst, const Tensor& src, bool non_blocking);
  // iter: (out). Every element = value.
  void (*fill)(TensorIterator& iter, const Scalar& value);
  // iter: (out, in). out = op(in).
  void (*unary)(TensorIterator& iter, UnaryOp op);
  // iter: (out, a, b). out = a op b (out is Bool for comparisons and logical ops).
  void (*binary)(TensorIterator& iter, BinaryOp op);
  // iter: (out, in). out = min(max(in, lo), hi); a missing bound is not applied.
  void (*clamp)(TensorIterator& iter, std::optional<Scalar> lo, std::optional<Scalar> hi);
  // iter: (out, cond, a, b). cond is Bool (a const input). out = cond ? a : b.
  void (*where)(TensorIterator& iter);
  // iter: (self, mask) with self also the output, mask Bool. self = mask ? value : self.
  void (*masked_fill)(TensorIterator& iter, const Scalar& value);
  // iter: reduction (out, in), out pre-filled with the identity. out = out (op) in.
  void (*reduce)(TensorIterator& iter, ReduceOp op);
  // in: contiguous, viewed as (outer, n, inner); writes the max (or min) and its first
  // index along n into values / indices (contiguous (outer, inner)). NaN wins, as in PyTorch.
  void (*arg_reduce)(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool is_max,
                     const Tensor& values, const Tensor& indices);
  // in, out: contiguous, viewed as (outer, n, inner); softmax (or log_softmax) along n.
  void (*softmax)(const Tensor& in, int64_t outer, int64_t n, int64_t inner, bool log,
                  const Tensor& out);
  // a: (B, M, K), b: (B, K, N), out: (B, M, N), any strides, one dtype.
  // out = beta * out + alpha * a @ b  (beta == 0: out is not read).
  void (*bmm)(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& beta,
              const Scalar& alpha);
  // iter: (out, src, idx_0 ... idx_{k-1}); src is restrided so the indexed dims have
  // stride 0; out = src[+ sum_k idx_k * args.dims[k].stride] (strides in src elements).
  // The kernel checks the index values itself (Note [Index errors are found by the
  // kernel]): a value outside [0, size) — or [-size, size) when args.wrap_negative, and
  // then wrapped by adding size — is an error named by args. gather() uses it too.
  void (*index)(TensorIterator& iter, const IndexArgs& args);
  // iter: (dst_restrided, values, idx_0 ...): dst[+ sum idx*strides] = (or +=) values.
  // Indices are checked as for index. With accumulate, duplicate indices must all be
  // added: serially (CPU), with atomics (CUDA: the sum's rounding then depends on the
  // order the atomics land), or, under are_deterministic_algorithms_enabled(), in
  // iteration order, bitwise equal to the CPU. Without accumulate, one of the duplicate
  // writes wins. scatter_add() uses it too.
  void (*index_put)(TensorIterator& iter, const IndexArgs& args, bool accumulate);
  // Coordinates of the nonzero elements of self, as an (n, self.dim()) Long tensor.
  Tensor (*nonzero)(const Tensor& self);
  // Random fills drawing from `gen` (core/generator.h), which the caller checked to be a
  // generator of this device type: a CPUGeneratorImpl on the CPU, a CUDAGeneratorImpl
  // (Philox) on CUDA. The kernel holds gen.mutex() while it draws or reads and advances
  // the state, and with the same state draws the same numbers every time. On CUDA those
  // numbers depend only on (seed, offset, element index) (core/philox.h), never on the
  // launch's grid. self: contiguous floating; uniform values in [from, to).
  void (*uniform)(const Tensor& self, double from, double to, GeneratorImpl& gen);
  void (*normal)(const Tensor& self, double mean, double std, GeneratorImpl& gen);
  // self: contiguous integral or floating; integers uniform in [low, high), low < high.
  void (*random_int)(const Tensor& self, int64_t low, int64_t high, GeneratorImpl& gen);
};

// The registry, indexed by DeviceType. core/cpu/ registers the CPU entry statically.
void register_device_kernels(DeviceType type, const DeviceKernels* kernels);
// Throws a clear error when the device has no backend (e.g. CUDA in a CPU-only build).
const DeviceKernels& kernels_for(Device device);

}  // namespace glass
