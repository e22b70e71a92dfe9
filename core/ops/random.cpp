// core/ops/random.cpp — the global generator and the random factories.
#include "core/ops/random.h"

#include <cmath>
#include <mutex>
#include <random>

#include "core/device_kernels.h"
#include "core/ops/factories.h"
#include "core/ops/pointwise.h"

namespace glass {
namespace {

struct Generator {
  std::mutex mutex;
  std::mt19937_64 engine{67280421310721ull};
  uint64_t seed = 67280421310721ull;
};
Generator& generator() {
  static Generator g;
  return g;
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

Tensor& uniform_native(Tensor& self, double from, double to) {
  check_float_random(self, "uniform_");
  GLASS_CHECK(from <= to, "uniform_(): expects from <= to, but got from=", from, " > to=", to);
  return fill_random(self, [&](const Tensor& t) { kernels_for(t.device()).uniform(t, from, to); });
}

Tensor& normal_native(Tensor& self, double mean, double std) {
  check_float_random(self, "normal_");
  GLASS_CHECK(std >= 0, "normal_(): expects std >= 0.0, but found std ", std);
  return fill_random(self, [&](const Tensor& t) { kernels_for(t.device()).normal(t, mean, std); });
}

}  // namespace

namespace ops {
Op<Tensor&(Tensor&, double, double)> uniform_("uniform_", &uniform_native);
Op<Tensor&(Tensor&, double, double)> normal_("normal_", &normal_native);
}  // namespace ops

void manual_seed(uint64_t seed) {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.engine.seed(seed);
  g.seed = seed;
}

uint64_t initial_seed() {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mutex);
  return g.seed;
}

uint64_t detail::next_random_u64() {
  Generator& g = generator();
  std::lock_guard<std::mutex> lock(g.mutex);
  return g.engine();
}

double detail::next_uniform01() { return static_cast<double>(next_random_u64() >> 11) * 0x1.0p-53; }

Tensor rand(IntArrayRef size, const TensorOptions& options) {
  Tensor t = empty(size, options.requires_grad(false));
  ops::uniform_(t, 0, 1);
  return options.requires_grad() ? t.requires_grad_(true) : t;
}

Tensor randn(IntArrayRef size, const TensorOptions& options) {
  Tensor t = empty(size, options.requires_grad(false));
  ops::normal_(t, 0, 1);
  return options.requires_grad() ? t.requires_grad_(true) : t;
}

Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& options) {
  GLASS_CHECK(low < high, "randint(): expects low < high, but got low=", low, ", high=", high);
  TensorOptions o = options.has_dtype() ? options : options.dtype(kInt64);
  GLASS_CHECK(o.dtype() != kBool, "randint(): dtype Bool is not supported");
  Tensor t = empty(size, o.requires_grad(false));
  kernels_for(t.device()).random_int(t, low, high);
  return t;
}

Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& options) {
  return randint(0, high, size, options);
}

Tensor randperm(int64_t n, const TensorOptions& options) {
  GLASS_CHECK(n >= 0, "randperm(): n must be non-negative, got ", n);
  TensorOptions o = options.has_dtype() ? options : options.dtype(kInt64);
  Tensor t = empty({n}, TensorOptions(kInt64));
  int64_t* p = t.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
    int64_t j = static_cast<int64_t>(detail::next_random_u64() % static_cast<uint64_t>(i + 1));
    std::swap(p[i], p[j]);
  }
  return t.to(o);
}

Tensor& Tensor::uniform_(double from, double to) { return ops::uniform_(*this, from, to); }
Tensor& Tensor::normal_(double mean, double std) { return ops::normal_(*this, mean, std); }

}  // namespace glass
