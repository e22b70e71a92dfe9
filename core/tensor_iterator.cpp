// core/tensor_iterator.cpp — building the iteration space, and walking it.
//
// [SECTION] configuration      [SECTION] shape and dtypes      [SECTION] dims
// [SECTION] iteration
#include "core/tensor_iterator.h"

#include <algorithm>
#include <numeric>

#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "core/type_promotion.h"

namespace glass {

namespace {
constexpr int kMaxIterDims = 16;
}  // namespace

// [SECTION] configuration ------------------------------------------------------------

TensorIteratorConfig& TensorIteratorConfig::add_output(const Tensor& t) {
  outputs_.push_back(t);
  return *this;
}

TensorIteratorConfig& TensorIteratorConfig::add_input(const Tensor& t) {
  GLASS_CHECK(t.defined(), op_, "(): expected a defined tensor as input ", inputs_.size(),
              ", got an undefined one");
  inputs_.push_back(t);
  promote_.push_back(true);
  return *this;
}

TensorIteratorConfig& TensorIteratorConfig::add_const_input(const Tensor& t) {
  add_input(t);
  promote_.back() = false;
  return *this;
}

TensorIterator TensorIteratorConfig::build() {
  TensorIterator it;
  it.op_ = op_;
  it.reduction_ = reduction_;
  it.noutputs_ = static_cast<int>(outputs_.size());
  it.ops_.reserve(outputs_.size() + inputs_.size());
  for (const auto* list : {&outputs_, &inputs_})
    for (const Tensor& t : *list) it.ops_.emplace_back().tensor = t;
  it.compute_shape(*this);
  it.compute_types(*this);
  it.allocate_or_check_outputs(*this);
  it.coalesce_dims();
  // The run loops keep per-dim and per-operand state in fixed stack arrays.
  GLASS_CHECK(it.ndim() <= kMaxIterDims && it.ntensors() <= kMaxIterDims, op_,
              "(): TensorIterator supports at most ", kMaxIterDims,
              " dims (after merging "
              "contiguous ones) and ",
              kMaxIterDims, " operands; got ", it.ndim(), " and ", it.ntensors());
  for (auto& op : it.ops_) {
    op.data = static_cast<char*>(op.tensor.data_ptr());
    if (op.cpu_scalar)  // read on the host once, here; the kernel gets the value
      op.scalar = dispatch_dtype(op.tensor.dtype(), it.op_, [&]<class T>() -> Scalar {
        return Scalar(*reinterpret_cast<const T*>(op.data));
      });
  }
  return it;
}

// [SECTION] shape and dtypes ---------------------------------------------------------

void TensorIterator::compute_shape(const TensorIteratorConfig& cfg) {
  // The device: the one every operand is on, except 0-dim CPU inputs, which may join an
  // iteration on another device (Note [CPU scalars in device iterations]). Inputs first,
  // so that an output on the wrong device is the one the error names as such.
  bool have_device = false;
  int n = ntensors();
  for (int i = 0; i < n; ++i) {
    int k = (noutputs_ + i) % n;  // inputs, then outputs
    const Tensor& t = ops_[k].tensor;
    if (!t.defined()) continue;
    bool is_output = k < noutputs_;
    if (!is_output && t.dim() == 0 && t.is_cpu()) continue;  // a CPU scalar
    if (!have_device) {
      device_ = t.device();
      have_device = true;
    }
    GLASS_CHECK(t.device() == device_, op_,
                "(): expected all tensors to be on the same device, but found at least two "
                "devices, ",
                device_, " and ", t.device(), (is_output ? " (the output)" : ""),
                "; move one with .to(device) (only a 0-dim CPU tensor may join an op on "
                "another device)");
  }
  if (!have_device) device_ = Device(kCPU);  // only CPU scalars

  DimVector shape;
  bool first = true;
  for (size_t k = noutputs_; k < ops_.size(); ++k) {
    shape = first ? DimVector(ops_[k].tensor.sizes())
                  : broadcast_shapes(shape, ops_[k].tensor.sizes(), op_);
    first = false;
  }
  if (cfg.reduction_) {
    // The output has the keepdim shape; it broadcasts against the input by design.
    GLASS_INTERNAL_ASSERT(noutputs_ >= 1 && ops_[0].tensor.defined(), "reduction needs an output");
  } else {
    for (int k = 0; k < noutputs_; ++k) {
      const Tensor& out = ops_[k].tensor;
      if (!out.defined()) continue;
      if (first) {
        shape = DimVector(out.sizes());
        first = false;
      }
      GLASS_CHECK(out.sizes() == IntArrayRef(shape), op_, "(): output with shape ", out.sizes(),
                  " doesn't match the broadcast shape ", IntArrayRef(shape),
                  (cfg.inplace_ ? " (an in-place op cannot change the shape of its tensor; use "
                                  "the out-of-place form)"
                                : ""));
    }
  }
  logical_shape_ = shape;
  numel_ = checked_numel(shape, op_);
}

void TensorIterator::compute_types(const TensorIteratorConfig& cfg) {
  if (cfg.same_dtype_) {
    ScalarType t = ScalarType::Undefined;
    for (const Operand& op : ops_) {
      if (!op.tensor.defined()) continue;
      if (t == ScalarType::Undefined) t = op.tensor.dtype();
      GLASS_CHECK(op.tensor.dtype() == t, op_,
                  "(): expected all tensors to have the same dtype, "
                  "but got ",
                  to_string(t), " and ", to_string(op.tensor.dtype()));
    }
    common_dtype_ = t;
  } else if (cfg.static_common_) {
    common_dtype_ = *cfg.static_common_;
  } else {
    bool all_promote =
        std::find(cfg.promote_.begin(), cfg.promote_.end(), false) == cfg.promote_.end();
    if (all_promote) {
      common_dtype_ = result_type(cfg.inputs_);
    } else {
      std::vector<Tensor> promoted;
      for (size_t i = 0; i < cfg.inputs_.size(); ++i)
        if (cfg.promote_[i]) promoted.push_back(cfg.inputs_[i]);
      common_dtype_ = result_type(promoted);
    }
    // No inputs to promote (fill_, a pure write): compute in the output's own dtype.
    for (int k = 0; k < noutputs_ && common_dtype_ == ScalarType::Undefined; ++k)
      if (ops_[k].tensor.defined()) common_dtype_ = ops_[k].tensor.dtype();
    if (cfg.int_to_float_ && is_integral_type(common_dtype_, true))
      common_dtype_ = get_default_dtype();
  }
  // Inputs that differ from the computation dtype are converted once, up front — a CPU
  // scalar of a device op on the CPU, where it stays (Note [CPU scalars in device
  // iterations]).
  for (size_t i = 0; i < cfg.inputs_.size(); ++i) {
    Operand& op = ops_[noutputs_ + i];
    if (cfg.promote_[i] && op.tensor.dtype() != common_dtype_)
      op.tensor = op.tensor.to(common_dtype_);
    op.cpu_scalar = op.tensor.device() != device_;  // compute_shape let only CPU scalars differ
  }
}

void TensorIterator::allocate_or_check_outputs(const TensorIteratorConfig& cfg) {
  ScalarType out_dtype = cfg.static_out_.value_or(common_dtype_);
  // Strides of the defined operands over the logical shape, then the iteration order.
  compute_strides();
  reorder_dims();
  for (int k = 0; k < noutputs_; ++k) {
    Operand& op = ops_[k];
    if (!op.tensor.defined()) {
      // Allocate in the iteration order, so a result of transposed inputs is laid out
      // like them (PyTorch does the same) and is written sequentially.
      DimVector perm_sizes(shape_.size());
      for (size_t d = 0; d < shape_.size(); ++d) perm_sizes[d] = shape_[shape_.size() - 1 - d];
      Tensor t = empty(perm_sizes, TensorOptions(out_dtype).device(device_));
      DimVector inv(shape_.size());
      bool identity = true;
      for (size_t d = 0; d < perm_.size(); ++d) {
        inv[perm_[d]] = static_cast<int64_t>(shape_.size() - 1 - d);
        identity = identity && inv[perm_[d]] == perm_[d];
      }
      op.tensor = identity ? t : t.permute(inv);
    } else {
      const Tensor& out = op.tensor;
      GLASS_CHECK(can_cast(out_dtype, out.dtype()), op_, "(): result type ", to_string(out_dtype),
                  " can't be cast to the desired output type ", to_string(out.dtype()));
      GLASS_CHECK(!cfg.check_overlap_ || !has_internal_overlap(out.sizes(), out.strides()), op_,
                  "(): unsupported operation: more than one element of the written-to tensor "
                  "refers to a single memory location (an expanded tensor?). Please clone() the "
                  "tensor before performing the operation.");
      for (int i = noutputs_; i < ntensors(); ++i) {
        const Tensor& in = ops_[i].tensor;
        if (!cfg.check_overlap_ || !in.is_alias_of(out) || in.is_same(out)) continue;
        bool same_layout = in.sizes() == out.sizes() && in.strides() == out.strides() &&
                           in.storage_offset() == out.storage_offset();
        if (same_layout || in.numel() == 0 || out.numel() == 0) continue;
        auto [ilo, ihi] = storage_extent(in.sizes(), in.strides());
        auto [olo, ohi] = storage_extent(out.sizes(), out.strides());
        bool disjoint = in.storage_offset() + ihi < out.storage_offset() + olo ||
                        out.storage_offset() + ohi < in.storage_offset() + ilo;
        GLASS_CHECK(disjoint, op_,
                    "(): unsupported operation: some elements of the input tensor "
                    "and the written-to tensor refer to a single memory location. Please clone() "
                    "the input first.");
      }
      if (out.dtype() != out_dtype) {
        op.original = out;
        op.tensor = empty(out.sizes(), TensorOptions(out_dtype).device(device_));
        if (cfg.reduction_ || cfg.inplace_) op.tensor.copy_(out);  // accumulated into / read
      }
    }
    // Recompute this output's strides in the iteration order.
    DimVector s(shape_.size());
    for (size_t d = 0; d < perm_.size(); ++d) {
      int64_t ud = perm_[d];
      int64_t size = op.tensor.dim() == 0 ? 1 : op.tensor.size(ud);
      s[d] = size == 1 && logical_shape_[ud] != 1 ? 0
                                                  : op.tensor.stride(ud) * op.tensor.element_size();
    }
    op.strides = std::move(s);
  }
}

// [SECTION] dims ---------------------------------------------------------------------

void TensorIterator::compute_strides() {
  int64_t nd = static_cast<int64_t>(logical_shape_.size());
  for (Operand& op : ops_) {
    op.strides.assign(nd, 0);
    if (!op.tensor.defined()) continue;
    const Tensor& t = op.tensor;
    int64_t offset = nd - t.dim();  // right-align, as broadcasting does
    for (int64_t d = 0; d < t.dim(); ++d) {
      bool broadcast = t.size(d) == 1 && logical_shape_[offset + d] != 1;
      op.strides[offset + d] = broadcast ? 0 : t.stride(d) * t.element_size();
    }
  }
}

// Orders dims innermost-first by the operands' strides (outputs first), as PyTorch's
// reorder_dimensions does; perm_[k] is the user dim that becomes iteration dim k.
void TensorIterator::reorder_dims() {
  int64_t nd = static_cast<int64_t>(logical_shape_.size());
  perm_.resize(nd);
  for (int64_t k = 0; k < nd; ++k) perm_[k] = nd - 1 - k;
  auto should_swap = [&](int64_t d0, int64_t d1) {
    for (const Operand& op : ops_) {
      if (!op.tensor.defined()) continue;
      int64_t s0 = op.strides[d0], s1 = op.strides[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1) return s0 < s1 ? -1 : 1;
    }
    return 0;
  };
  for (int64_t i = 1; i < nd; ++i) {
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      int c = should_swap(perm_[d0], perm_[d1]);
      if (c > 0) {
        std::swap(perm_[d0], perm_[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  shape_.resize(nd);
  for (int64_t k = 0; k < nd; ++k) shape_[k] = logical_shape_[perm_[k]];
  for (Operand& op : ops_) {
    if (!op.tensor.defined()) continue;
    DimVector s(nd);
    for (int64_t k = 0; k < nd; ++k) s[k] = op.strides[perm_[k]];
    op.strides = std::move(s);
  }
}

void TensorIterator::coalesce_dims() {
  int nd = ndim();
  if (nd == 0) {  // 0-dim: one element, iterated as a run of 1
    shape_ = {1};
    for (Operand& op : ops_) op.strides = {0};
    return;
  }
  auto can_merge = [&](int d0, int d1) {
    if (shape_[d0] == 1 || shape_[d1] == 1) return true;
    for (const Operand& op : ops_)
      if (op.strides[d0] * shape_[d0] != op.strides[d1]) return false;
    return true;
  };
  int prev = 0;
  for (int d = 1; d < nd; ++d) {
    if (can_merge(prev, d)) {
      if (shape_[prev] == 1)
        for (Operand& op : ops_) op.strides[prev] = op.strides[d];
      shape_[prev] *= shape_[d];
    } else {
      ++prev;
      if (prev != d) {
        shape_[prev] = shape_[d];
        for (Operand& op : ops_) op.strides[prev] = op.strides[d];
      }
    }
  }
  shape_.resize(prev + 1);
  for (Operand& op : ops_) op.strides.resize(prev + 1);
}

// [SECTION] iteration ----------------------------------------------------------------

bool TensorIterator::is_contiguous() const {
  if (ndim() != 1) return false;
  for (const Operand& op : ops_)
    if (op.strides[0] != op.tensor.element_size()) return false;
  return true;
}

bool TensorIterator::is_scalar(int k) const {
  for (int64_t s : ops_[k].strides)
    if (s != 0) return false;
  return true;
}

void TensorIterator::serial_for_each(const Loop& loop, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  int nd = ndim(), nt = ntensors();
  // Small fixed buffers: this runs once per op call, so no heap allocation here.
  int64_t counter[kMaxIterDims];
  int64_t rem = begin;
  for (int d = 0; d < nd; ++d) {
    counter[d] = rem % shape_[d];
    rem /= shape_[d];
  }
  char* ptrs[kMaxIterDims];
  int64_t inner[kMaxIterDims];
  for (int k = 0; k < nt; ++k) inner[k] = ops_[k].strides[0];
  int64_t pos = begin;
  while (pos < end) {
    for (int k = 0; k < nt; ++k) {
      char* p = ops_[k].data;
      for (int d = 0; d < nd; ++d) p += counter[d] * ops_[k].strides[d];
      ptrs[k] = p;
    }
    int64_t n = std::min(shape_[0] - counter[0], end - pos);
    loop(ptrs, inner, n);
    pos += n;
    counter[0] += n;
    for (int d = 0; d < nd - 1 && counter[d] == shape_[d]; ++d) {
      counter[d] = 0;
      counter[d + 1]++;
    }
  }
}

// Note [Tiling]
// When operands disagree on which dim is fastest in memory — `a.t() + b`, or the copy
// inside `x.t().contiguous()` — walking dim 0 in long runs makes the transposed
// operand jump by its large stride on every element: each read touches a new cache
// line (and often a new page), and by the time the next element of that line is
// wanted, the line is gone. Walking dims 0 and 1 in kTile x kTile tiles instead keeps
// the kTile lines the strided operand is reading in cache until all their elements
// have been used, and each inner run is still kTile elements long.
namespace {
constexpr int64_t kTile = 64;
}

bool TensorIterator::needs_tiling() const {
  if (ndim() < 2 || shape_[0] < 2 * kTile || shape_[1] < 2) return false;
  for (const Operand& op : ops_) {
    int64_t s0 = std::abs(op.strides[0]), s1 = std::abs(op.strides[1]);
    if (s1 != 0 && s1 < s0) return true;
  }
  return false;
}

int64_t TensorIterator::num_tile_rows() const {
  int64_t outer = 1;
  for (int d = 2; d < ndim(); ++d) outer *= shape_[d];
  return outer * ((shape_[1] + kTile - 1) / kTile);
}

void TensorIterator::tiled_for_each(const Loop& loop, int64_t begin, int64_t end) const {
  int nd = ndim(), nt = ntensors();
  int64_t rows_per_outer = (shape_[1] + kTile - 1) / kTile;
  char* ptrs[kMaxIterDims];
  int64_t inner[kMaxIterDims];
  for (int k = 0; k < nt; ++k) inner[k] = ops_[k].strides[0];
  for (int64_t r = begin; r < end; ++r) {
    // r -> (outer index over dims >= 2, first dim-1 index of this tile row)
    int64_t outer = r / rows_per_outer, j0 = (r % rows_per_outer) * kTile;
    int64_t j1 = std::min(j0 + kTile, shape_[1]);
    char* base[kMaxIterDims];
    for (int k = 0; k < nt; ++k) {
      char* p = ops_[k].data;
      int64_t rem = outer;
      for (int d = 2; d < nd; ++d) {
        p += (rem % shape_[d]) * ops_[k].strides[d];
        rem /= shape_[d];
      }
      base[k] = p;
    }
    for (int64_t i0 = 0; i0 < shape_[0]; i0 += kTile) {
      int64_t n = std::min(kTile, shape_[0] - i0);
      for (int64_t j = j0; j < j1; ++j) {
        for (int k = 0; k < nt; ++k)
          ptrs[k] = base[k] + i0 * ops_[k].strides[0] + j * ops_[k].strides[1];
        loop(ptrs, inner, n);
      }
    }
  }
}

void TensorIterator::for_each(const Loop& loop, int64_t grain) const {
  if (numel_ == 0) return;
  if (needs_tiling()) {
    int64_t rows = num_tile_rows();
    int64_t row_elems = numel_ / rows;
    if (reduction_ || numel_ < grain || get_num_threads() == 1 || in_parallel_region()) {
      tiled_for_each(loop, 0, rows);
    } else {
      parallel_for(0, rows, std::max<int64_t>(1, grain / std::max<int64_t>(row_elems, 1)),
                   [&](int64_t b, int64_t e) { tiled_for_each(loop, b, e); });
    }
    return;
  }
  if (reduction_ || numel_ < grain || get_num_threads() == 1 || in_parallel_region()) {
    serial_for_each(loop, 0, numel_);
    return;
  }
  parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { serial_for_each(loop, b, e); });
}

void TensorIterator::cast_outputs() {
  for (int k = 0; k < noutputs_; ++k) {
    Operand& op = ops_[k];
    if (op.original.defined()) detail::copy_into(op.original, op.tensor);  // the op bumps once
  }
}

}  // namespace glass
