// core/ops/factories.cpp — making new tensors (see factories.h).
#include "core/ops/factories.h"

#include <cmath>
#include <cstring>
#include <string>

#include "core/device_guard.h"
#include "core/dispatcher.h"
#include "core/ops/pointwise.h"
#include "core/shape.h"

namespace glass {
namespace {

Tensor finish(Tensor t, const TensorOptions& options) {
  if (options.requires_grad()) t.requires_grad_(true);
  return t;
}

// Values C++ computes on the host (a literal list, a range) are written into a host tensor
// below the Trace key, then become the caller's tensor through one dispatched copy. A trace
// (compiler/) cannot see writes through data_ptr, so it records that copy of a constant
// instead: run again at each call, it gives a function that writes into its own tensor({...})
// the literal again every time, as eager mode does.
template <class Fill>
Tensor from_host_values(IntArrayRef shape, ScalarType host_dtype, const TensorOptions& options,
                        Fill&& fill) {
  Tensor host;
  {
    dispatch::ExcludeGuard below_trace(DispatchKey::Trace);
    host = empty(shape, TensorOptions(host_dtype));
    fill(host);
  }
  Tensor out = ops::to_copy(host, options.dtype(), options.device(), false);
  return options.pinned_memory() ? out.pin_memory() : out;
}

// Why there may be no pinned allocator, and how to get one.
constexpr const char* kNoPinnedAllocator =
    "no CUDA runtime is available to page-lock memory (GLASS_CUDA=sim or "
    "glass::cuda::use_simulator() gives the simulated GPU)";

// Page-locked host bytes from the pinned allocator (allocator.h), as a CPU Storage.
Storage allocate_pinned(size_t nbytes, const TensorOptions& options, const char* op) {
  GLASS_CHECK(!options.has_device() || options.device().is_cpu(), op,
              "(): pinned_memory=true asks for page-locked host memory, but the device is ",
              options.device(), "; only CPU tensors can be pinned");
  Allocator* pinned = get_pinned_allocator();
  GLASS_CHECK(pinned != nullptr, op, "(): pinned_memory=true, but ", kNoPinnedAllocator);
  return Storage(std::make_shared<StorageImpl>(nbytes, pinned, Device(kCPU)));
}

// The one factory op: every factory below starts from it, so a trace records where each new
// tensor came from (and zeros/full then record the fill that follows).
Tensor empty_strided_native(IntArrayRef size, IntArrayRef stride, ScalarType dt, Device device,
                            bool pinned_memory) {
  GLASS_CHECK(size.size() == stride.size(), "empty_strided(): got ", size.size(), " sizes but ",
              stride.size(), " strides");
  checked_numel(size, "empty_strided");
  for (size_t d = 0; d < stride.size(); ++d)
    GLASS_CHECK(stride[d] >= 0, "empty_strided(): negative stride ", stride[d], " at dim ", d);
  auto [lo, hi] = storage_extent(size, stride);
  int64_t elems = hi - lo + 1;
  int64_t nbytes = 0;
  GLASS_CHECK(!__builtin_mul_overflow(elems, static_cast<int64_t>(element_size(dt)), &nbytes),
              "empty(): shape ", size, " needs more bytes than fit in int64 (size overflow)");
  Storage storage = pinned_memory ? allocate_pinned(static_cast<size_t>(nbytes),
                                                    TensorOptions(dt).device(device), "empty")
                                  : Storage::allocate(static_cast<size_t>(nbytes), device);
  auto impl = std::make_shared<TensorImpl>(std::move(storage), dt, size, stride, 0);
  return Tensor(std::move(impl));
}

}  // namespace

namespace ops {
Op<Tensor(IntArrayRef, IntArrayRef, ScalarType, Device, bool)> empty_strided("empty_strided",
                                                                             &empty_strided_native,
                                                                             kFactoryOp);
namespace {
const bool registered = dispatch::register_ops({&empty_strided});
}  // namespace
}  // namespace ops

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, const TensorOptions& options) {
  return finish(
      ops::empty_strided(size, stride, options.dtype(), options.device(), options.pinned_memory()),
      options);
}

Tensor empty(IntArrayRef size, const TensorOptions& options) {
  checked_numel(size, "empty");
  return empty_strided(size, contiguous_strides(size), options);
}

Tensor zeros(IntArrayRef size, const TensorOptions& options) {
  Tensor t = empty(size, options.requires_grad(false));
  detail::fill_into(t, 0);
  return finish(t, options);
}

Tensor ones(IntArrayRef size, const TensorOptions& options) {
  // Unlike full(size, 1), ones() is floating unless a dtype is given (as in PyTorch).
  return full(size, 1, options.dtype(options.dtype()));
}

Tensor full(IntArrayRef size, const Scalar& value, const TensorOptions& options) {
  // full(size, 2) is Long and full(size, 2.5) is Float, as in PyTorch.
  TensorOptions o =
      options.has_dtype()
          ? options
          : options.dtype(value.is_floating_point() ? get_default_dtype() : value.type());
  Tensor t = empty(size, o.requires_grad(false));
  detail::fill_into(t, value);
  return finish(t, o);
}

// The *_like factories take what `options` leaves unset (dtype, device) from t, as
// libtorch's do: zeros_like(cuda_x, kBool) is a Bool tensor on cuda_x's device.
Tensor empty_like(const Tensor& t, const TensorOptions& options) {
  return empty(t.sizes(), t.options().merge_in(options));
}
Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.options()); }
Tensor zeros_like(const Tensor& t, const TensorOptions& options) {
  return zeros(t.sizes(), t.options().merge_in(options));
}
Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), t.options()); }
Tensor ones_like(const Tensor& t, const TensorOptions& options) {
  return ones(t.sizes(), t.options().merge_in(options));
}
Tensor ones_like(const Tensor& t) { return ones(t.sizes(), t.options()); }
Tensor full_like(const Tensor& t, const Scalar& v) { return full(t.sizes(), v, t.options()); }
Tensor full_like(const Tensor& t, const Scalar& v, const TensorOptions& options) {
  return full(t.sizes(), v, t.options().merge_in(options));
}

Tensor arange(const Scalar& end, const TensorOptions& options) {
  return arange(0, end, 1, options);
}
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options) {
  return arange(start, end, 1, options);
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              const TensorOptions& options) {
  bool all_int =
      !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  TensorOptions o =
      options.has_dtype() ? options : options.dtype(all_int ? kInt64 : get_default_dtype());
  double s = start.toDouble(), e = end.toDouble(), st = step.toDouble();
  GLASS_CHECK(st != 0, "arange(): step must be nonzero");
  GLASS_CHECK(std::isfinite(s) && std::isfinite(e), "arange(): unsupported range: ", s, " -> ", e);
  GLASS_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
              "arange(): upper bound and larger bound "
              "inconsistent with step sign (start ",
              s, ", end ", e, ", step ", st, ")");
  int64_t n = all_int
                  ? (end.toLong() - start.toLong() + step.toLong() - (step.toLong() > 0 ? 1 : -1)) /
                        step.toLong()
                  : static_cast<int64_t>(std::ceil((e - s) / st));
  TensorOptions result = o.requires_grad(false);
  if (all_int && o.dtype() == kInt64)  // exact for large integers
    return finish(from_host_values({n}, kInt64, result,
                                   [&](Tensor& t) {
                                     int64_t* q = t.data_ptr<int64_t>();
                                     for (int64_t i = 0; i < n; ++i)
                                       q[i] = start.toLong() + i * step.toLong();
                                   }),
                  o);
  return finish(from_host_values({n}, kFloat64, result,
                                 [&](Tensor& t) {
                                   double* p = t.data_ptr<double>();
                                   for (int64_t i = 0; i < n; ++i)
                                     p[i] = s + static_cast<double>(i) * st;
                                 }),
                o);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                const TensorOptions& options) {
  GLASS_CHECK(steps >= 0, "linspace(): number of steps must be non-negative, got ", steps);
  double s = start.toDouble(), e = end.toDouble();
  double step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : 0.0;
  // Without a dtype, the default one (Float), as PyTorch: options.dtype() resolves it.
  return finish(
      from_host_values({steps}, kFloat64, options.requires_grad(false).dtype(options.dtype()),
                       [&](Tensor& t) {
                         double* p = t.data_ptr<double>();
                         // PyTorch fills the second half from the end, so the
                         // last element is exactly `end`.
                         int64_t half = steps / 2;
                         for (int64_t i = 0; i < steps; ++i)
                           p[i] = i < half ? s + step * static_cast<double>(i)
                                           : e - step * static_cast<double>(steps - 1 - i);
                       }),
      options);
}

Tensor eye(int64_t n, const TensorOptions& options) { return eye(n, n, options); }

Tensor eye(int64_t n, int64_t m, const TensorOptions& options) {
  GLASS_CHECK(n >= 0 && m >= 0, "eye(): n and m must be non-negative, got n=", n, ", m=", m);
  Tensor t = zeros({n, m}, options.requires_grad(false));
  detail::fill_into(t.diagonal(), 1);
  return finish(t, options);
}

Tensor scalar_tensor(const Scalar& s, const TensorOptions& options) {
  TensorOptions o = options.has_dtype()
                        ? options
                        : options.dtype(s.is_floating_point() ? get_default_dtype() : s.type());
  Tensor t = empty({}, o.requires_grad(false));
  detail::fill_into(t, s);
  return finish(t, o);
}

Tensor wrapped_scalar_tensor(const Scalar& s) {
  // A number in an op (x * 0.5) is an argument, not a tensor the function made: made below
  // the Trace key, a trace sees it as the constant it is (compiler/).
  dispatch::ExcludeGuard below_trace(DispatchKey::Trace);
  // Kept in double / int64 / bool so no precision is lost before promotion decides.
  Tensor t = empty({}, TensorOptions(s.type()));
  dispatch_dtype(s.type(), "wrapped_scalar_tensor",
                 [&]<class T>() { *t.data_ptr<T>() = s.to<T>(); });
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;  // a CPU scalar joins ops on any device (see TensorIterator)
}

namespace {

// The one place from_blob wraps foreign memory: a Storage that owns nothing (or runs
// `deleter` when the last view goes) and a TensorImpl over it.
Tensor wrap_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options,
                 std::function<void(void*)> deleter) {
  GLASS_CHECK(data != nullptr || checked_numel(sizes, "from_blob") == 0,
              "from_blob(): data pointer is null");
  GLASS_CHECK(sizes.size() == strides.size(), "from_blob(): got ", sizes.size(), " sizes but ",
              strides.size(), " strides");
  auto [lo, hi] = storage_extent(sizes, strides);
  GLASS_CHECK(lo >= 0, "from_blob(): negative strides are not supported");
  size_t nbytes = static_cast<size_t>(hi + 1) * element_size(options.dtype());
  // Device memory without an index is the current device's, as for an allocation.
  auto impl = std::make_shared<StorageImpl>(data, nbytes, resolve_device(options.device()),
                                            std::move(deleter));
  auto t =
      std::make_shared<TensorImpl>(Storage(std::move(impl)), options.dtype(), sizes, strides, 0);
  return finish(Tensor(std::move(t)), options);
}

}  // namespace

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options) {
  return wrap_blob(data, sizes, strides, options, nullptr);
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options) {
  checked_numel(sizes, "from_blob");
  return wrap_blob(data, sizes, contiguous_strides(sizes), options, nullptr);
}

Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter,
                 const TensorOptions& options) {
  checked_numel(sizes, "from_blob");
  return wrap_blob(data, sizes, contiguous_strides(sizes), options, std::move(deleter));
}

// ---- nested lists -----------------------------------------------------------------

namespace {

// Walks the nested list once to find its shape and the promoted dtype of its leaves.
void infer_shape(const NestedList& l, size_t depth, Shape& shape, ScalarType& dtype,
                 const std::string& where) {
  if (l.is_leaf()) {
    ScalarType t = l.value().is_floating_point() ? get_default_dtype() : l.value().type();
    dtype = promote_types(dtype, t);
    return;
  }
  int64_t n = static_cast<int64_t>(l.children().size());
  if (depth == shape.size()) shape.resize(depth + 1, n);
  GLASS_CHECK(shape[depth] == n, "tensor(): ragged nested list: expected a list of ", shape[depth],
              " elements at ", where, " (like its first sibling), got ", n);
  for (int64_t i = 0; i < n; ++i)
    infer_shape(l.children()[i], depth + 1, shape, dtype, where + "[" + std::to_string(i) + "]");
}

void flatten_into(const NestedList& l, size_t depth, size_t ndim, std::vector<Scalar>& out,
                  const std::string& where) {
  if (l.is_leaf()) {
    GLASS_CHECK(depth == ndim, "tensor(): ragged nested list: a number at ", where,
                " where a list was expected");
    out.push_back(l.value());
    return;
  }
  GLASS_CHECK(depth < ndim, "tensor(): ragged nested list: a list at ", where,
              " where a number was expected");
  for (size_t i = 0; i < l.children().size(); ++i)
    flatten_into(l.children()[i], depth + 1, ndim, out, where + "[" + std::to_string(i) + "]");
}

}  // namespace

Tensor tensor(const NestedList& data, const TensorOptions& options) {
  Shape shape;
  ScalarType dt = ScalarType::Undefined;
  infer_shape(data, 0, shape, dt, "data");
  std::vector<Scalar> flat;
  flatten_into(data, 0, shape.size(), flat, "data");
  if (dt == ScalarType::Undefined) dt = get_default_dtype();  // tensor({}) is an empty Float
  ScalarType out = options.has_dtype() ? options.dtype() : dt;
  return finish(
      from_host_values(
          shape, out,
          TensorOptions(out).device(options.device()).pinned_memory(options.pinned_memory()),
          [&](Tensor& t) {
            dispatch_dtype(out, "tensor", [&]<class T>() {
              T* p = t.data_ptr<T>();
              for (size_t i = 0; i < flat.size(); ++i) p[i] = flat[i].to<T>();
            });
          }),
      options);
}

Tensor detail::tensor_from_host(const void* data, int64_t n, ScalarType src,
                                const TensorOptions& options) {
  TensorOptions o = options.has_dtype() ? options : options.dtype(src);
  return finish(from_host_values({n}, src, o.requires_grad(false),
                                 [&](Tensor& t) {
                                   if (n > 0)
                                     std::memcpy(t.data_ptr(), data,
                                                 static_cast<size_t>(n) * element_size(src));
                                 }),
                options);
}

// ---- pinned memory ------------------------------------------------------------------

bool Tensor::is_pinned() const {
  Allocator* pinned = get_pinned_allocator();
  return pinned != nullptr && storage().allocator() == pinned && pinned->is_pinned(data_ptr());
}

Tensor Tensor::pin_memory() const {
  GLASS_CHECK(is_cpu(), "pin_memory(): the tensor is already on ", device(),
              "; only CPU tensors can be pinned");
  if (is_pinned()) return *this;
  GLASS_CHECK(get_pinned_allocator() != nullptr, "pin_memory(): ", kNoPinnedAllocator);
  Tensor out = empty(sizes(), options().pinned_memory(true));
  // A copy like any other: through copy_ (and its gradient) when autograd may need it.
  if (requires_grad())
    out.copy_(*this);
  else
    detail::copy_into(out, *this);
  return out;
}

}  // namespace glass
