// cuda/runtime.h — the one interface both CUDA runtimes implement.
//
// kCUDA is served by one of two runtimes: the real one (cudart, cuda/gpu/) when a GPU
// is visible, or the simulated GPU (cuda/sim/), a CPU model of the device with its own
// memory arena, SM workers, copy engines, streams and events. Everything above this
// interface — the caching allocators, CUDAStream/CUDAEvent, the backend's kernels —
// is written once against it, so a program behaves the same on both.
//
// The calls mirror cudart's (cudaMalloc, cudaMemcpyAsync, cudaEventRecord, ...) one to
// one, so a student can read each virtual below as "what the driver does". Handles are
// opaque: a cudaStream_t / cudaEvent_t on a GPU, the simulator's own objects in sim.
//
// Choice (runtime()): GLASS_CUDA=gpu|sim|auto. auto (the default) is a GPU if one is
// visible and otherwise no CUDA device at all, as in PyTorch; the simulator serves
// kCUDA only when asked for (GLASS_CUDA=sim, or use_simulator() before the first CUDA
// call), so code ported from libtorch never runs on a simulated GPU without knowing it.
//
// Invariant: every call is thread-safe; a failed call throws glass::Error naming the
// call and the device, except malloc/host_alloc, which return null so that the caching
// allocator can free its cache and retry (cudaErrorMemoryAllocation is not fatal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace glass::cuda {

// A grid or block shape, as CUDA's dim3 (unused dims are 1).
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr Dim3() = default;
  constexpr Dim3(unsigned x_, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}  // NOLINT
  constexpr uint64_t count() const { return uint64_t{x} * y * z; }
};

enum class CopyKind : uint8_t { HostToDevice, DeviceToHost, DeviceToDevice };
const char* to_string(CopyKind kind);  // "HtoD", "DtoH", "DtoD" (as nsys prints them)

using StreamHandle = void*;  // cudaStream_t on a GPU; sim::Stream* in the simulator
using EventHandle = void*;   // cudaEvent_t on a GPU; sim::Event* in the simulator
using ModuleHandle = void*;  // cudaLibrary_t: code loaded at run time (a GPU only)
using KernelHandle = void*;  // cudaKernel_t: a kernel of a loaded module

// Hardware limits a launch is checked against (cudaDeviceProp's names).
struct DeviceProperties {
  std::string name;  // "NVIDIA H200" or "glasstorch simulated GPU (8 SMs)"
  int64_t total_memory = 0;
  int multi_processor_count = 0;
  int max_threads_per_block = 1024;
  Dim3 max_block_dim{1024, 1024, 64};
  Dim3 max_grid_dim{2147483647u, 65535u, 65535u};
  size_t shared_mem_per_block = 48 * 1024;
  int warp_size = 32;
  int major = 0, minor = 0;  // compute capability (the simulator says 9.0, an H100's)
};

class Runtime {
 public:
  virtual ~Runtime() = default;
  virtual bool is_simulated() const = 0;

  // ---- devices (cudaGetDeviceCount, cudaGetDeviceProperties, cudaDeviceSynchronize)
  virtual int device_count() = 0;
  virtual const DeviceProperties& properties(int device) = 0;
  virtual void device_synchronize(int device) = 0;

  // ---- memory (cudaMalloc/cudaFree, cudaHostAlloc/cudaFreeHost, cudaPointerGetAttributes)
  // Device memory: null when the device has no room. The returned address is not
  // readable from host code (in the simulator either).
  virtual void* malloc(int device, size_t nbytes) = 0;
  virtual void free(int device, void* ptr) = 0;
  // Page-locked host memory: null when page-locking is refused (RLIMIT_MEMLOCK).
  virtual void* host_alloc(size_t nbytes) = 0;
  virtual void host_free(void* ptr) = 0;
  // True for a pointer inside a block from host_alloc (pinned memory).
  virtual bool is_pinned(const void* host_ptr) = 0;
  // The device whose memory holds ptr, or -1 for host memory.
  virtual int device_of(const void* ptr) = 0;

  // ---- streams (cudaStreamCreateWithFlags(cudaStreamNonBlocking), ...)
  // The default stream of a device does not synchronize with other streams (PyTorch's
  // pool streams are created non-blocking, so the legacy default-stream rule never
  // applies to them; here it never applies at all).
  virtual StreamHandle default_stream(int device) = 0;
  virtual StreamHandle create_stream(int device) = 0;
  virtual void destroy_stream(StreamHandle stream) = 0;
  virtual int stream_device(StreamHandle stream) = 0;
  virtual void stream_synchronize(StreamHandle stream) = 0;
  virtual bool stream_query(StreamHandle stream) = 0;  // true when all its work is done

  // ---- events (cudaEventCreateWithFlags, cudaEventRecord, cudaStreamWaitEvent, ...)
  virtual EventHandle event_create(int device, bool enable_timing) = 0;
  virtual void event_destroy(EventHandle event) = 0;
  // Records the event at the current end of the stream (same device as the event).
  virtual void event_record(EventHandle event, StreamHandle stream) = 0;
  // Work enqueued on `stream` after this call waits until the event completes.
  virtual void stream_wait_event(StreamHandle stream, EventHandle event) = 0;
  virtual bool event_query(EventHandle event) = 0;  // true if completed (or never recorded)
  virtual void event_synchronize(EventHandle event) = 0;
  // Milliseconds between two completed timing events (cudaEventElapsedTime).
  virtual float event_elapsed_ms(EventHandle start, EventHandle end) = 0;

  // ---- copies (cudaMemcpyAsync). Host-side rules, as CUDA's:
  //   HostToDevice from pageable memory returns once the source has been staged;
  //   DeviceToHost into pageable memory returns once the copy has finished;
  //   either direction with pinned host memory is only queued, and returns at once;
  //   DeviceToDevice is queued.
  virtual void memcpy_async(void* dst, const void* src, size_t nbytes, CopyKind kind,
                            StreamHandle stream) = 0;
  // memset on the device, queued on the stream (cudaMemsetAsync).
  virtual void memset_async(void* dst, int value, size_t nbytes, StreamHandle stream) = 0;

  // ---- code built at run time (cudaLibraryLoadData, cudaLibraryGetKernel, cudaLaunchKernel)
  // A module image (CUBIN or PTX, e.g. what NVRTC made of the compiler's generated kernels)
  // is loaded through the runtime, never the driver API, so nothing links libcuda. Only a
  // GPU runs one: the simulator runs kernels the host compiler built (cuda/launch.h), and
  // these throw there.
  virtual ModuleHandle module_load(int device, const std::string& image);
  virtual void module_unload(ModuleHandle module);
  virtual KernelHandle module_kernel(ModuleHandle module, const std::string& name);
  // Queues `kernel` on the stream; args[i] points at the value of parameter i, as
  // cudaLaunchKernel takes them. Validated like any launch (check_launch).
  virtual void module_launch(KernelHandle kernel, const char* name, Dim3 grid, Dim3 block,
                             size_t dynamic_shared_bytes, StreamHandle stream, void** args);
};

// Throws glass::Error, naming the kernel and the values, unless the launch fits the
// device: every dimension >= 1, grid and block dims within max_grid_dim / max_block_dim,
// at most max_threads_per_block threads, dynamic shared memory within
// shared_mem_per_block. A pure function of its arguments.
void check_launch(const DeviceProperties& props, const char* kernel, Dim3 grid, Dim3 block,
                  size_t dynamic_shared_bytes);

// The runtime serving kCUDA in this process, chosen on first use (see the top of this
// file). Throws when there is none, with a message that says how to get one.
Runtime& runtime();
// The simulator serves kCUDA from now on. Must be called before the first CUDA call
// that picked the other runtime (afterwards it throws if a GPU runtime is already active).
void use_simulator();

// torch::cuda's names.
bool is_available();  // a runtime exists and has at least one device
int device_count();   // 0 when there is no runtime
bool is_simulated();  // the simulator serves kCUDA

}  // namespace glass::cuda
