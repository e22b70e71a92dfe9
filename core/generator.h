// core/generator.h — random number generators: glass::Generator and its two kinds of state.
//
// libtorch's design, in miniature. A Generator is a cheap shared handle to a
// GeneratorImpl: the state of one stream of random numbers on one device. Every random
// op takes an optional Generator; without one it draws from the device's default
// generator, and glass::manual_seed(s) reseeds all the defaults, as torch::manual_seed
// does.
//
//   CPUGeneratorImpl   a 64-bit Mersenne Twister (std::mt19937_64), drawn from serially by
//                      the CPU kernels (libtorch: at::CPUGeneratorImpl, also mt19937-based;
//                      glasstorch's numbers are its own, not bit-identical to PyTorch's).
//   CUDAGeneratorImpl  Philox 4x32-10 (core/philox.h): no state but a seed and an offset.
//                      A random kernel reads (seed, offset) when it is launched and the
//                      offset moves on by one, so the next launch draws fresh numbers; the
//                      numbers of a launch depend only on (seed, offset, element index),
//                      so the simulator and a GPU draw the same ones (libtorch:
//                      at::CUDAGeneratorImpl and its philox_cuda_state()).
//
// Thread safety: each GeneratorImpl has a mutex. Generator's methods take it; a kernel
// that draws takes it for the whole draw (as PyTorch's kernels lock gen->mutex_), so
// concurrent random ops get disjoint numbers, never torn state. Disjoint, but which thread
// gets which numbers depends on the scheduling: a thread that must draw reproducibly while
// others draw too (a threads-backend rank) holds a ThreadLocalGeneratorGuard, below.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <type_traits>

#include "core/device.h"

namespace glass {

// PyTorch's default seed (c10::default_rng_seed_val): what a generator starts from.
inline constexpr uint64_t kDefaultRngSeed = 67280421310721ull;

class GeneratorImpl {
 public:
  explicit GeneratorImpl(Device device) : device_(device) {}
  virtual ~GeneratorImpl() = default;
  GeneratorImpl(const GeneratorImpl&) = delete;
  GeneratorImpl& operator=(const GeneratorImpl&) = delete;

  Device device() const { return device_; }
  // Held around every call below and around every draw.
  std::mutex& mutex() const { return mutex_; }

  // Restarts the stream from `seed` (and, for Philox, offset 0).
  virtual void set_current_seed(uint64_t seed) = 0;
  virtual uint64_t current_seed() const = 0;
  // Philox only: where the next draw starts. The CPU generator throws a clear error.
  virtual void set_offset(uint64_t offset);
  virtual uint64_t get_offset() const;

 private:
  Device device_;
  mutable std::mutex mutex_;
};

class CPUGeneratorImpl final : public GeneratorImpl {
 public:
  explicit CPUGeneratorImpl(uint64_t seed = kDefaultRngSeed);
  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override { return seed_; }

  // The draws (hold mutex()).
  uint64_t random64() { return engine_(); }
  double uniform01() { return static_cast<double>(random64() >> 11) * 0x1.0p-53; }  // 53 bits

 private:
  std::mt19937_64 engine_;
  uint64_t seed_;
};

// What one launch of a Philox kernel needs (libtorch: at::PhiloxCudaState).
struct PhiloxState {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

class CUDAGeneratorImpl final : public GeneratorImpl {
 public:
  explicit CUDAGeneratorImpl(int device_index, uint64_t seed = kDefaultRngSeed);
  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override { return seed_; }
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }

  // The (seed, offset) of the next launch, and the offset moves past it (hold mutex()).
  // Each launch owns one offset: its counters are (group, offset) for every group index,
  // so launches never share numbers (core/philox.h).
  PhiloxState next_launch() { return {seed_, offset_++}; }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};

class Generator {
 public:
  Generator() = default;  // undefined, like a default-constructed at::Generator
  explicit Generator(std::shared_ptr<GeneratorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  Device device() const;

  // Python's gen.manual_seed(s) and libtorch's gen.set_current_seed(s): the same thing.
  void manual_seed(uint64_t seed) { set_current_seed(seed); }
  void set_current_seed(uint64_t seed);
  uint64_t current_seed() const;
  void set_offset(uint64_t offset);
  uint64_t get_offset() const;

  GeneratorImpl* unsafeGetGeneratorImpl() const { return impl_.get(); }
  std::mutex& mutex() const;

  // The state as its concrete kind, e.g. gen.get<CPUGeneratorImpl>(); a clear error when
  // the generator is of another kind (a CUDA generator passed to a CPU op).
  template <class Impl>
  Impl* get() const;

  bool operator==(const Generator& o) const { return impl_ == o.impl_; }

 private:
  const GeneratorImpl& checked() const;
  std::shared_ptr<GeneratorImpl> impl_;
};

// A new, independent generator for `device`, starting from `seed`
// (libtorch: at::make_generator<at::CPUGeneratorImpl>(seed), or the CUDA one).
Generator make_generator(Device device, uint64_t seed = kDefaultRngSeed);

// The generator random ops use on `device` when none is given (libtorch:
// at::detail::getDefaultCPUGenerator() and at::cuda::detail::getDefaultCUDAGenerator(i)).
// Device(kCUDA) without an index means the current CUDA device. On a thread that holds a
// ThreadLocalGeneratorGuard, that thread's own default.
Generator default_generator(Device device);

// Seeds the default CPU generator and every CUDA device's default generator, as
// torch::manual_seed does (this thread's own under a ThreadLocalGeneratorGuard).
void manual_seed(uint64_t seed);
// The seed of the default CPU generator (this thread's own under a guard).
uint64_t initial_seed();

namespace detail {
struct DefaultGenerators;  // one CPU default and the CUDA defaults by device (generator.cpp)
}  // namespace detail

// For its lifetime, the calling thread has default generators of its own, as a new process
// has: a CPU generator and a generator per CUDA device, all starting from `seed`.
// default_generator(), manual_seed() and initial_seed() on this thread use them instead of
// the process's; other threads are unaffected. glasstorch's own addition (libtorch's
// defaults are per process only).
//
// Why it exists: the threads backend of glass::distributed runs ranks as threads of one
// process, and run_threads gives each rank one of these. Without it, ranks that seed and
// build their models at the same time draw from one shared stream, and which numbers each
// gets depends on the scheduling. With it, a rank draws exactly what the same code draws
// as a process of its own under glassrun.
//
// Guards nest (the newest wins until it ends) and must end on the thread that made them,
// newest first; ending one out of order is a programming error that aborts with a message.
// Handles taken from default_generator() stay valid after the guard ends. Threads started
// from a guarded thread (the intra-op pool, a process group's communication thread, the
// simulator's streams) do not inherit it; none of them draws: a random op takes its
// generator on the thread that calls it, and a CUDA one its Philox (seed, offset) there too.
class ThreadLocalGeneratorGuard {
 public:
  explicit ThreadLocalGeneratorGuard(uint64_t seed = kDefaultRngSeed);
  ~ThreadLocalGeneratorGuard();
  ThreadLocalGeneratorGuard(const ThreadLocalGeneratorGuard&) = delete;
  ThreadLocalGeneratorGuard& operator=(const ThreadLocalGeneratorGuard&) = delete;

 private:
  std::unique_ptr<detail::DefaultGenerators> mine_;
  detail::DefaultGenerators* previous_;
};

// The generator a random op on `device` uses: `gen` if given — checked to be one for
// that device type ("uniform_(): expected a generator for device cuda, got one for
// cpu") — else the device's default.
GeneratorImpl& generator_for(Device device, const Generator* gen, const char* op);

namespace detail {
[[noreturn]] void wrong_generator_kind(const GeneratorImpl& impl, const char* wanted);
}  // namespace detail

template <class Impl>
Impl* Generator::get() const {
  const GeneratorImpl& impl = checked();
  auto* p = dynamic_cast<Impl*>(const_cast<GeneratorImpl*>(&impl));
  if (p == nullptr)
    detail::wrong_generator_kind(impl, std::is_same_v<Impl, CPUGeneratorImpl> ? "cpu" : "cuda");
  return p;
}

}  // namespace glass
