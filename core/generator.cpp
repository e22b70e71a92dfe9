// core/generator.cpp — the generators' state and the per-device default generators.
//
// The CUDA defaults are created on first use, one per device index. manual_seed() must
// not ask the CUDA runtime how many devices exist (that would choose a runtime before
// the program's use_simulator()), so it seeds the defaults that exist and remembers the
// seed for those created later: either way each device's default starts at (seed, 0),
// as after torch::manual_seed.
//
// A set of defaults (DefaultGenerators) is the process's, or a thread's own while it holds
// a ThreadLocalGeneratorGuard; a thread_local pointer says which one the thread uses.
//
// Invariant: default_generator(d) returns the same generator for the same device every
// time while the same set is in force on the thread (the process's: for its whole life).
#include "core/generator.h"

#include <cstdio>
#include <cstdlib>
#include <map>

#include "core/device_guard.h"
#include "core/error.h"

namespace glass {

void GeneratorImpl::set_offset(uint64_t) {
  GLASS_CHECK(false, "set_offset(): the ", device(),
              " generator has no offset (only the Philox generators of CUDA devices do)");
}
uint64_t GeneratorImpl::get_offset() const {
  GLASS_CHECK(false, "get_offset(): the ", device(),
              " generator has no offset (only the Philox generators of CUDA devices do)");
  return 0;
}

CPUGeneratorImpl::CPUGeneratorImpl(uint64_t seed)
    : GeneratorImpl(Device(kCPU)), engine_(seed), seed_(seed) {}

void CPUGeneratorImpl::set_current_seed(uint64_t seed) {
  engine_.seed(seed);
  seed_ = seed;
}

CUDAGeneratorImpl::CUDAGeneratorImpl(int device_index, uint64_t seed)
    : GeneratorImpl(Device(kCUDA, device_index)), seed_(seed) {}

void CUDAGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

// ---- Generator --------------------------------------------------------------------------

const GeneratorImpl& Generator::checked() const {
  GLASS_CHECK(impl_ != nullptr,
              "Generator: this generator is undefined (default-constructed); "
              "use glass::make_generator(device) or default_generator(device)");
  return *impl_;
}

Device Generator::device() const { return checked().device(); }
std::mutex& Generator::mutex() const { return checked().mutex(); }

void Generator::set_current_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex());
  impl_->set_current_seed(seed);
}
uint64_t Generator::current_seed() const {
  std::lock_guard<std::mutex> lock(mutex());
  return impl_->current_seed();
}
void Generator::set_offset(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mutex());
  impl_->set_offset(offset);
}
uint64_t Generator::get_offset() const {
  std::lock_guard<std::mutex> lock(mutex());
  return impl_->get_offset();
}

void detail::wrong_generator_kind(const GeneratorImpl& impl, const char* wanted) {
  detail::throw_error(
      detail::str_cat("expected a ", wanted, " generator, but got one for ", impl.device()));
}

Generator make_generator(Device device, uint64_t seed) {
  if (device.is_cpu()) return Generator(std::make_shared<CPUGeneratorImpl>(seed));
  const Device d = resolve_device(device);
  return Generator(std::make_shared<CUDAGeneratorImpl>(d.index() < 0 ? 0 : d.index(), seed));
}

// ---- the defaults -------------------------------------------------------------------------

struct detail::DefaultGenerators {
  explicit DefaultGenerators(uint64_t seed)
      : cpu(std::make_shared<CPUGeneratorImpl>(seed)), cuda_seed(seed) {}
  const Generator cpu;
  std::mutex mutex;  // guards the two below (other threads may ask for a device's default)
  std::map<int, Generator> cuda_by_index;
  uint64_t cuda_seed;  // for the CUDA defaults not created yet
};

namespace {

detail::DefaultGenerators& process_defaults() {
  static detail::DefaultGenerators d(kDefaultRngSeed);
  return d;
}

thread_local detail::DefaultGenerators* t_own_defaults = nullptr;

detail::DefaultGenerators& current_defaults() {
  return t_own_defaults != nullptr ? *t_own_defaults : process_defaults();
}

}  // namespace

Generator default_generator(Device device) {
  detail::DefaultGenerators& defaults = current_defaults();
  if (device.is_cpu()) return defaults.cpu;
  const Device d = resolve_device(device);
  const int index = d.index() < 0 ? 0 : d.index();
  std::lock_guard<std::mutex> lock(defaults.mutex);
  auto it = defaults.cuda_by_index.find(index);
  if (it == defaults.cuda_by_index.end())
    it = defaults.cuda_by_index
             .emplace(index,
                      Generator(std::make_shared<CUDAGeneratorImpl>(index, defaults.cuda_seed)))
             .first;
  return it->second;
}

void manual_seed(uint64_t seed) {
  detail::DefaultGenerators& defaults = current_defaults();
  Generator(defaults.cpu).set_current_seed(seed);
  std::lock_guard<std::mutex> lock(defaults.mutex);
  defaults.cuda_seed = seed;
  for (auto& [index, gen] : defaults.cuda_by_index) gen.set_current_seed(seed);
}

uint64_t initial_seed() { return current_defaults().cpu.current_seed(); }

ThreadLocalGeneratorGuard::ThreadLocalGeneratorGuard(uint64_t seed)
    : mine_(std::make_unique<detail::DefaultGenerators>(seed)), previous_(t_own_defaults) {
  t_own_defaults = mine_.get();
}

ThreadLocalGeneratorGuard::~ThreadLocalGeneratorGuard() {
  if (t_own_defaults != mine_.get()) {
    // Restoring `previous_` now could leave the thread pointing at a set that is gone.
    std::fputs(
        "glass::ThreadLocalGeneratorGuard: a guard ended out of order or on another thread "
        "than the one that made it (guards must end newest first, where they began)\n",
        stderr);
    std::abort();
  }
  t_own_defaults = previous_;
}

GeneratorImpl& generator_for(Device device, const Generator* gen, const char* op) {
  if (gen == nullptr || !gen->defined()) return *default_generator(device).unsafeGetGeneratorImpl();
  GLASS_CHECK(gen->device().type() == device.type(), op, "(): expected a generator for device ",
              device.type(), ", but got one for ", gen->device(),
              " (the generator must be of the device type of the tensor it fills)");
  return *gen->unsafeGetGeneratorImpl();
}

}  // namespace glass
