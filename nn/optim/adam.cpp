// nn/optim/adam.cpp — the Adam/AdamW update (tensor-op oracle and fused loop) and Adam::step.
//
// adam_update_tensor_ops is libtorch's Adam::step op for op (addcmul_ and addcdiv_, which
// core lacks, written as a product and a quotient); adam_update_fused does the same per
// element in one pass over p, grad and the moments. The fused loop rounds every scalar
// coefficient to the tensor's dtype and groups products as the tensor ops do, so the two
// agree to the last few ulps; tests check it.
#include "nn/optim/adam.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/parallel.h"

namespace glass::optim {

namespace detail {

void validate_adam_options(const char* name, double lr, std::tuple<double, double> betas,
                           double eps, double weight_decay) {
  auto [beta1, beta2] = betas;
  GLASS_CHECK(lr >= 0, name, ": invalid learning rate ", lr, "; lr must be >= 0");
  GLASS_CHECK(eps >= 0, name, ": invalid epsilon ", eps,
              "; eps must be >= 0 (it keeps the denominator away from zero; 1e-8 is usual)");
  GLASS_CHECK(beta1 >= 0 && beta1 < 1, name, ": invalid beta parameter at index 0: ", beta1,
              "; betas must be in [0, 1), e.g. betas({0.9, 0.999})");
  GLASS_CHECK(beta2 >= 0 && beta2 < 1, name, ": invalid beta parameter at index 1: ", beta2,
              "; betas must be in [0, 1), e.g. betas({0.9, 0.999})");
  GLASS_CHECK(weight_decay >= 0, name, ": invalid weight_decay ", weight_decay,
              "; weight_decay must be >= 0 (0 turns it off)");
}

namespace {

// The scalars of one step, computed once in double.
struct AdamStepScalars {
  double step_size;        // lr / (1 - beta1^t)
  double bias_corr2_sqrt;  // sqrt(1 - beta2^t)
};

// p, grad, and the state's tensors: all (*).
void adam_update_tensor_ops(Tensor& p, const Tensor& grad, AdamParamState& s, const AdamHyper& h,
                            const AdamStepScalars& k) {
  Tensor g = grad;
  if (h.weight_decay != 0) {
    if (h.decoupled_weight_decay) {
      p.mul_(1 - h.lr * h.weight_decay);
    } else {
      g = g.add(p, h.weight_decay);
    }
  }
  s.exp_avg().mul_(h.beta1).add_(g, 1 - h.beta1);
  s.exp_avg_sq().mul_(h.beta2).add_(g * g, 1 - h.beta2);
  Tensor second_moment = s.exp_avg_sq();
  if (h.amsgrad) {
    s.max_exp_avg_sq().copy_(maximum(s.max_exp_avg_sq(), s.exp_avg_sq()));
    second_moment = s.max_exp_avg_sq();
  }
  Tensor denom = (second_moment.sqrt() / k.bias_corr2_sqrt).add_(h.eps);
  p.add_(s.exp_avg() / denom, -k.step_size);
}

// The coefficients of one step, rounded to T as the tensor ops round a Scalar to the
// tensor's dtype.
template <class T>
struct AdamCoefficients {
  T beta1, one_minus_beta1, beta2, one_minus_beta2, eps;
  T weight_decay;  // Adam's L2 term
  T decay_factor;  // AdamW's 1 - lr * weight_decay
  T step_size, bias_corr2_sqrt;
};

// The same update as adam_update_tensor_ops, one element at a time, over n elements, with
// the options as template flags (detail::with_static_flag) so each combination compiles to
// a vectorised loop. kL2: Adam's weight decay; kDecay: AdamW's. (With GCC's default
// -fmath-errno, std::sqrt may set errno, which keeps this loop scalar; under
// -fno-math-errno it vectorises and runs about 4x faster.)
template <class T, bool kL2, bool kDecay, bool kAmsgrad>
void adam_fused_chunk(T* __restrict p, const T* __restrict grad, T* __restrict exp_avg,
                      T* __restrict exp_avg_sq, T* __restrict max_exp_avg_sq, int64_t n,
                      AdamCoefficients<T> k) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kDecay) p[i] *= k.decay_factor;
    T g = grad[i];
    if constexpr (kL2) g += p[i] * k.weight_decay;
    exp_avg[i] = exp_avg[i] * k.beta1 + g * k.one_minus_beta1;
    exp_avg_sq[i] = exp_avg_sq[i] * k.beta2 + (g * g) * k.one_minus_beta2;
    T second_moment = exp_avg_sq[i];
    if constexpr (kAmsgrad) {
      max_exp_avg_sq[i] = std::max(max_exp_avg_sq[i], exp_avg_sq[i]);
      second_moment = max_exp_avg_sq[i];
    }
    T denom = std::sqrt(second_moment) / k.bias_corr2_sqrt + k.eps;
    p[i] += (exp_avg[i] / denom) * -k.step_size;
  }
}

template <class T>
void adam_fused(T* p, const T* grad, T* exp_avg, T* exp_avg_sq, T* max_exp_avg_sq, int64_t n,
                const AdamHyper& h, const AdamStepScalars& s) {
  const AdamCoefficients<T> k{static_cast<T>(h.beta1),
                              static_cast<T>(1 - h.beta1),
                              static_cast<T>(h.beta2),
                              static_cast<T>(1 - h.beta2),
                              static_cast<T>(h.eps),
                              static_cast<T>(h.weight_decay),
                              static_cast<T>(1 - h.lr * h.weight_decay),
                              static_cast<T>(s.step_size),
                              static_cast<T>(s.bias_corr2_sqrt)};
  const bool decay = h.weight_decay != 0;
  with_static_flag(decay && !h.decoupled_weight_decay, [&](auto l2) {
    with_static_flag(decay && h.decoupled_weight_decay, [&](auto decoupled) {
      with_static_flag(h.amsgrad, [&](auto amsgrad) {
        parallel_for(0, n, kFusedGrain, [&](int64_t begin, int64_t end) {
          adam_fused_chunk<T, decltype(l2)::value, decltype(decoupled)::value,
                           decltype(amsgrad)::value>(
              p + begin, grad + begin, exp_avg + begin, exp_avg_sq + begin,
              max_exp_avg_sq ? max_exp_avg_sq + begin : nullptr, end - begin, k);
        });
      });
    });
  });
}

void adam_update_fused(Tensor& p, const Tensor& grad, AdamParamState& s, const AdamHyper& h,
                       const AdamStepScalars& k) {
  int64_t n = p.numel();
  if (p.dtype() == kFloat32) {
    adam_fused(p.data_ptr<float>(), grad.data_ptr<float>(), s.exp_avg().data_ptr<float>(),
               s.exp_avg_sq().data_ptr<float>(),
               h.amsgrad ? s.max_exp_avg_sq().data_ptr<float>() : nullptr, n, h, k);
  } else {
    adam_fused(p.data_ptr<double>(), grad.data_ptr<double>(), s.exp_avg().data_ptr<double>(),
               s.exp_avg_sq().data_ptr<double>(),
               h.amsgrad ? s.max_exp_avg_sq().data_ptr<double>() : nullptr, n, h, k);
  }
  // Raw-pointer writes skip the ops' version bump; a graph that saved p must still see
  // that p changed (autograd/saved_variable.h).
  for (Tensor* t : {&p, &s.exp_avg(), &s.exp_avg_sq(), &s.max_exp_avg_sq()})
    if (t->defined()) t->unsafeGetTensorImpl()->bump_version();
}

}  // namespace

void adam_update(Tensor& p, const Tensor& grad, AdamParamState& s, const AdamHyper& h) {
  const char* op = h.decoupled_weight_decay ? "AdamW" : "Adam";
  Optimizer::check_state(op, p, s.exp_avg(), "exp_avg");
  Optimizer::check_state(op, p, s.exp_avg_sq(), "exp_avg_sq");
  Optimizer::check_state(op, p, s.max_exp_avg_sq(), "max_exp_avg_sq");
  if (s.step() == 0) {
    s.exp_avg(zeros_like(p));
    s.exp_avg_sq(zeros_like(p));
  }
  // Also covers amsgrad switched on after some steps: the running max starts from zero.
  if (h.amsgrad && !s.max_exp_avg_sq().defined()) s.max_exp_avg_sq(zeros_like(p));
  s.step() += 1;
  const double t = static_cast<double>(s.step());
  const AdamStepScalars k{h.lr / (1 - std::pow(h.beta1, t)), std::sqrt(1 - std::pow(h.beta2, t))};
  const Tensor* max_sq = h.amsgrad ? &s.max_exp_avg_sq() : nullptr;
  if (h.fused && fusable({&p, &grad, &s.exp_avg(), &s.exp_avg_sq(), max_sq})) {
    adam_update_fused(p, grad, s, h, k);
  } else {
    adam_update_tensor_ops(p, grad, s, h, k);
  }
}

}  // namespace detail

std::vector<std::pair<std::string, Tensor>> AdamParamState::state_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out = {
      {"step", full({}, step_, TensorOptions(kInt64))}};
  if (exp_avg_.defined()) out.emplace_back("exp_avg", exp_avg_);
  if (exp_avg_sq_.defined()) out.emplace_back("exp_avg_sq", exp_avg_sq_);
  if (max_exp_avg_sq_.defined()) out.emplace_back("max_exp_avg_sq", max_exp_avg_sq_);
  return out;
}

void AdamParamState::set_state_tensor(const std::string& name, const Tensor& value) {
  NoGradGuard no_grad;
  if (name == "step") {
    GLASS_CHECK(value.numel() == 1, "AdamParamState: 'step' must hold one number, got ",
                value.numel());
    step_ = value.to(kInt64).item<int64_t>();
  } else if (name == "exp_avg") {
    exp_avg_ = value.clone();
  } else if (name == "exp_avg_sq") {
    exp_avg_sq_ = value.clone();
  } else if (name == "max_exp_avg_sq") {
    max_exp_avg_sq_ = value.clone();
  } else {
    GLASS_CHECK(false, "AdamParamState has no slot '", name,
                "' (it has step, exp_avg, exp_avg_sq, max_exp_avg_sq)");
  }
}

Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
           std::move(defaults)) {}

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamOptions>(std::move(defaults))) {}

Tensor Adam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& options = group_options<AdamOptions>(group, "Adam");
    const detail::AdamHyper hyper = detail::adam_hyper(options, /*decoupled=*/false);
    for (Tensor& p : group.params()) {
      const Tensor& grad = p.grad();
      if (!grad.defined()) continue;
      check_grad("Adam", p, grad);
      AdamParamState* state = find_state<AdamParamState>(p);
      if (!state) state = &create_state<AdamParamState>(p);
      detail::adam_update(p, grad, *state, hyper);
    }
  }
  return loss;
}

}  // namespace glass::optim
