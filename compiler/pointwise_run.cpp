// compiler/pointwise_run.cpp — running a fused pointwise group: the compiled kernel over
// TensorIterator (elementwise, or a reduction), and the interpreter that runs the same
// steps as eager ops. Invariant: the runner checks a call against the program it was
// built for (input count, dtypes, 0-dim-ness) before any kernel sees a pointer.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>

#include "compiler/kernel_cache.h"
#include "compiler/pointwise.h"
#include "compiler/pointwise_detail.h"
#include "core/cpu/fold_slices.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/ops/reduce.h"
#include "core/parallel.h"
#include "core/shape.h"
#include "core/tensor_iterator.h"

namespace glass::compiler {

using detail::check_call;
using detail::Kind;
using detail::Step;

TensorIterator detail::elementwise_iterator(const PointwiseProgram& p,
                                            const std::vector<int>& live_inputs,
                                            TensorList inputs) {
  TensorIteratorConfig config("fused");
  config.add_output(Tensor());
  for (int k : live_inputs) config.add_const_input(inputs[k]);
  config.declare_static_output_dtype(p.output_dtype());
  config.declare_static_common_dtype(p.output_dtype());
  return config.build();
}

void detail::check_call(const PointwiseProgram& p, TensorList inputs, const char* who) {
  GLASS_CHECK(p.output >= 0, who, ": the program has no output");
  GLASS_CHECK(inputs.size() == p.inputs.size(), who, ": the group takes ", p.inputs.size(),
              " inputs, got ", inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    GLASS_CHECK(inputs[k].defined(), who, ": input ", k, " is undefined");
    GLASS_CHECK(inputs[k].dtype() == p.inputs[k], who, ": input ", k, " must be ",
                dtype_name(p.inputs[k]), ", got ", dtype_name(inputs[k].dtype()));
    GLASS_CHECK((inputs[k].dim() == 0) == p.zero_dim_inputs[k], who, ": input ", k, " was ",
                "declared ", p.zero_dim_inputs[k] ? "0-dim" : "with dims", ", got a tensor of ",
                "shape ", inputs[k].sizes(), " (promotion ranks 0-dim tensors lower: build the ",
                "program for it)");
  }
}

CompiledPointwise::CompiledPointwise(PointwiseProgram program,
                                     std::shared_ptr<KernelLibrary> library,
                                     const std::string& symbol)
    : program_(std::move(program)), library_(std::move(library)) {
  kernel_ = library_->function<Kernel>(symbol);
  if (program_.reduction) fold_ = library_->function<Fold>(symbol + "_fold");
  live_inputs_ = program_.live_inputs();
}

namespace {

// The value a reduction's output starts from (eager's identity(), core/ops/reduce.cpp).
double reduction_identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return 0;
    case ReduceOp::Prod: return 1;
    case ReduceOp::Max: return -std::numeric_limits<double>::infinity();
    case ReduceOp::Min: return std::numeric_limits<double>::infinity();
  }
  return 0;
}

// combine(a, b) of the generated fold, for the partials (NaN wins max and min, as eager's).
template <class A>
A combine_partials(ReduceOp op, A a, A b) {
  switch (op) {
    case ReduceOp::Sum: return a + b;
    case ReduceOp::Prod: return a * b;
    case ReduceOp::Max: return (a != a || a > b) ? a : b;
    case ReduceOp::Min: return (a != a || a < b) ? a : b;
  }
  return a;
}

// A large full reduction: the generated fold per slice, the partials in slice order
// (core/cpu/fold_slices.h, as eager's reduce kernel), so a thread count gives one result.
template <class A>
void fold_in_parallel(const TensorIterator& iter, ReduceOp op,
                      void (*fold)(char**, const int64_t*, int64_t, void*)) {
  const A total = cpu::fold_slices_in_order<A>(
      iter, static_cast<A>(reduction_identity(op)), 65536,
      [fold](char** data, const int64_t* strides, int64_t n, A& acc) {
        fold(data, strides, n, &acc);
      },
      [op](A a, A b) { return combine_partials(op, a, b); });
  if (iter.dtype(0) == kFloat)
    *reinterpret_cast<float*>(iter.data_ptr(0)) = static_cast<float>(total);
  else
    *reinterpret_cast<double*>(iter.data_ptr(0)) = static_cast<double>(total);
}

}  // namespace

Tensor CompiledPointwise::reduce(TensorList inputs) const {
  const PointwiseProgram::Reduction& r = *program_.reduction;
  const char* name = r.mean ? "mean" : glass::to_string(r.op);
  // The value's shape: what its live inputs broadcast to.
  DimVector shape;
  bool first = true;
  for (int k : live_inputs_) {
    shape = first ? DimVector(inputs[k].sizes()) : broadcast_shapes(shape, inputs[k].sizes(), name);
    first = false;
  }
  const int64_t ndim = static_cast<int64_t>(shape.size());
  std::vector<bool> mask(static_cast<size_t>(ndim), r.dims.empty());
  for (int64_t d : r.dims) {
    const int64_t w = wrap_dim(d, ndim, name);
    if (ndim == 0) continue;
    GLASS_CHECK(!mask[w], name, "(): dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  DimVector keep = shape, dropped;
  int64_t count = 1;
  for (int64_t d = 0; d < ndim; ++d) {
    if (mask[d]) {
      count *= shape[d];
      keep[d] = 1;
    } else {
      dropped.push_back(shape[d]);
    }
  }
  if (r.op == ReduceOp::Max || r.op == ReduceOp::Min)
    for (int64_t d = 0; d < ndim; ++d)
      GLASS_CHECK(!(mask[d] && shape[d] == 0), name, "(): expected reduction dim ", d,
                  " to have non-zero size (the value has shape ", IntArrayRef(shape), ")");
  const ScalarType dtype = program_.output_dtype();
  Tensor out = empty(keep, TensorOptions(dtype));
  glass::detail::fill_into(out, Scalar(reduction_identity(r.op)));
  TensorIteratorConfig config(name);
  config.add_output(out);
  for (int k : live_inputs_) config.add_const_input(inputs[k]);
  config.is_reduction(true).declare_static_common_dtype(dtype);
  TensorIterator iter = config.build();
  const bool widen = r.op == ReduceOp::Sum || r.op == ReduceOp::Prod;
  if (iter.is_scalar(0) && iter.numel() >= 65536 && get_num_threads() > 1 &&
      !in_parallel_region()) {
    if (dtype == kFloat && !widen)
      fold_in_parallel<float>(iter, r.op, fold_);
    else
      fold_in_parallel<double>(iter, r.op, fold_);
  } else {
    Kernel* kernel = kernel_;
    iter.for_each(
        [kernel](char** data, const int64_t* strides, int64_t n) { kernel(data, strides, n); });
  }
  if (r.mean) out = div(out, static_cast<double>(count));  // eager's mean: sum / count
  return r.keepdim ? out : out.view(dropped);
}

Tensor CompiledPointwise::operator()(TensorList inputs) const {
  check_call(program_, inputs, "compiled pointwise group");
  for (size_t k = 0; k < inputs.size(); ++k) {
    GLASS_CHECK(inputs[k].device().is_cpu(), "compiled pointwise group: input ", k, " is on ",
                inputs[k].device(), "; this kernel was compiled for the CPU");
    // A kernel records no graph: its result would silently carry no gradient.
    GLASS_CHECK(!GradMode::is_enabled() || !inputs[k].requires_grad(),
                "compiled pointwise group: input ", k, " requires grad, and compiled groups ",
                "are not differentiable yet; call it under NoGradGuard, or use ",
                "interpret_pointwise");
  }
  if (program_.reduction) return reduce(inputs);
  TensorIterator iter = detail::elementwise_iterator(program_, live_inputs_, inputs);
  Kernel* kernel = kernel_;
  iter.for_each(
      [kernel](char** data, const int64_t* strides, int64_t n) { kernel(data, strides, n); });
  return iter.output(0);
}

namespace {

// GLASS_COMPILE_DEBUG=1 (like TORCH_LOGS=output_code): the generated kernels on stderr,
// each with its IR, without the prelude every source starts with.
std::shared_ptr<KernelLibrary> build(const std::string& source) {
  if (const char* debug = std::getenv("GLASS_COMPILE_DEBUG"); debug && std::string(debug) == "1") {
    const size_t kernels = source.find("\n// glass_kernel");
    const size_t start = kernels == std::string::npos ? 0 : kernels + 1;
    std::fprintf(stderr, "[glass compile] generated C++ (after the %zu-byte prelude):\n%s\n", start,
                 source.substr(start).c_str());
  }
  return load_or_compile(source);
}

}  // namespace

CompiledPointwise compile_pointwise(const PointwiseProgram& program) {
  return CompiledPointwise(program, build(emit_cpp(program)), "glass_kernel");
}

std::vector<CompiledPointwise> compile_pointwise(const std::vector<PointwiseProgram>& programs) {
  std::shared_ptr<KernelLibrary> library = build(emit_cpp(programs));
  std::vector<CompiledPointwise> compiled;
  for (size_t i = 0; i < programs.size(); ++i)
    compiled.emplace_back(programs[i], library, "glass_kernel_" + std::to_string(i));
  return compiled;
}

Tensor interpret_pointwise(const PointwiseProgram& p, TensorList inputs) {
  check_call(p, inputs, "interpret_pointwise");
  std::vector<Tensor> values(p.steps.size());
  const auto value = [&](int i) -> Tensor {
    const Step& s = p.steps[i];
    return s.kind == Kind::Scalar ? wrapped_scalar_tensor(s.value) : values[i];
  };
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    switch (s.kind) {
      case Kind::Input: values[i] = inputs[s.input]; break;
      case Kind::Scalar: break;
      case Kind::Unary: values[i] = ops::unary(s.unary, value(s.args[0])); break;
      case Kind::Binary:
        values[i] = ops::binary(s.binary, value(s.args[0]), value(s.args[1]));
        break;
      case Kind::Clamp: values[i] = glass::clamp(value(s.args[0]), s.lo, s.hi); break;
      case Kind::Where:
        values[i] = glass::where(value(s.args[0]), value(s.args[1]), value(s.args[2]));
        break;
    }
  }
  if (!p.reduction) return values[p.output];
  const PointwiseProgram::Reduction& r = *p.reduction;
  if (r.mean) return glass::mean(values[p.output], r.dims, r.keepdim);
  return ops::reduce(r.op, values[p.output], r.dims, r.keepdim, std::nullopt);
}

}  // namespace glass::compiler
