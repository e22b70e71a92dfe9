// core/cpu/cpu_random.cpp — CPU random fills from the global generator (random.h).
//
// Serial on purpose: the numbers depend only on the seed and the order of calls,
// never on the thread count.
#include <cmath>

#include "core/cpu/cpu_kernels.h"
#include "core/ops/random.h"

namespace glass::cpu {

void uniform_kernel(const Tensor& self, double from, double to) {
  dispatch_floating(self.dtype(), "uniform_", [&]<class T>() {
    T* p = self.data_ptr<T>();
    for (int64_t i = 0; i < self.numel(); ++i) {
      T v = static_cast<T>(from + (to - from) * detail::next_uniform01());
      p[i] = v < static_cast<T>(to) || from == to
                 ? v
                 : static_cast<T>(from);  // float rounding may hit `to`
    }
  });
}

void normal_kernel(const Tensor& self, double mean, double std) {
  dispatch_floating(self.dtype(), "normal_", [&]<class T>() {
    T* p = self.data_ptr<T>();
    // Box-Muller: two uniforms give two independent standard normals.
    for (int64_t i = 0; i < self.numel(); i += 2) {
      double u1 = 1.0 - detail::next_uniform01(), u2 = detail::next_uniform01();
      double r = std::sqrt(-2.0 * std::log(u1));
      p[i] = static_cast<T>(mean + std * r * std::cos(2 * M_PI * u2));
      if (i + 1 < self.numel()) p[i + 1] = static_cast<T>(mean + std * r * std::sin(2 * M_PI * u2));
    }
  });
}

void random_int_kernel(const Tensor& self, int64_t low, int64_t high) {
  uint64_t range = static_cast<uint64_t>(high - low);
  dispatch_numeric(self.dtype(), "randint", [&]<class T>() {
    T* p = self.data_ptr<T>();
    for (int64_t i = 0; i < self.numel(); ++i)
      p[i] = static_cast<T>(low + static_cast<int64_t>(detail::next_random_u64() % range));
  });
}

}  // namespace glass::cpu
