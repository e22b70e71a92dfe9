// nn/optim/sgd.cpp — SGD's two updates: the tensor-op oracle and the fused loop.
//
// sgd_update_tensor_ops is libtorch's SGD::step op for op; sgd_update_fused computes the
// same formula element by element in one pass over p, grad and the buffer, where the
// tensor ops make several passes and allocate temporaries. Tests check they agree.
#include "nn/optim/sgd.h"

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/parallel.h"

namespace glass::optim {

std::unique_ptr<OptimizerOptions> SGDOptions::clone() const {
  return std::make_unique<SGDOptions>(*this);
}

void SGDOptions::validate() const {
  GLASS_CHECK(lr_ >= 0, "SGDOptions: invalid learning rate ", lr_, "; lr must be >= 0");
  GLASS_CHECK(momentum_ >= 0, "SGDOptions: invalid momentum ", momentum_,
              "; momentum must be >= 0 (0 turns it off)");
  GLASS_CHECK(weight_decay_ >= 0, "SGDOptions: invalid weight_decay ", weight_decay_,
              "; weight_decay must be >= 0 (0 turns it off)");
  GLASS_CHECK(!nesterov_ || (momentum_ > 0 && dampening_ == 0),
              "SGDOptions: Nesterov momentum requires a momentum and zero dampening (got "
              "momentum ",
              momentum_, ", dampening ", dampening_, "); set .momentum(m > 0).dampening(0)");
}

namespace {

// p: (*), grad: (*), buffer: (*) or undefined before the first momentum step.
void sgd_update_tensor_ops(Tensor& p, const Tensor& grad, Tensor* buffer, const SGDOptions& o) {
  Tensor d_p = grad;
  if (o.weight_decay() != 0) d_p = d_p.add(p, o.weight_decay());
  if (o.momentum() != 0) {
    Tensor& buf = *buffer;
    if (!buf.defined()) {
      buf = d_p.clone();
    } else {
      buf.mul_(o.momentum()).add_(d_p, 1 - o.dampening());
    }
    d_p = o.nesterov() ? d_p.add(buf, o.momentum()) : buf;
  }
  p.add_(d_p, -o.lr());
}

// The coefficients of one step, rounded to T as the tensor ops round a Scalar to the
// tensor's dtype.
template <class T>
struct SgdCoefficients {
  T lr, weight_decay, momentum, undamped;  // undamped = 1 - dampening
};

// The same update as sgd_update_tensor_ops, one element at a time, over n elements. The
// options are template flags (detail::with_static_flag) so each combination compiles to a
// vectorised loop; kFirst: buf holds garbage to overwrite with the first gradient.
template <class T, bool kWeightDecay, bool kMomentum, bool kNesterov, bool kFirst>
void sgd_fused_chunk(T* __restrict p, const T* __restrict grad, T* __restrict buf, int64_t n,
                     SgdCoefficients<T> k) {
  for (int64_t i = 0; i < n; ++i) {
    T g = grad[i];
    if constexpr (kWeightDecay) g += p[i] * k.weight_decay;
    if constexpr (kMomentum) {
      if constexpr (kFirst) {
        buf[i] = g;
      } else {
        buf[i] = buf[i] * k.momentum + g * k.undamped;
      }
      if constexpr (kNesterov) {
        g += buf[i] * k.momentum;
      } else {
        g = buf[i];
      }
    }
    p[i] += g * -k.lr;
  }
}

template <class T>
void sgd_fused(T* p, const T* grad, T* buf, int64_t n, bool first, const SGDOptions& o) {
  const SgdCoefficients<T> k{static_cast<T>(o.lr()), static_cast<T>(o.weight_decay()),
                             static_cast<T>(o.momentum()), static_cast<T>(1 - o.dampening())};
  using detail::with_static_flag;
  with_static_flag(o.weight_decay() != 0, [&](auto weight_decay) {
    with_static_flag(o.momentum() != 0, [&](auto momentum) {
      with_static_flag(o.nesterov(), [&](auto nesterov) {
        with_static_flag(first, [&](auto first_step) {
          parallel_for(0, n, detail::kFusedGrain, [&](int64_t begin, int64_t end) {
            sgd_fused_chunk<T, decltype(weight_decay)::value, decltype(momentum)::value,
                            decltype(nesterov)::value, decltype(first_step)::value>(
                p + begin, grad + begin, buf ? buf + begin : nullptr, end - begin, k);
          });
        });
      });
    });
  });
}

void sgd_update_fused(Tensor& p, const Tensor& grad, Tensor* buffer, const SGDOptions& o) {
  bool first = false;
  if (buffer && !buffer->defined()) {
    *buffer = empty_like(p);
    first = true;
  }
  int64_t n = p.numel();
  if (p.dtype() == kFloat32) {
    sgd_fused(p.data_ptr<float>(), grad.data_ptr<float>(),
              buffer ? buffer->data_ptr<float>() : nullptr, n, first, o);
  } else {
    sgd_fused(p.data_ptr<double>(), grad.data_ptr<double>(),
              buffer ? buffer->data_ptr<double>() : nullptr, n, first, o);
  }
  // Writes through raw pointers bypass the ops' version bump; do it here so a graph that
  // saved p still notices the update (autograd/saved_variable.h).
  p.unsafeGetTensorImpl()->bump_version();
  if (buffer) buffer->unsafeGetTensorImpl()->bump_version();
}

}  // namespace

SGD::SGD(std::vector<Tensor> params, SGDOptions defaults)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
          std::move(defaults)) {}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<SGDOptions>(std::move(defaults))) {}

std::vector<std::pair<std::string, Tensor>> SGDParamState::state_tensors() const {
  if (!momentum_buffer_.defined()) return {};
  return {{"momentum_buffer", momentum_buffer_}};
}

void SGDParamState::set_state_tensor(const std::string& name, const Tensor& value) {
  GLASS_CHECK(name == "momentum_buffer", "SGDParamState has no slot '", name,
              "' (it has momentum_buffer)");
  NoGradGuard no_grad;
  momentum_buffer_ = value.clone();
}

Tensor SGD::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& options = group_options<SGDOptions>(group, "SGD");
    for (Tensor& p : group.params()) {
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      check_grad("SGD", p, grad);
      Tensor* buffer = nullptr;  // stays null without momentum: no state to keep
      if (options.momentum() != 0) {
        SGDParamState* state = find_state<SGDParamState>(p);
        if (!state) state = &create_state<SGDParamState>(p);
        buffer = &state->momentum_buffer();
        check_state("SGD", p, *buffer, "momentum_buffer");
      }
      if (options.fused() && detail::fusable({&p, &grad, buffer})) {
        sgd_update_fused(p, grad, buffer, options);
      } else {
        sgd_update_tensor_ops(p, grad, buffer, options);
      }
    }
  }
  return loss;
}

}  // namespace glass::optim
