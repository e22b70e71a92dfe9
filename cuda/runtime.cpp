// cuda/runtime.cpp — which runtime serves kCUDA in this process.
//
// The choice is made once, on the first call that needs it, and never changes behind a
// program's back: GLASS_CUDA=gpu|sim|auto, or use_simulator() before the first CUDA
// call. Invariant: once a runtime has served a call, runtime() returns that runtime for
// the rest of the process (tensors hold its addresses).
#include "cuda/runtime.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

#include "core/error.h"
#include "cuda/gpu/gpu_runtime.h"
#include "cuda/sim/sim_runtime.h"

namespace glass::cuda {
namespace {

enum class Choice { Unchosen, None, Gpu, Sim };

struct State {
  std::mutex mu;
  Choice choice = Choice::Unchosen;
  Runtime* active = nullptr;
  std::string why_none;  // for the error message when there is no runtime
  // `active` once it is set, for the lock-free path every op takes (a stream lookup, a
  // launch, an allocation each ask for the runtime). Never changes after that.
  std::atomic<Runtime*> published{nullptr};
};

State& state() {
  static State s;
  return s;
}

// Reads GLASS_CUDA; the empty string and "auto" mean auto.
std::string requested() {
  const char* v = std::getenv("GLASS_CUDA");
  std::string s = v ? v : "";
  GLASS_CHECK(s.empty() || s == "auto" || s == "gpu" || s == "sim", "GLASS_CUDA='", s,
              "' is not a valid choice; use gpu, sim or auto (the default: a GPU if one is "
              "visible, otherwise no CUDA device)");
  return s;
}

// Decides, under the lock, which runtime serves kCUDA.
void choose_locked(State& s) {
  if (s.choice != Choice::Unchosen) return;
  std::string want = requested();
  if (want == "sim") {
    s.active = &sim::simulator();
    s.choice = Choice::Sim;
    s.published.store(s.active, std::memory_order_release);
    return;
  }
  std::string gpu_error;
  Runtime* gpu = gpu::gpu_runtime(&gpu_error);
  if (gpu != nullptr && gpu->device_count() > 0) {
    s.active = gpu;
    s.choice = Choice::Gpu;
    s.published.store(s.active, std::memory_order_release);
    return;
  }
  GLASS_CHECK(
      want != "gpu", "GLASS_CUDA=gpu, but no GPU can be used: ", gpu_error,
      ". Unset GLASS_CUDA to run without CUDA, or set GLASS_CUDA=sim for the simulated GPU");
  s.choice = Choice::None;
  s.why_none = gpu_error;
}

}  // namespace

const char* to_string(CopyKind kind) {
  switch (kind) {
    case CopyKind::HostToDevice: return "HtoD";
    case CopyKind::DeviceToHost: return "DtoH";
    case CopyKind::DeviceToDevice: return "DtoD";
  }
  return "?";
}

// The simulator has no use for a module image: its kernels are host code (cuda/launch.h).
namespace {
[[noreturn]] void no_modules(const char* call) {
  GLASS_CHECK(false, call, ": a module image (CUBIN, PTX) runs on a GPU only; the simulated GPU ",
              "runs kernels the host compiler built");
  std::abort();
}
}  // namespace

ModuleHandle Runtime::module_load(int, const std::string&) { no_modules("module_load"); }
void Runtime::module_unload(ModuleHandle) { no_modules("module_unload"); }
KernelHandle Runtime::module_kernel(ModuleHandle, const std::string&) {
  no_modules("module_kernel");
}
void Runtime::module_launch(KernelHandle, const char*, Dim3, Dim3, size_t, StreamHandle, void**) {
  no_modules("module_launch");
}

Runtime& runtime() {
  State& s = state();
  if (Runtime* r = s.published.load(std::memory_order_acquire)) return *r;
  std::lock_guard<std::mutex> lock(s.mu);
  choose_locked(s);
  GLASS_CHECK(s.active != nullptr, "CUDA is not available: ", s.why_none,
              ". To run CUDA code without a GPU, use the simulated GPU: set GLASS_CUDA=sim, or "
              "call glass::cuda::use_simulator() before the first CUDA call");
  return *s.active;
}

void use_simulator() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  GLASS_CHECK(s.choice != Choice::Gpu,
              "use_simulator(): a GPU already serves CUDA in this process; call use_simulator() "
              "before the first CUDA call (or set GLASS_CUDA=sim)");
  s.active = &sim::simulator();
  s.choice = Choice::Sim;
  s.published.store(s.active, std::memory_order_release);
}

bool is_available() { return device_count() > 0; }

int device_count() {
  State& s = state();
  Runtime* r = s.published.load(std::memory_order_acquire);
  if (r == nullptr) {
    std::lock_guard<std::mutex> lock(s.mu);
    choose_locked(s);
    r = s.active;
  }
  return r ? r->device_count() : 0;
}

bool is_simulated() {
  State& s = state();
  if (Runtime* r = s.published.load(std::memory_order_acquire)) return r->is_simulated();
  std::lock_guard<std::mutex> lock(s.mu);
  choose_locked(s);
  return s.choice == Choice::Sim;
}

}  // namespace glass::cuda
