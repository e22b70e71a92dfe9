// core/tensor.h — Tensor, the handle every user touches.
//
// A Tensor is a refcounted pointer to a TensorImpl: copying a Tensor is cheap and both
// copies name the same tensor (assigning through one is seen through the other). All
// methods below forward to the free functions in core/ops/*.h, which go through the
// dispatcher (dispatcher.h), so upper layers (autograd, the tracer) see every call.
// A default-constructed Tensor is "undefined"; every op rejects it with a clear error.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "core/array_ref.h"
#include "core/generator.h"
#include "core/scalar.h"
#include "core/tensor_accessor.h"
#include "core/tensor_impl.h"
#include "core/tensor_options.h"

namespace glass {

class Tensor;
using TensorList = ArrayRef<Tensor>;
namespace autograd {
class Node;  // autograd/node.h; core only passes pointers to it around
}

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  // Same TensorImpl (not merely the same storage): `a.is_same(a.view({-1}))` is false.
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  long use_count() const { return impl_.use_count(); }

  // ---- metadata (cheap; no dispatch) ------------------------------------------------
  IntArrayRef sizes() const { return checked_impl()->sizes(); }
  IntArrayRef strides() const { return checked_impl()->strides(); }
  int64_t size(int64_t dim) const { return checked_impl()->size(dim); }
  int64_t stride(int64_t dim) const { return checked_impl()->stride(dim); }
  int64_t dim() const { return checked_impl()->dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return checked_impl()->numel(); }
  int64_t storage_offset() const { return checked_impl()->storage_offset(); }
  ScalarType dtype() const { return checked_impl()->dtype(); }
  ScalarType scalar_type() const { return checked_impl()->dtype(); }
  Device device() const { return checked_impl()->device(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_contiguous() const { return checked_impl()->is_contiguous(); }
  bool is_floating_point() const { return is_floating_type(dtype()); }
  int64_t element_size() const { return static_cast<int64_t>(glass::element_size(dtype())); }
  int64_t nbytes() const { return numel() * element_size(); }
  const Storage& storage() const { return checked_impl()->storage(); }
  // True when both tensors view the same Storage (they alias).
  bool is_alias_of(const Tensor& other) const { return storage().is_alias_of(other.storage()); }
  uint32_t _version() const { return checked_impl()->version(); }
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }

  // Raw pointer to element 0; the typed form checks the dtype. On a device, this is a
  // device address: pass it to a kernel, never dereference it in host code.
  void* data_ptr() const { return checked_impl()->data(); }
  template <class T>
  T* data_ptr() const;
  // t.accessor<float, 2>()[i][j]: typed host access through the strides, for CPU tensors
  // only (a device tensor is an error that says to call .cpu() first). Not on temporaries:
  // the accessor would outlive the tensor it points into.
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() const&;
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;
  // t.packed_accessor32<float, 2, glass::cuda::DevicePtrTraits>(): the accessor a kernel
  // takes as an argument (core/tensor_accessor.h), sizes and strides copied in as int32.
  // Checks the dtype, the dim, that every index fits in int32, and that PtrTraits suits
  // the device (DevicePtrTraits for a CUDA tensor, the host's traits for a CPU one).
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() const&;
  template <class T, size_t N, template <class> class PtrTraits = DefaultPtrTraits>
  PackedTensorAccessor32<T, N, PtrTraits> packed_accessor32() && = delete;
  // The value of a one-element tensor (waits for the device, as in PyTorch).
  template <class T>
  T item() const;
  Scalar item() const;

  bool requires_grad() const { return checked_impl()->requires_grad(); }
  // Only floating-point tensors can require gradients (checked).
  Tensor& requires_grad_(bool requires_grad = true);
  Tensor& set_requires_grad(bool requires_grad) { return requires_grad_(requires_grad); }

  std::string toString() const;  // "CPUFloatType{2,3}"-style summary

  // ---- autograd (declared here as in libtorch, defined in autograd/; link
  // glasstorch::glasstorch) -------------------------------------------------------------
  // Accumulates the gradient of this tensor into the .grad() of every leaf it depends
  // on. `gradient` may be omitted for a one-element tensor. retain_graph defaults to
  // create_graph; `inputs` restricts accumulation to those leaves.
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, TensorList inputs = {}) const;
  // The accumulated gradient (undefined until a backward pass reaches this tensor).
  const Tensor& grad() const;
  Tensor& mutable_grad() const;
  // True for tensors not computed by a recorded op (all tensors that do not require grad).
  bool is_leaf() const;
  // The node that computed this tensor, or null for a leaf.
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  // Keep .grad() for this non-leaf too (leaves always keep theirs).
  void retain_grad() const;
  bool retains_grad() const;
  // hook(grad) runs when the gradient w.r.t. this tensor is computed; a defined return
  // value replaces the gradient. Returns the hook's index (its position among this
  // tensor's hooks), which remove_hook(index) takes; removing an index never returned, or
  // one already removed, is an error. Removal does not shift other indices.
  unsigned register_hook(std::function<Tensor(const Tensor&)> hook) const;
  void remove_hook(unsigned index) const;

  // ---- views: new metadata over the same storage (ops/views.h) ------------------------
  Tensor view(IntArrayRef size) const;
  Tensor view_as(const Tensor& other) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor reshape_as(const Tensor& other) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(IntArrayRef dims) const;
  Tensor expand(IntArrayRef size) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  Tensor as_strided(IntArrayRef size, IntArrayRef stride,
                    std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor unfold(int64_t dimension, int64_t size, int64_t step) const;
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor detach() const;
  Tensor contiguous() const;
  Tensor clone() const;

  // ---- devices and conversions (ops/pointwise.h, ops/factories.h) ---------------------
  // libtorch's overload set. Each returns *this when nothing would change (and copy is
  // false); otherwise a new tensor. Options that leave the dtype or device unset keep the
  // tensor's, so t.to(kCUDA) keeps the dtype and t.to(kFloat64) the device; Device(kCUDA)
  // without an index means the current CUDA device. non_blocking: a copy between pinned
  // host memory and a device is queued on the stream and the call returns at once (the
  // caller synchronizes before reading the result on the host); otherwise it is ignored.
  Tensor to(TensorOptions options = {}, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(ScalarType dtype, bool non_blocking = false, bool copy = false) const;
  // Same dtype and device as `other`.
  Tensor to(const Tensor& other, bool non_blocking = false, bool copy = false) const;
  Tensor cpu() const;   // to(kCPU): waits for the device (a sync point, as in PyTorch)
  Tensor cuda() const;  // to(kCUDA): the current CUDA device
  // A copy in page-locked host memory (get_pinned_allocator()), or *this if it already is
  // one; only for CPU tensors. Copies from it to a device can be non_blocking.
  Tensor pin_memory() const;
  bool is_pinned() const;
  // Points this tensor (every handle to it) at new_data's storage, dtype and geometry,
  // keeping its identity and autograd state (libtorch's set_data; Module::to uses it).
  void set_data(const Tensor& new_data) const;

  // ---- elementwise (ops/pointwise.h) --------------------------------------------------
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& other, const Scalar& alpha = 1);
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& other, const Scalar& alpha = 1);
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(const Scalar& other);
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  Tensor& div_(const Tensor& other);
  Tensor& div_(const Scalar& other);
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor& pow_(const Tensor& exponent);
  Tensor& pow_(const Scalar& exponent);
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;

  Tensor neg() const;
  Tensor& neg_();
  Tensor abs() const;
  Tensor& abs_();
  Tensor exp() const;
  Tensor& exp_();
  Tensor log() const;
  Tensor& log_();
  Tensor log1p() const;
  Tensor& log1p_();
  Tensor sqrt() const;
  Tensor& sqrt_();
  Tensor rsqrt() const;
  Tensor& rsqrt_();
  Tensor sin() const;
  Tensor& sin_();
  Tensor cos() const;
  Tensor& cos_();
  Tensor tanh() const;
  Tensor& tanh_();
  Tensor sigmoid() const;
  Tensor& sigmoid_();
  Tensor relu() const;
  Tensor& relu_();
  Tensor gelu(const std::string& approximate = "none") const;
  Tensor sign() const;
  Tensor& sign_();
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor clamp_min(const Scalar& min) const;
  Tensor& clamp_min_(const Scalar& min);
  Tensor clamp_max(const Scalar& max) const;
  Tensor& clamp_max_(const Scalar& max);

  Tensor eq(const Tensor& other) const;
  Tensor eq(const Scalar& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(const Scalar& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(const Scalar& other) const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_not() const;
  Tensor where(const Tensor& condition, const Tensor& other) const;  // condition ? *this : other
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);
  // Closeness and equality (ops/compare.h): |a - b| <= atol + rtol * |b| elementwise.
  Tensor isclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
                 bool equal_nan = false) const;
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
                bool equal_nan = false) const;
  bool equal(const Tensor& other) const;  // same shape and the same values

  // Copies src (broadcast to this shape, converted to this dtype) into this tensor, from
  // any device to any device; non_blocking as in to().
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor& fill_(const Scalar& value);
  Tensor& zero_();
  // Random fills (ops/random.h), from `generator` if given, else self's device's default.
  Tensor& uniform_(double from = 0, double to = 1,
                   std::optional<Generator> generator = std::nullopt);
  Tensor& normal_(double mean = 0, double std = 1,
                  std::optional<Generator> generator = std::nullopt);

  // ---- indexing (ops/indexing.h) ------------------------------------------------------
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  // Advanced indexing, x[i, j] / x[mask]: one entry per leading dim, an undefined Tensor
  // meaning "all of this dim"; Long entries pick elements, a Bool entry is a mask.
  Tensor index(TensorList indices) const;
  Tensor& index_put_(TensorList indices, const Tensor& values, bool accumulate = false);
  Tensor& index_put_(TensorList indices, const Scalar& value);
  Tensor masked_select(const Tensor& mask) const;
  Tensor nonzero() const;

  // ---- reductions (ops/reduce.h) ------------------------------------------------------
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dim, bool keepdim = false,
             std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false,
              std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  // The bool overloads take only a real bool, so x.var(0) means "over dim 0" (as in
  // PyTorch's Python API), not "unbiased = false".
  template <class B>
  requires std::same_as<B, bool> Tensor var(B unbiased)
  const { return var(IntArrayRef{}, unbiased, false); }
  Tensor var() const { return var(IntArrayRef{}, true, false); }
  Tensor var(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  template <class B>
  requires std::same_as<B, bool> Tensor std(B unbiased)
  const { return std(IntArrayRef{}, unbiased, false); }
  Tensor std() const { return std(IntArrayRef{}, true, false); }
  Tensor std(IntArrayRef dim, bool unbiased = true, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dim, bool keepdim = false) const;
  Tensor norm(const Scalar& p = 2) const;
  Tensor norm(const Scalar& p, IntArrayRef dim, bool keepdim = false) const;
  Tensor softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;

  // ---- joining, splitting and linear algebra (ops/join.h, ops/linalg.h) ---------------
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(IntArrayRef split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& mat2) const;
  Tensor bmm(const Tensor& mat2) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
               const Scalar& alpha = 1) const;

  // Compound assignment, as in libtorch.
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(const Scalar& o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(const Scalar& o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(const Scalar& o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(const Scalar& o) { return div_(o); }

 private:
  // Checks definedness, so every metadata call on an undefined tensor fails cleanly.
  TensorImpl* checked_impl() const {
    GLASS_CHECK(impl_ != nullptr,
                "called a method on an undefined Tensor (default-constructed; "
                "assign the result of an op or factory first)");
    return impl_.get();
  }

  std::shared_ptr<TensorImpl> impl_;
};

// Free operators (libtorch defines the same set).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Scalar& b);
Tensor operator&(const Tensor& a, const Tensor& b);  // logical_and on bool tensors
Tensor operator|(const Tensor& a, const Tensor& b);  // logical_or on bool tensors
Tensor operator~(const Tensor& a);                   // logical_not on bool tensors

// PyTorch's printed form: tensor([[1., 2.], [3., 4.]], dtype=torch.float64). See print.cpp.
std::ostream& operator<<(std::ostream& os, const Tensor& t);

// ---- inline template definitions -----------------------------------------------------

template <class T>
T* Tensor::data_ptr() const {
  GLASS_CHECK(scalar_type_of<std::remove_const_t<T>> == dtype(), "data_ptr<",
              to_string(scalar_type_of<std::remove_const_t<T>>), ">(): expected scalar type ",
              to_string(scalar_type_of<std::remove_const_t<T>>), " but found ", to_string(dtype()));
  return static_cast<T*>(data_ptr());
}

template <class T>
T Tensor::item() const {
  return item().to<T>();
}

template <class T, size_t N>
TensorAccessor<T, N> Tensor::accessor() const& {
  static_assert(N > 0, "accessor() is for indexing a tensor; read a 0-dim one with item<T>()");
  GLASS_CHECK(is_cpu(), "accessor(): the tensor is on ", device(),
              "; host code cannot read device memory; use .cpu() first");
  GLASS_CHECK(dim() == static_cast<int64_t>(N), "accessor<",
              to_string(scalar_type_of<std::remove_const_t<T>>), ", ", N,
              ">(): expected a tensor with ", N, " dims, got ", dim(), " (shape ", sizes(), ")");
  T* data = data_ptr<T>();
  return TensorAccessor<T, N>(data, sizes().data(), strides().data());
}

template <class T, size_t N, template <class> class PtrTraits>
PackedTensorAccessor32<T, N, PtrTraits> Tensor::packed_accessor32() const& {
  const auto what = [] {
    return std::string("packed_accessor32<") + to_string(scalar_type_of<std::remove_const_t<T>>) +
           ", " + std::to_string(N) + ">()";
  };
  GLASS_CHECK(dim() == static_cast<int64_t>(N), what(), ": expected a tensor with ", N,
              " dims, got ", dim(), " (shape ", sizes(), ")");
  T* data = data_ptr<T>();  // checks the dtype
  if constexpr (reads_device_memory<PtrTraits>) {
    GLASS_CHECK(!is_cpu(), what(), ": the tensor is on ", device(),
                "; DevicePtrTraits reads device memory, so pass a CUDA tensor (or use the "
                "default PtrTraits for a CPU tensor)");
  } else {
    GLASS_CHECK(is_cpu(), what(), ": the tensor is on ", device(),
                "; a kernel reads device memory through glass::cuda::DevicePtrTraits: "
                "packed_accessor32<T, N, DevicePtrTraits>()");
  }
  constexpr int64_t kMax = INT32_MAX;
  int32_t sizes32[N], strides32[N];
  int64_t last_offset = 0;  // the farthest element from data, in elements
  for (size_t d = 0; d < N; ++d) {
    const int64_t size = sizes()[d], stride = strides()[d];
    GLASS_CHECK(size <= kMax && stride >= -kMax && stride <= kMax, what(), ": size ", size,
                " or stride ", stride, " of dim ", d, " (shape ", sizes(), ", strides ", strides(),
                ") does not fit in int32; use a 64-bit accessor (accessor<T, N>()) or split it");
    sizes32[d] = static_cast<int32_t>(size);
    strides32[d] = static_cast<int32_t>(stride);
    // Each term and the running sum are checked as they come: both stay below 2^31, so
    // adding them cannot overflow int64, whatever N is.
    const int64_t reach = size > 0 ? (size - 1) * (stride < 0 ? -stride : stride) : 0;
    GLASS_CHECK(reach <= kMax && last_offset + reach <= kMax, what(), ": an element lies ",
                last_offset + reach, " elements from the first (shape ", sizes(), ", strides ",
                strides(), "), beyond int32 indexing; split the tensor");
    last_offset += reach;
  }
  return PackedTensorAccessor32<T, N, PtrTraits>(typename PtrTraits<T>::PtrType(data), sizes32,
                                                 strides32);
}

}  // namespace glass
