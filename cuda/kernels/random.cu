// cuda/kernels/random.cu — uniform_, normal_ and randint on the device, from Philox.
//
// A fill takes the generator's (seed, offset) at launch and moves the offset on by one
// (CUDAGeneratorImpl::next_launch, core/generator.h). Then each thread computes, with no
// state, the Philox words of the groups it owns: group g is philox(counter = (g, offset),
// key = seed) and supplies elements g*V ... g*V + V-1 (core/philox.h). V is 4 when a
// value needs one 32-bit word (float uniforms, float normals in Box-Muller pairs, integers
// in a range of at most 2^32) and 2 when it needs 64 bits (doubles, wider ranges).
//
// Invariant: element i's value is a function of (seed, offset, i) only — which thread or
// block computes it, and how many there are, changes nothing — so the simulated GPU, a
// real GPU and a host-side reference (tests/cuda/backend/random_test.cpp) agree.
#include <cstdint>
#include <mutex>

#include "core/device_kernels.h"
#include "core/generator.h"
#include "core/philox.h"
#include "cuda/kernels/elementwise.cuh"
#include "cuda/kernels/kernels.h"
#include "cuda/kernels/pointwise_ops.cuh"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

inline constexpr int kRandomThreads = 256;
inline constexpr int kGroupsPerThread = 4;  // a thread's groups lie kRandomThreads apart

// Writes the values of this thread's groups; draw(words, values) turns one group's four
// Philox words into its V values.
template <class T, int V, class Draw>
__global__ void philox_fill_kernel(int64_t n, gptr<T> out, uint64_t seed, uint64_t offset,
                                   Draw draw) {
  const int64_t groups = (n + V - 1) / V;
  const int64_t first = int64_t(blockIdx.x) * kRandomThreads * kGroupsPerThread + threadIdx.x;
  for (int k = 0; k < kGroupsPerThread; ++k) {
    const int64_t g = first + int64_t(k) * kRandomThreads;
    if (g >= groups) return;
    T values[V];
    draw(philox::group_words(seed, offset, uint64_t(g)), values);
    for (int v = 0; v < V; ++v) {
      const int64_t i = g * V + v;
      if (i < n) out[i] = values[v];
    }
  }
}

// ---- words to values -----------------------------------------------------------------------

// U[from, to). Computed in double and rounded once to T, as the CPU kernel does; a float
// that rounds up to `to` becomes `from`, so `to` is never drawn.
template <class T>
struct UniformDraw {
  static constexpr int V = sizeof(T) == 4 ? 4 : 2;
  double from, to;
  __device__ void operator()(const philox::Counter& w, T (&values)[V]) const {
    for (int v = 0; v < V; ++v) {
      double u;
      if constexpr (V == 4) {
        u = philox::uniform_float(w.word[v]);
      } else {
        u = philox::uniform_double(w.word[2 * v], w.word[2 * v + 1]);
      }
      const T x = static_cast<T>(from + (to - from) * u);
      values[v] = x < static_cast<T>(to) || from == to ? x : static_cast<T>(from);
    }
  }
};

// N(mean, std^2) by Box-Muller: uniforms u1 in (0, 1] and u2 in [0, 1) give the two
// independent normals r cos(2 pi u2) and r sin(2 pi u2), r = sqrt(-2 log u1).
template <class T>
struct NormalDraw {
  static constexpr int V = sizeof(T) == 4 ? 4 : 2;
  double mean, std;
  __device__ void operator()(const philox::Counter& w, T (&values)[V]) const {
    for (int pair = 0; pair < V / 2; ++pair) {
      T u1, u2;
      if constexpr (sizeof(T) == 4) {
        u1 = 1.0f - philox::uniform_float(w.word[2 * pair]);
        u2 = philox::uniform_float(w.word[2 * pair + 1]);
      } else {
        u1 = 1.0 - philox::uniform_double(w.word[0], w.word[1]);
        u2 = philox::uniform_double(w.word[2], w.word[3]);
      }
      const T r = d_sqrt(T(-2) * d_log(u1));
      const T theta = T(2 * M_PI) * u2;
      values[2 * pair] = static_cast<T>(T(mean) + T(std) * r * d_cos(theta));
      values[2 * pair + 1] = static_cast<T>(T(mean) + T(std) * r * d_sin(theta));
    }
  }
};

// Integers in [low, low + range): one word per value when the range fits in 32 bits,
// two otherwise (the int64 ranges). Unsigned arithmetic, so the widest range wraps
// instead of overflowing. The modulo's bias is at most range / 2^32 (resp. 2^64).
template <class T, int V>
struct RandomIntDraw {
  uint64_t low, range;
  __device__ void operator()(const philox::Counter& w, T (&values)[V]) const {
    for (int v = 0; v < V; ++v) {
      uint64_t r;
      if constexpr (V == 4) {
        r = w.word[v];
      } else {
        r = philox::join64(w.word[2 * v], w.word[2 * v + 1]);
      }
      values[v] = static_cast<T>(static_cast<int64_t>(low + r % range));
    }
  }
};

// ---- host side ------------------------------------------------------------------------------

// The launch's (seed, offset); the generator's offset moves past it.
PhiloxState take_launch_state(GeneratorImpl& gen) {
  auto* philox_gen = dynamic_cast<CUDAGeneratorImpl*>(&gen);
  if (philox_gen == nullptr) glass::detail::wrong_generator_kind(gen, "cuda");
  std::lock_guard<std::mutex> lock(philox_gen->mutex());
  return philox_gen->next_launch();
}

template <class T, int V, class Draw>
void launch_philox_fill(const char* op, const Tensor& self, GeneratorImpl& gen, Draw draw) {
  const int64_t n = self.numel();
  if (n == 0) return;  // draws nothing, so the offset stays
  const PhiloxState state = take_launch_state(gen);
  const int64_t groups = (n + V - 1) / V;
  const int64_t per_block = int64_t(kRandomThreads) * kGroupsPerThread;
  const std::string name = kernel_name(op, scalar_type_of<T>);
  launch_kernel(name.c_str(), philox_fill_kernel<T, V, Draw>,
                Dim3(static_cast<unsigned>((groups + per_block - 1) / per_block)),
                Dim3(kRandomThreads), 0,
                getCurrentCUDAStream(static_cast<DeviceIndex>(self.device().index())), n,
                gptr<T>(static_cast<T*>(self.data_ptr())), state.seed, state.offset, draw);
}

}  // namespace

void launch_uniform(const Tensor& self, double from, double to, GeneratorImpl& gen) {
  dispatch_floating(self.dtype(), "uniform_", [&]<class T>() {
    launch_philox_fill<T, UniformDraw<T>::V>("uniform", self, gen, UniformDraw<T>{from, to});
  });
}

void launch_normal(const Tensor& self, double mean, double std, GeneratorImpl& gen) {
  dispatch_floating(self.dtype(), "normal_", [&]<class T>() {
    launch_philox_fill<T, NormalDraw<T>::V>("normal", self, gen, NormalDraw<T>{mean, std});
  });
}

void launch_random_int(const Tensor& self, int64_t low, int64_t high, GeneratorImpl& gen) {
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const auto ulow = static_cast<uint64_t>(low);
  dispatch_numeric(self.dtype(), "randint", [&]<class T>() {
    if (range <= (uint64_t(1) << 32)) {
      launch_philox_fill<T, 4>("randint", self, gen, RandomIntDraw<T, 4>{ulow, range});
    } else {
      launch_philox_fill<T, 2>("randint", self, gen, RandomIntDraw<T, 2>{ulow, range});
    }
  });
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
