// compiler/cuda_pointwise_run.cpp — building a fused group's CUDA kernel for the simulated GPU
// and launching it (cuda_pointwise.h). Invariant: a launch gets only device addresses of one
// CUDA device, and the metadata TensorIterator computed for exactly those operands.
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>

#include "compiler/cuda_pointwise.h"
#include "compiler/kernel_cache.h"
#include "compiler/nvrtc.h"
#include "compiler/pointwise_detail.h"
#include "core/error.h"
#include "core/grad_mode.h"
#include "core/tensor_iterator.h"
#include "cuda/runtime.h"
#include "cuda/stream.h"

namespace glass::compiler {
namespace {

bool has_kernel_header(const std::string& dir) {
  struct stat st {};
  return !dir.empty() && ::stat((dir + "/cuda/kernel.h").c_str(), &st) == 0;
}

std::vector<std::string> sim_flags(const std::string& include_dir) {
  return {"-I" + include_dir, "-DGLASS_SIM_KERNEL_DSO=1"};
}

// The headers a generated kernel includes, as an override folder (GLASS_INCLUDE_DIR) holds
// them, path and contents: part of its cache key, so an edited header (a changed functor, a
// changed gptr) rebuilds the kernels that include it. Which headers: the ones this build's
// kernels include (kernel_headers(), found when the library was configured), read from the
// override each time, since its files may change between calls.
std::string header_fingerprint(const std::string& include_dir) {
  std::string all;
  for (const auto& [path, embedded] : kernel_headers()) {
    std::ifstream in(include_dir + "/" + path, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    all += path + '\n' + (in.is_open() ? text : "(missing)") + '\0';
  }
  return all;
}

void check_inputs(const PointwiseProgram& p, TensorList inputs) {
  detail::check_call(p, inputs, "compiled CUDA group");
  for (size_t k = 0; k < inputs.size(); ++k) {
    GLASS_CHECK(inputs[k].device().is_cuda(), "compiled CUDA group: input ", k, " is on ",
                inputs[k].device(), "; this kernel was compiled for kCUDA");
    GLASS_CHECK(inputs[k].device() == inputs[0].device(), "compiled CUDA group: input ", k,
                " is on ", inputs[k].device(), ", input 0 on ", inputs[0].device(),
                "; a kernel runs on one device");
    GLASS_CHECK(!GradMode::is_enabled() || !inputs[k].requires_grad(),
                "compiled CUDA group: input ", k, " requires grad, and a fused kernel records ",
                "no graph; call it under NoGradGuard");
  }
}

}  // namespace

std::string kernel_include_dir() {
  if (const char* env = std::getenv("GLASS_INCLUDE_DIR"); env && *env) return env;
  static std::once_flag once;
  static std::string dir;
  std::call_once(once, [] {
    std::string all;
    for (const auto& [path, text] : kernel_headers()) all += path + '\0' + text + '\0';
    char name[32];
    std::snprintf(name, sizeof name, "include/%016zx", std::hash<std::string>{}(all));
    dir = write_cache_files(name, kernel_headers());
  });
  return dir;
}

std::string cuda_codegen_unavailable() {
  const std::string dir = kernel_include_dir();
  if (!has_kernel_header(dir))
    return "the project's headers (cuda/kernel.h) are not found; set GLASS_INCLUDE_DIR to the "
           "folder that holds cuda/ and core/";
  if (!cuda::is_simulated()) return nvrtc_unavailable();
  if (!host_compiler().available())
    return "no C++ compiler found (set GLASS_CXX) to build kernels for the simulated GPU";
  // The kernel's shared object reaches the simulator (threadIdx, the launch queue) in the
  // executable: only an executable linked with -rdynamic exports them.
  if (::dlsym(RTLD_DEFAULT, "threadIdx") == nullptr)
    return "this executable does not export the simulator's symbols to kernels it loads; link "
           "it with -rdynamic (CMake: link glasstorch::glass_compiler, or set ENABLE_EXPORTS)";
  return "";
}

// A module NVRTC built, loaded through the runtime. Never unloaded: see keep_loaded.
struct GpuModule {
  cuda::ModuleHandle handle = nullptr;
  GpuModule(int device, const std::string& cubin)
      : handle(cuda::runtime().module_load(device, cubin)) {}
  GpuModule(const GpuModule&) = delete;
  GpuModule& operator=(const GpuModule&) = delete;
};

namespace {

// A launch returns before its kernel runs, and the kernel's code lives in the shared object
// (or module) that was loaded for it: unloading it when the last CompiledCudaPointwise goes
// would pull the code from under a queued launch. So CUDA kernels stay loaded for the
// process's life (as Inductor's do); they are small, and each source is built once.
template <class T>
void keep_loaded(const std::shared_ptr<T>& loaded) {
  static std::mutex mutex;
  static std::vector<std::shared_ptr<const void>> kept;
  std::lock_guard<std::mutex> lock(mutex);
  kept.push_back(loaded);
}

// The embedded headers' folder is named by their hash, so a path under it already says what
// they are; an override's headers are keyed by their contents.
std::string headers_key(const std::string& include_dir) {
  const char* override_dir = std::getenv("GLASS_INCLUDE_DIR");
  return override_dir && *override_dir ? header_fingerprint(include_dir) : "";
}

// The module for a source on a device: NVRTC compiles it for the device's architecture (or the
// disk cache has the CUBIN) and the runtime loads it, once per (source, headers, device) in a
// process.
std::shared_ptr<const GpuModule> gpu_module(const std::string& source, int device,
                                            const std::string& include_dir) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const GpuModule>> loaded;
  const std::string key = std::to_string(device) + '\0' + include_dir + '\0' + source;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = loaded.find(key); it != loaded.end()) return it->second;
  }
  const cuda::DeviceProperties& props = cuda::runtime().properties(device);
  auto module = std::make_shared<const GpuModule>(
      device, nvrtc_compile_cached(source, "glass_fused.cu", props.major, props.minor, include_dir,
                                   headers_key(include_dir)));
  keep_loaded(module);
  std::lock_guard<std::mutex> lock(mutex);
  return loaded.emplace(key, std::move(module)).first->second;
}

}  // namespace

CompiledCudaPointwise::CompiledCudaPointwise(PointwiseProgram program,
                                             std::shared_ptr<KernelLibrary> library,
                                             const std::string& symbol)
    : program_(std::move(program)), library_(std::move(library)) {
  launch_ = library_->function<Launch>(symbol);
  live_inputs_ = program_.live_inputs();
}

CompiledCudaPointwise::CompiledCudaPointwise(PointwiseProgram program,
                                             std::shared_ptr<const GpuModule> module, int index)
    : program_(std::move(program)), module_(std::move(module)) {
  const std::string name = "glass_cuda_kernel_" + std::to_string(index);
  kernel_name_ = "fused_" + std::to_string(index);  // as the simulator's launcher names it
  kernel_ = cuda::runtime().module_kernel(module_->handle, name);
  flat_kernel_ = cuda::runtime().module_kernel(module_->handle, name + "_flat");
  live_inputs_ = program_.live_inputs();
}

Tensor CompiledCudaPointwise::operator()(TensorList inputs) const {
  check_inputs(program_, inputs);
  GLASS_CHECK(cuda::is_simulated() == (module_ == nullptr), "compiled CUDA group: it was built ",
              "for ", module_ ? "a GPU" : "the simulated GPU", ", but kCUDA is served by ",
              cuda::is_simulated() ? "the simulated GPU" : "a GPU", " now");
  TensorIterator iter = detail::elementwise_iterator(program_, live_inputs_, inputs);
  const int64_t n = iter.numel();
  if (n == 0) return iter.output(0);
  const int operands = static_cast<int>(live_inputs_.size()) + 1;
  std::vector<char*> data(static_cast<size_t>(operands));
  bool flat = iter.ndim() <= 1;
  for (int k = 0; k < operands; ++k) {
    data[k] = static_cast<char*>(iter.data_ptr(k));
    const int64_t elem = static_cast<int64_t>(
        element_size(k == 0 ? program_.output_dtype() : program_.inputs[live_inputs_[k - 1]]));
    flat = flat && (iter.ndim() == 0 || iter.strides(k)[0] == elem);
  }
  const int ndim = iter.ndim();
  GLASS_CHECK(ndim <= 16, "compiled CUDA group: at most 16 dims after merging, got ", ndim);
  std::vector<int64_t> sizes(iter.shape().begin(), iter.shape().end());
  std::vector<int64_t> strides(static_cast<size_t>(ndim * operands));
  for (int d = 0; d < ndim; ++d)
    for (int k = 0; k < operands; ++k) strides[d * operands + k] = iter.strides(k)[d];
  const cuda::CUDAStream stream =
      cuda::getCurrentCUDAStream(static_cast<cuda::DeviceIndex>(iter.device().index()));
  if (launch_) {
    launch_(n, flat ? -1 : ndim, sizes.data(), strides.data(), data.data(), stream.stream());
    return iter.output(0);
  }
  // A GPU: the parameters as cudaLaunchKernel takes them, a pointer to each value. The
  // strided kernel's Offsets<N> is int64_t throughout: ndim, sizes[16], strides[16][N].
  int64_t count = n;
  std::vector<int64_t> offsets(static_cast<size_t>(1 + 16 + 16 * operands), 0);
  offsets[0] = ndim;
  for (int d = 0; d < ndim; ++d) {
    offsets[1 + d] = sizes[d];
    for (int k = 0; k < operands; ++k) offsets[17 + d * operands + k] = strides[d * operands + k];
  }
  std::vector<void*> args = {&count};
  if (!flat) args.push_back(offsets.data());
  for (int k = 0; k < operands; ++k) args.push_back(&data[k]);
  constexpr int64_t kThreads = 128, kPerBlock = 128 * 16;  // as the generated source's
  const cuda::Dim3 grid(static_cast<unsigned>((n + kPerBlock - 1) / kPerBlock));
  cuda::runtime().module_launch(flat ? flat_kernel_ : kernel_, kernel_name_.c_str(), grid,
                                cuda::Dim3(static_cast<unsigned>(kThreads)), 0, stream.stream(),
                                args.data());
  return iter.output(0);
}

std::vector<CompiledCudaPointwise> compile_cuda_pointwise(
    const std::vector<PointwiseProgram>& programs, Device device) {
  GLASS_CHECK(device.is_cuda(), "compile_cuda_pointwise: ", device, " is not a CUDA device");
  const std::string why = cuda_codegen_unavailable();
  GLASS_CHECK(why.empty(), "compile: cannot build CUDA kernels: ", why);
  const std::string source = emit_cuda(programs);
  if (const char* debug = std::getenv("GLASS_COMPILE_DEBUG"); debug && std::string(debug) == "1")
    std::fprintf(stderr, "[glass compile] generated CUDA:\n%s\n", source.c_str());
  const std::string dir = kernel_include_dir();
  std::vector<CompiledCudaPointwise> compiled;
  if (!cuda::is_simulated()) {
    const int index = device.index() >= 0 ? device.index() : cuda::current_device();
    std::shared_ptr<const GpuModule> module = gpu_module(source, index, dir);
    for (size_t i = 0; i < programs.size(); ++i)
      compiled.emplace_back(programs[i], module, static_cast<int>(i));
    return compiled;
  }
  std::shared_ptr<KernelLibrary> library =
      load_or_compile(source, sim_flags(dir), headers_key(dir));
  keep_loaded(library);
  for (size_t i = 0; i < programs.size(); ++i)
    compiled.emplace_back(programs[i], library, "glass_cuda_launch_" + std::to_string(i));
  return compiled;
}

}  // namespace glass::compiler
