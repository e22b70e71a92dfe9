// core/tensor_iterator.h — the one engine behind every elementwise loop and reduction.
//
// Given outputs and inputs, build():
//   1. checks devices and computes the broadcast shape (seed §III);
//   2. picks the common dtype (type_promotion.h), converts inputs that differ, and
//      allocates undefined outputs — or checks given outputs against the shape and the
//      dtype (an in-place or out= result must already have the broadcast shape);
//   3. gives every operand strides over the broadcast shape, 0 on broadcast dims, so a
//      kernel never needs to know broadcasting happened;
//   4. reorders dims so the fastest-moving one in memory comes first, and coalesces
//      dims that are contiguous with each other — a contiguous 3-D add becomes one flat
//      1-D loop of numel elements.
// Then for_each(loop) calls the kernel's inner loop on 1-D runs:
//   loop(char** data, const int64_t* strides, int64_t n)
// where data[k] points at operand k's first element of the run and strides[k] is its
// stride in *bytes*. Outputs come first (operand 0 is the output).
//
// Invariant: after build(), shape_ and every operand's strides_ have ndim() entries,
// dim 0 is the innermost, and iterating them visits exactly the broadcast index space.
// Every operand is on device(), except inputs for which is_cpu_scalar(k) holds.
//
// Note [CPU scalars in device iterations]
// x * 2 wraps the 2 as a 0-dim CPU tensor (a "wrapped number"). If x is on cuda:0,
// copying that tensor to the device on every op would cost a host->device copy (and an
// allocation) per multiplication. As PyTorch's TensorIterator does, a 0-dim CPU *input*
// may therefore join an iteration whose other operands are all on one non-CPU device:
// it is converted to its computation dtype on the CPU, stays there, and is marked
// (is_cpu_scalar(k)); the device kernel gets its value as a kernel argument
// (scalar_value(k)). The iteration's device is the non-CPU one. Outputs are never CPU
// scalars, and any other mix of devices is an error naming both. An iteration whose
// operands are all on the CPU is unaffected (nothing is marked).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace glass {

class TensorIterator;

class TensorIteratorConfig {
 public:
  explicit TensorIteratorConfig(const char* op) : op_(op) {}

  // An undefined output is allocated by build(); a defined one must match the shape.
  TensorIteratorConfig& add_output(const Tensor& t);
  TensorIteratorConfig& add_input(const Tensor& t);
  // An input that keeps its own dtype and takes no part in promotion (a Bool mask, a
  // Long index tensor).
  TensorIteratorConfig& add_const_input(const Tensor& t);

  // Every operand must already have the same dtype (no promotion).
  TensorIteratorConfig& check_all_same_dtype(bool v) {
    same_dtype_ = v;
    return *this;
  }
  // Integer inputs compute in the default float dtype (sqrt, exp, true division).
  TensorIteratorConfig& promote_integer_inputs_to_float(bool v) {
    int_to_float_ = v;
    return *this;
  }
  // The output's dtype is fixed (comparisons produce Bool) instead of the common dtype.
  TensorIteratorConfig& declare_static_output_dtype(ScalarType t) {
    static_out_ = t;
    return *this;
  }
  // The computation dtype is fixed (e.g. Bool for logical ops, Long for a sum of ints).
  TensorIteratorConfig& declare_static_common_dtype(ScalarType t) {
    static_common_ = t;
    return *this;
  }
  // Reduction: the output has the input's shape with reduced dims of size 1 (keepdim
  // layout); they get stride 0 so the kernel accumulates along them.
  TensorIteratorConfig& is_reduction(bool v) {
    reduction_ = v;
    return *this;
  }
  // For in-place ops: the output is also read, so it may not overlap an input partially.
  TensorIteratorConfig& is_inplace(bool v) {
    inplace_ = v;
    return *this;
  }
  // Skip the overlap checks on outputs (index_put_ writes through a stride-0 view on
  // purpose and handles duplicates itself).
  TensorIteratorConfig& check_mem_overlap(bool v) {
    check_overlap_ = v;
    return *this;
  }

  TensorIterator build();

 private:
  friend class TensorIterator;
  const char* op_;
  std::vector<Tensor> outputs_, inputs_;
  std::vector<bool> promote_;  // per input: takes part in type promotion
  bool same_dtype_ = false;
  bool int_to_float_ = false;
  bool reduction_ = false;
  bool inplace_ = false;
  bool check_overlap_ = true;
  std::optional<ScalarType> static_out_, static_common_;
};

class TensorIterator {
 public:
  using Loop = std::function<void(char** data, const int64_t* strides, int64_t n)>;

  int ndim() const { return static_cast<int>(shape_.size()); }
  IntArrayRef shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  int ntensors() const { return static_cast<int>(ops_.size()); }
  int noutputs() const { return noutputs_; }
  // Byte strides of operand k over shape() (dim 0 innermost).
  IntArrayRef strides(int k) const { return ops_[k].strides; }
  char* data_ptr(int k) const { return ops_[k].data; }
  ScalarType dtype(int k) const { return ops_[k].tensor.dtype(); }
  ScalarType common_dtype() const { return common_dtype_; }
  Device device() const { return device_; }
  const char* op_name() const { return op_; }
  // The output as the op returns it (the user's tensor for in-place and out= forms).
  const Tensor& output(int k = 0) const {
    return ops_[k].original.defined() ? ops_[k].original : ops_[k].tensor;
  }
  const Tensor& operand(int k) const { return ops_[k].tensor; }

  // True when every operand is contiguous in one flat run (the fast path).
  bool is_contiguous() const;
  // True when operand k has stride 0 along every dim (a broadcast scalar).
  bool is_scalar(int k) const;
  // True when input k is a 0-dim CPU tensor in an iteration on another device (Note [CPU
  // scalars in device iterations]); its data_ptr(k) is then a host address.
  bool is_cpu_scalar(int k) const { return ops_[k].cpu_scalar; }
  // The value of a CPU scalar operand, in its dtype (the common dtype for promoted inputs).
  const Scalar& scalar_value(int k) const {
    GLASS_INTERNAL_ASSERT(ops_[k].cpu_scalar, "scalar_value(", k, "): not a CPU scalar operand");
    return ops_[k].scalar;
  }

  // Runs `loop` over every run, on up to get_num_threads() threads when numel() >= grain
  // (and never for reductions, whose runs may share an output element).
  void for_each(const Loop& loop, int64_t grain = 32768) const;
  // Runs `loop` over the linear range [begin, end) of the index space, serially.
  void serial_for_each(const Loop& loop, int64_t begin, int64_t end) const;

  // True when some operand moves fastest along dim 1 rather than dim 0 (a transposed
  // operand next to a contiguous one); for_each then walks dims 0 and 1 in tiles.
  // See Note [Tiling] in tensor_iterator.cpp.
  bool needs_tiling() const;

  // Writes computed values back into outputs whose dtype differed from the computation
  // dtype (an out= Double tensor for a Float computation). Kernels call it last.
  void cast_outputs();

 private:
  friend class TensorIteratorConfig;
  struct Operand {
    Tensor tensor;    // what the kernel reads/writes (dtype = computation dtype)
    Tensor original;  // the user's output tensor when `tensor` is a temporary
    char* data = nullptr;
    DimVector strides;        // bytes, one per dim of shape_
    bool cpu_scalar = false;  // Note [CPU scalars in device iterations]
    Scalar scalar;            // its value, when cpu_scalar
  };

  void compute_shape(const TensorIteratorConfig& cfg);
  void compute_types(const TensorIteratorConfig& cfg);
  void allocate_or_check_outputs(const TensorIteratorConfig& cfg);
  void compute_strides();
  void reorder_dims();
  void coalesce_dims();
  // Runs the tile rows [begin, end) (see Note [Tiling]).
  void tiled_for_each(const Loop& loop, int64_t begin, int64_t end) const;
  int64_t num_tile_rows() const;

  const char* op_ = "";
  std::vector<Operand> ops_;
  int noutputs_ = 0;
  DimVector shape_;          // broadcast shape, dim 0 innermost after build()
  DimVector logical_shape_;  // broadcast shape in the users' order
  DimVector perm_;           // perm_[k] = user dim that is iteration dim k
  int64_t numel_ = 0;
  ScalarType common_dtype_ = ScalarType::Undefined;
  Device device_ = Device(kCPU);
  bool reduction_ = false;
};

}  // namespace glass
