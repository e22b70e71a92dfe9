// compiler/cuda_pointwise.h — a fused pointwise group as a CUDA kernel: the source the code
// generator writes, and the group compiled and run on kCUDA.
//
// The same PointwiseProgram that becomes a C++ loop on the CPU (pointwise.h) becomes a
// CUDA kernel for CUDA tensors: each thread computes 16 elements, 128 apart (as the eager
// elementwise kernels of cuda/kernels/elementwise.cuh), each element
// computed with the device functors eager's CUDA kernels use (cuda/kernels/pointwise_ops.cuh),
// so a fused group agrees with eager CUDA as the CPU's agrees with eager CPU.
//
//   std::string src = emit_cuda({program});           // CUDA C++ in the .cu convention
//   auto kernels = compile_cuda_pointwise({program});  // built, cached, loaded
//   Tensor y = kernels[0]({a_cuda, b_cuda});           // queued on the current stream
//
// The source is written in the project's kernel convention (cuda/kernel.h: gptr<T> for
// global memory), so it means the same to the two compilers that can build it:
//   * on the simulated GPU (CI, laptops), the host compiler builds it against the
//     simulator's header into a shared object (the kernel cache, kernel_cache.h), which the
//     process dlopen()s; the simulator then checks and counts its accesses like any
//     kernel's. The shared object reaches the simulator in the executable, so the
//     executable must export its symbols (-rdynamic; glass_compiler adds it to whatever
//     links it);
//   * on a GPU, NVRTC (nvrtc.h) compiles its device code into a CUBIN for the device's
//     architecture, which the CUDA runtime loads (cuda/runtime.h, module_load; no link to
//     libcuda), and the kernels are launched through the runtime with their arguments
//     packed as cudaLaunchKernel takes them. CUBINs are cached on disk (nvrtc.h).
//
// Invariant: each element of the output is written exactly once, by one thread, with the
// value eager's ops would compute for it (up to the contraction of a multiply and an add).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/pointwise.h"
#include "core/tensor.h"

namespace glass::compiler {

// The CUDA C++ of the groups' kernels, one source: kernel glass_cuda_kernel_K (strided
// operands, TensorIterator's metadata by value), glass_cuda_kernel_K_flat (every operand
// one contiguous run), and the host launcher
//   extern "C" void glass_cuda_launch_K(int64_t n, int ndim, const int64_t* sizes,
//                                       const int64_t* strides, char* const* data,
//                                       void* stream)
// (ndim < 0: the flat kernel; strides: ndim rows of one byte stride per operand, operand 0
// the output). Programs ending in a reduction are refused (eager's reduce kernel runs them).
std::string emit_cuda(const std::vector<PointwiseProgram>& programs);

// Why fused groups on kCUDA cannot be compiled in this process, or "" when they can: both
// need the project's headers (cuda/kernel.h); the simulated GPU also a host compiler and an
// executable that exports the simulator's symbols, a GPU libnvrtc.
std::string cuda_codegen_unavailable();

// The folder holding cuda/kernel.h that generated kernels are compiled against: the headers
// this library was built with (kernel_headers(), embedded at build time), written under the
// kernel cache in a folder named by their hash; or $GLASS_INCLUDE_DIR, where set (a
// developer's override: kernels built against other headers than the executable's).
std::string kernel_include_dir();
// The embedded headers: (path relative to the include folder, contents), those cuda/kernel.h
// and cuda/kernels/pointwise_ops.cuh reach (compiler/CMakeLists.txt).
const std::vector<std::pair<std::string, std::string>>& kernel_headers();

// A module NVRTC built, loaded on a GPU. CUDA kernels stay loaded for the process: a queued
// launch may outlive every CompiledCudaPointwise that could start one.
struct GpuModule;

// A group compiled for kCUDA: for the simulated GPU (a shared object's launcher) or for a GPU
// (two kernels of a loaded module).
class CompiledCudaPointwise {
 public:
  using Launch = void(int64_t n, int ndim, const int64_t* sizes, const int64_t* strides,
                      char* const* data, void* stream);
  CompiledCudaPointwise(PointwiseProgram program, std::shared_ptr<KernelLibrary> library,
                        const std::string& symbol);
  CompiledCudaPointwise(PointwiseProgram program, std::shared_ptr<const GpuModule> module,
                        int index);
  // Queues the kernel on the current stream of the inputs' device and returns the new
  // output; inputs as for CompiledPointwise (the program's dtypes), all on one CUDA device.
  Tensor operator()(TensorList inputs) const;
  const PointwiseProgram& program() const { return program_; }

 private:
  PointwiseProgram program_;
  std::shared_ptr<KernelLibrary> library_;  // the simulated GPU's build
  Launch* launch_ = nullptr;
  std::shared_ptr<const GpuModule> module_;  // a GPU's build
  void* kernel_ = nullptr;                   // strided operands
  void* flat_kernel_ = nullptr;              // every operand one contiguous run
  std::string kernel_name_;                  // for launch errors
  std::vector<int> live_inputs_;
};

// Generates, compiles (or loads from the cache) and binds all groups in one shared object
// (the simulated GPU) or one module (a GPU).
// Throws glass::Error with cuda_codegen_unavailable()'s reason when it cannot.
// `device`: where the kernels will run (a GPU's architecture decides its CUBIN); index -1
// is the current device.
std::vector<CompiledCudaPointwise> compile_cuda_pointwise(
    const std::vector<PointwiseProgram>& programs, Device device = Device(kCUDA, -1));

}  // namespace glass::compiler
