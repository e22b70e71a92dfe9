// core/ops/random.cpp — the random factories and fills; generators live in core/generator.cpp.
//
// Invariant: every draw goes through a generator's state under its mutex, and the CPU's
// default generator yields the same numbers for the same seed and calls as it always has.
#include "core/ops/random.h"

#include <cmath>
#include <mutex>
#include <utility>

#include "core/device_kernels.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"
#include "core/philox.h"

namespace glass {
namespace {

const Generator* chosen(const std::optional<Generator>& gen) {
  return gen.has_value() ? &*gen : nullptr;
}

void check_float_random(const Tensor& t, const char* op) {
  GLASS_CHECK(t.defined(), op, "(): expected a defined tensor");
  GLASS_CHECK(t.is_floating_point(), op, "(): expected a floating-point tensor, got ",
              to_string(t.dtype()));
}

// Fills a contiguous tensor, or a contiguous temporary copied back into a strided one.
template <class F>
Tensor& fill_random(Tensor& self, F&& fill) {
  if (self.is_contiguous()) {
    fill(self);
  } else {
    Tensor tmp = empty(self.sizes(), self.options());
    fill(tmp);
    detail::copy_into(self, tmp);
  }
  self.unsafeGetTensorImpl()->bump_version();
  return self;
}

Tensor& uniform_with(Tensor& self, double from, double to, const Generator* gen) {
  check_float_random(self, "uniform_");
  GLASS_CHECK(from <= to, "uniform_(): expects from <= to, but got from=", from, " > to=", to);
  GeneratorImpl& g = generator_for(self.device(), gen, "uniform_");
  return fill_random(self,
                     [&](const Tensor& t) { kernels_for(t.device()).uniform(t, from, to, g); });
}

Tensor& normal_with(Tensor& self, double mean, double std, const Generator* gen) {
  check_float_random(self, "normal_");
  GLASS_CHECK(std >= 0, "normal_(): expects std >= 0.0, but found std ", std);
  GeneratorImpl& g = generator_for(self.device(), gen, "normal_");
  return fill_random(self,
                     [&](const Tensor& t) { kernels_for(t.device()).normal(t, mean, std, g); });
}

Tensor& uniform_native(Tensor& self, double from, double to, std::optional<Generator> gen) {
  return uniform_with(self, from, to, chosen(gen));
}
Tensor& normal_native(Tensor& self, double mean, double std, std::optional<Generator> gen) {
  return normal_with(self, mean, std, chosen(gen));
}

// A fresh tensor filled by `fill`; requires_grad is set only after the fill, so that the
// fill is not recorded as an in-place op on a leaf.
template <class F>
Tensor random_factory(IntArrayRef size, const TensorOptions& options, F&& fill) {
  Tensor t = empty(size, options.requires_grad(false));
  fill(t);
  return options.requires_grad() ? t.requires_grad_(true) : t;
}

// The k-th number of a host-side stream drawn from `g` (held locked): the CPU generator's
// next number, or for a Philox generator word pair k of the stream at `state` — what a
// kernel launched at that state would compute for group k.
uint64_t host_draw(GeneratorImpl& g, const PhiloxState& state, uint64_t k) {
  if (auto* cpu = dynamic_cast<CPUGeneratorImpl*>(&g)) return cpu->random64();
  const philox::Counter w = philox::group_words(state.seed, state.offset, k);
  return philox::join64(w.word[0], w.word[1]);
}

// self.random_(low, high): integers uniform in [low, high), as randint draws them.
Tensor& random_native(Tensor& self, int64_t low, int64_t high, std::optional<Generator> gen) {
  GLASS_CHECK(low < high, "random_(): expects low < high, but got low=", low, ", high=", high);
  GeneratorImpl& g = generator_for(self.device(), chosen(gen), "random_");
  return fill_random(self,
                     [&](const Tensor& t) { kernels_for(t.device()).random_int(t, low, high, g); });
}

// Fisher-Yates on the host with the generator of the output's device: a CUDA generator's
// numbers come from Philox computed on the host, one launch's worth of state (one offset),
// so the permutation is the same on the simulated GPU and a real one.
Tensor randperm_native(int64_t n, ScalarType dtype, Device device,
                       std::optional<Generator> generator) {
  GLASS_CHECK(n >= 0, "randperm(): n must be non-negative, got ", n);
  GeneratorImpl& g = generator_for(device, chosen(generator), "randperm");
  Tensor t = empty({n}, TensorOptions(kInt64));
  int64_t* p = t.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  {
    std::lock_guard<std::mutex> lock(g.mutex());
    auto* philox_gen = dynamic_cast<CUDAGeneratorImpl*>(&g);
    const PhiloxState state = philox_gen ? philox_gen->next_launch() : PhiloxState{};
    for (int64_t i = n - 1; i > 0; --i) {
      const uint64_t draw = host_draw(g, state, static_cast<uint64_t>(n - 1 - i));
      const auto j = static_cast<int64_t>(draw % static_cast<uint64_t>(i + 1));
      std::swap(p[i], p[j]);
    }
  }
  return t.to(TensorOptions(dtype).device(device));
}

}  // namespace

namespace ops {
Op<RandomFillSig> uniform_("uniform_", &uniform_native, kRandomOp);
Op<RandomFillSig> normal_("normal_", &normal_native, kRandomOp);
Op<Tensor&(Tensor&, int64_t, int64_t, std::optional<Generator>)> random_("random_", &random_native,
                                                                         kRandomOp);
Op<Tensor(int64_t, ScalarType, Device, std::optional<Generator>)> randperm("randperm",
                                                                           &randperm_native,
                                                                           kRandomOp | kFactoryOp);
namespace {
const bool registered = dispatch::register_ops({&uniform_, &normal_, &random_, &randperm});
}  // namespace
}  // namespace ops

uint64_t detail::next_random_u64() {
  CPUGeneratorImpl* g = default_generator(kCPU).get<CPUGeneratorImpl>();
  std::lock_guard<std::mutex> lock(g->mutex());
  return g->random64();
}

double detail::next_uniform01() { return static_cast<double>(next_random_u64() >> 11) * 0x1.0p-53; }

Tensor rand(IntArrayRef size, const TensorOptions& options) {
  return rand(size, std::nullopt, options);
}
Tensor rand(IntArrayRef size, std::optional<Generator> generator, const TensorOptions& options) {
  return random_factory(size, options,
                        [&](Tensor& t) { return ops::uniform_(t, 0, 1, generator); });
}

Tensor randn(IntArrayRef size, const TensorOptions& options) {
  return randn(size, std::nullopt, options);
}
Tensor randn(IntArrayRef size, std::optional<Generator> generator, const TensorOptions& options) {
  return random_factory(size, options, [&](Tensor& t) { return ops::normal_(t, 0, 1, generator); });
}

Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& options) {
  return randint(low, high, size, std::nullopt, options);
}
Tensor randint(int64_t low, int64_t high, IntArrayRef size, std::optional<Generator> generator,
               const TensorOptions& options) {
  GLASS_CHECK(low < high, "randint(): expects low < high, but got low=", low, ", high=", high);
  TensorOptions o = options.has_dtype() ? options : options.dtype(kInt64);
  GLASS_CHECK(o.dtype() != kBool, "randint(): dtype Bool is not supported");
  Tensor t = empty(size, o.requires_grad(false));
  (void)generator_for(t.device(), chosen(generator), "randint");  // a wrong one named here
  ops::random_(t, low, high, std::move(generator));
  return t;
}

Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& options) {
  return randint(0, high, size, std::nullopt, options);
}
Tensor randint(int64_t high, IntArrayRef size, std::optional<Generator> generator,
               const TensorOptions& options) {
  return randint(0, high, size, std::move(generator), options);
}

Tensor randperm(int64_t n, const TensorOptions& options) {
  return randperm(n, std::nullopt, options);
}
Tensor randperm(int64_t n, std::optional<Generator> generator, const TensorOptions& options) {
  TensorOptions o = options.has_dtype() ? options : options.dtype(kInt64);
  const Device device = o.has_device() ? o.device() : Device(kCPU);
  return ops::randperm(n, o.dtype(), device, std::move(generator));
}

Tensor& Tensor::uniform_(double from, double to, std::optional<Generator> generator) {
  return ops::uniform_(*this, from, to, std::move(generator));
}
Tensor& Tensor::normal_(double mean, double std, std::optional<Generator> generator) {
  return ops::normal_(*this, mean, std, std::move(generator));
}

}  // namespace glass
