// core/cpu/cpu_random.cpp — CPU random fills from a CPU generator (core/generator.h).
//
// Serial on purpose: the numbers depend only on the seed and the order of calls, never
// on the thread count. Each fill holds the generator's mutex for all its draws, so two
// threads filling at once each get a run of consecutive numbers.
#include <cmath>
#include <mutex>

#include "core/cpu/cpu_kernels.h"
#include "core/generator.h"

namespace glass::cpu {
namespace {

CPUGeneratorImpl& cpu_generator(GeneratorImpl& gen) {
  auto* cpu = dynamic_cast<CPUGeneratorImpl*>(&gen);
  if (cpu == nullptr) glass::detail::wrong_generator_kind(gen, "cpu");
  return *cpu;
}

}  // namespace

void uniform_kernel(const Tensor& self, double from, double to, GeneratorImpl& gen) {
  CPUGeneratorImpl& g = cpu_generator(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  dispatch_floating(self.dtype(), "uniform_", [&]<class T>() {
    T* p = self.data_ptr<T>();
    for (int64_t i = 0; i < self.numel(); ++i) {
      T v = static_cast<T>(from + (to - from) * g.uniform01());
      p[i] = v < static_cast<T>(to) || from == to
                 ? v
                 : static_cast<T>(from);  // float rounding may hit `to`
    }
  });
}

void normal_kernel(const Tensor& self, double mean, double std, GeneratorImpl& gen) {
  CPUGeneratorImpl& g = cpu_generator(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  dispatch_floating(self.dtype(), "normal_", [&]<class T>() {
    T* p = self.data_ptr<T>();
    // Box-Muller: two uniforms give two independent standard normals.
    for (int64_t i = 0; i < self.numel(); i += 2) {
      double u1 = 1.0 - g.uniform01(), u2 = g.uniform01();
      double r = std::sqrt(-2.0 * std::log(u1));
      p[i] = static_cast<T>(mean + std * r * std::cos(2 * M_PI * u2));
      if (i + 1 < self.numel()) p[i + 1] = static_cast<T>(mean + std * r * std::sin(2 * M_PI * u2));
    }
  });
}

void random_int_kernel(const Tensor& self, int64_t low, int64_t high, GeneratorImpl& gen) {
  CPUGeneratorImpl& g = cpu_generator(gen);
  std::lock_guard<std::mutex> lock(g.mutex());
  // Unsigned arithmetic: high - low and low + draw wrap instead of overflowing for the
  // widest ranges (low = INT64_MIN); where nothing overflows the values are the same.
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  dispatch_numeric(self.dtype(), "randint", [&]<class T>() {
    T* p = self.data_ptr<T>();
    for (int64_t i = 0; i < self.numel(); ++i)
      p[i] =
          static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(low) + g.random64() % range));
  });
}

}  // namespace glass::cpu
