// cuda/gpu/gpu_runtime.cpp — the real CUDA runtime: cuda/runtime.h over cudart.
//
// Each virtual is one cudart call (two where CUDA's own rules need a second, see
// memcpy_async), so this file doubles as a map from the runtime interface to the CUDA
// API. cudart is linked statically and loads the driver (libcuda) with dlopen on its
// first call, so a binary holding this file starts on a machine with no driver:
// gpu_runtime() then returns null and says why, and runtime.cpp reports "no CUDA device".
//
// Invariants:
// - A failed cudart call throws glass::Error naming the call, the device and cudart's
//   message, after clearing cudart's per-thread last error, so one failure is reported
//   once and not again by an unrelated later call. malloc and host_alloc instead turn
//   cudaErrorMemoryAllocation into null (the caching allocators free their cache and retry).
// - Calls that act on "the current device" run inside a DeviceScope that makes the device
//   they were given current and then restores the thread's previous one, so this runtime
//   never changes which device the calling thread sees.
// - Every stream is created non-blocking, the default streams too (one per device, made
//   on first use), so no stream ever synchronizes implicitly with another (runtime.h).
#include "cuda/gpu/gpu_runtime.h"

#include <cuda_runtime.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace glass::cuda::gpu {
namespace {

using ::glass::detail::str_cat;

// ---- errors -----------------------------------------------------------------------------

constexpr int kNoDevice = -1;  // for calls that name no device (an event, host memory)

// Errors a kernel leaves behind: they surface at a later, unrelated call (a sync, a
// copy), and the context stays unusable ("sticky") until the process exits.
bool is_kernel_error(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorLaunchTimeout: return true;
    default: return false;
  }
}

// Throws glass::Error for a failed call; `what` is the call with its arguments.
[[noreturn]] void fail(cudaError_t err, int device, const std::string& what,
                       const std::string& hint = "") {
  (void)cudaGetLastError();  // this failure is reported here, once
  std::string message =
      str_cat(what, device >= 0 ? str_cat(" on cuda:", device) : "",
              " failed: ", cudaGetErrorString(err), " (", cudaGetErrorName(err), ")");
  if (!hint.empty()) {
    message += str_cat(". ", hint);
  } else if (is_kernel_error(err)) {
    message +=
        ". A kernel queued earlier failed: CUDA reports a kernel's error at the next call that "
        "waits for it, not at the launch. Run with CUDA_LAUNCH_BLOCKING=1 to stop at the launch "
        "that failed; the device is unusable until the process exits";
  }
  ::glass::detail::throw_error(message);
}

// The message is assembled only on failure: these wrap calls on the hot path.
template <class... Args>
void check(cudaError_t err, int device, const Args&... what) {
  if (err != cudaSuccess) [[unlikely]] {
    fail(err, device, str_cat(what...));
  }
}

cudaStream_t as_stream(StreamHandle s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(EventHandle e) { return static_cast<cudaEvent_t>(e); }

// The device of a stream for an error message, where a second failure must not throw.
int device_for_message(StreamHandle stream) {
  int device = kNoDevice;
  if (cudaStreamGetDevice(as_stream(stream), &device) != cudaSuccess) {
    (void)cudaGetLastError();
    device = kNoDevice;
  }
  return device;
}

// ---- the current device, and conversions ------------------------------------------------

// Makes `device` the calling thread's current device for the scope of one call, then
// restores the previous one. Since CUDA 12, cudaSetDevice also creates the device's
// context (hundreds of MiB), so a scope that would change nothing sets nothing.
class DeviceScope {
 public:
  explicit DeviceScope(int device) : device_(device) {
    check(cudaGetDevice(&previous_), device, "cudaGetDevice()");
    if (previous_ != device_)
      check(cudaSetDevice(device_), device_, "cudaSetDevice(", device_, ")");
  }
  ~DeviceScope() {
    if (previous_ != device_ && cudaSetDevice(previous_) != cudaSuccess) {
      (void)cudaGetLastError();  // a destructor cannot throw; the next call reports it
    }
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int device_;
  int previous_ = 0;
};

cudaMemcpyKind to_cuda(CopyKind kind) {
  switch (kind) {
    case CopyKind::HostToDevice: return cudaMemcpyHostToDevice;
    case CopyKind::DeviceToHost: return cudaMemcpyDeviceToHost;
    case CopyKind::DeviceToDevice: return cudaMemcpyDeviceToDevice;
  }
  GLASS_INTERNAL_ASSERT(false, "unknown CopyKind ", static_cast<int>(kind));
}

DeviceProperties to_properties(const cudaDeviceProp& p) {
  DeviceProperties out;
  out.name = p.name;
  out.total_memory = static_cast<int64_t>(p.totalGlobalMem);
  out.multi_processor_count = p.multiProcessorCount;
  out.max_threads_per_block = p.maxThreadsPerBlock;
  out.max_block_dim = Dim3(p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
  out.max_grid_dim = Dim3(p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
  out.shared_mem_per_block = p.sharedMemPerBlock;  // without the opt-in to more
  out.warp_size = p.warpSize;
  out.major = p.major;
  out.minor = p.minor;
  return out;
}

// cudaPointerGetAttributes for a pointer that may be anything: cudart answers
// "unregistered" for ordinary host memory, and an error for pointers it cannot classify.
cudaPointerAttributes attributes_of(const void* ptr) {
  cudaPointerAttributes attr{};
  attr.type = cudaMemoryTypeUnregistered;
  attr.device = kNoDevice;
  if (ptr == nullptr) return attr;
  cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err == cudaErrorInvalidValue) {
    (void)cudaGetLastError();
    attr.type = cudaMemoryTypeUnregistered;
    return attr;
  }
  check(err, kNoDevice, "cudaPointerGetAttributes(", ptr, ")");
  return attr;
}

// ---- the runtime ------------------------------------------------------------------------

class GpuRuntime final : public Runtime {
 public:
  explicit GpuRuntime(std::vector<DeviceProperties> properties)
      : properties_(std::move(properties)),
        default_streams_(std::make_unique<DefaultStream[]>(properties_.size())) {}

  bool is_simulated() const override { return false; }

  // ---- devices
  int device_count() override { return static_cast<int>(properties_.size()); }

  const DeviceProperties& properties(int device) override {
    check_device(device, "properties");
    return properties_[device];
  }

  void device_synchronize(int device) override {
    check_device(device, "device_synchronize");
    DeviceScope scope(device);
    check(cudaDeviceSynchronize(), device, "cudaDeviceSynchronize()");
  }

  // ---- memory
  void* malloc(int device, size_t nbytes) override {
    check_device(device, "malloc");
    DeviceScope scope(device);
    void* ptr = nullptr;
    cudaError_t err = cudaMalloc(&ptr, nbytes);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: the allocator frees its cache and retries
      return nullptr;
    }
    check(err, device, "cudaMalloc(", nbytes, " bytes)");
    return ptr;
  }

  void free(int device, void* ptr) override {
    if (ptr == nullptr) return;
    check_device(device, "free");
    DeviceScope scope(device);
    // cudaFree first waits for all work on the device: one reason the caching allocator
    // keeps freed blocks instead of calling this.
    check(cudaFree(ptr), device, "cudaFree(", ptr, ")");
  }

  void* host_alloc(size_t nbytes) override {
    void* ptr = nullptr;
    // Default flags: with unified addressing (every 64-bit platform) pinned memory is
    // usable by every device, and cudaHostAllocPortable adds nothing.
    cudaError_t err = cudaHostAlloc(&ptr, nbytes, cudaHostAllocDefault);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    check(err, kNoDevice, "cudaHostAlloc(", nbytes, " bytes)");
    return ptr;
  }

  void host_free(void* ptr) override {
    if (ptr == nullptr) return;
    check(cudaFreeHost(ptr), kNoDevice, "cudaFreeHost(", ptr, ")");
  }

  // Any pointer into a cudaHostAlloc block, not only its start, is "host" memory to cudart.
  bool is_pinned(const void* host_ptr) override {
    return attributes_of(host_ptr).type == cudaMemoryTypeHost;
  }

  int device_of(const void* ptr) override {
    cudaPointerAttributes attr = attributes_of(ptr);
    bool on_device = attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
    return on_device ? attr.device : kNoDevice;
  }

  // ---- streams
  StreamHandle default_stream(int device) override {
    check_device(device, "default_stream");
    DefaultStream& d = default_streams_[device];
    std::call_once(d.once, [&] { d.handle = create_stream(device); });
    return d.handle;
  }

  StreamHandle create_stream(int device) override {
    check_device(device, "create_stream");
    DeviceScope scope(device);
    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), device,
          "cudaStreamCreateWithFlags(cudaStreamNonBlocking)");
    return stream;
  }

  void destroy_stream(StreamHandle stream) override {
    for (size_t d = 0; d < properties_.size(); ++d) {
      GLASS_CHECK(stream != default_streams_[d].handle, "destroy_stream(): stream ", stream,
                  " is the default stream of cuda:", d, ", which lives as long as the process");
    }
    cudaError_t err = cudaStreamDestroy(as_stream(stream));
    if (err != cudaSuccess)
      fail(err, device_for_message(stream), str_cat("cudaStreamDestroy(", stream, ")"));
  }

  int stream_device(StreamHandle stream) override {
    int device = kNoDevice;
    check(cudaStreamGetDevice(as_stream(stream), &device), kNoDevice, "cudaStreamGetDevice(",
          stream, ")");
    return device;
  }

  void stream_synchronize(StreamHandle stream) override {
    cudaError_t err = cudaStreamSynchronize(as_stream(stream));
    if (err != cudaSuccess) {
      fail(err, device_for_message(stream), str_cat("cudaStreamSynchronize(", stream, ")"));
    }
  }

  bool stream_query(StreamHandle stream) override {
    cudaError_t err = cudaStreamQuery(as_stream(stream));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();  // "not yet" is an answer, not an error
      return false;
    }
    if (err != cudaSuccess) {
      fail(err, device_for_message(stream), str_cat("cudaStreamQuery(", stream, ")"));
    }
    return true;
  }

  // ---- events
  EventHandle event_create(int device, bool enable_timing) override {
    check_device(device, "event_create");
    DeviceScope scope(device);
    cudaEvent_t event = nullptr;
    check(
        cudaEventCreateWithFlags(&event, enable_timing ? cudaEventDefault : cudaEventDisableTiming),
        device, "cudaEventCreateWithFlags(",
        enable_timing ? "cudaEventDefault" : "cudaEventDisableTiming", ")");
    return event;
  }

  void event_destroy(EventHandle event) override {
    check(cudaEventDestroy(as_event(event)), kNoDevice, "cudaEventDestroy(", event, ")");
  }

  void event_record(EventHandle event, StreamHandle stream) override {
    const int device = stream_device(stream);
    DeviceScope scope(device);
    cudaError_t err = cudaEventRecord(as_event(event), as_stream(stream));
    if (err != cudaSuccess) {
      fail(err, device, str_cat("cudaEventRecord(", event, ", stream ", stream, ")"),
           err == cudaErrorInvalidResourceHandle
               ? "An event can only be recorded on a stream of the device it was created on"
               : "");
    }
  }

  void stream_wait_event(StreamHandle stream, EventHandle event) override {
    const int device = stream_device(stream);
    DeviceScope scope(device);
    check(cudaStreamWaitEvent(as_stream(stream), as_event(event), 0), device,
          "cudaStreamWaitEvent(stream ", stream, ", ", event, ")");
  }

  bool event_query(EventHandle event) override {
    cudaError_t err = cudaEventQuery(as_event(event));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    check(err, kNoDevice, "cudaEventQuery(", event, ")");
    return true;
  }

  void event_synchronize(EventHandle event) override {
    check(cudaEventSynchronize(as_event(event)), kNoDevice, "cudaEventSynchronize(", event, ")");
  }

  float event_elapsed_ms(EventHandle start, EventHandle end) override {
    float ms = 0;
    cudaError_t err = cudaEventElapsedTime(&ms, as_event(start), as_event(end));
    if (err == cudaSuccess) return ms;
    std::string hint;
    if (err == cudaErrorNotReady) {
      hint = "One of the events has not completed yet: call synchronize() on the end event first";
    } else if (err == cudaErrorInvalidResourceHandle) {
      hint =
          "Both events must be created with timing enabled (CUDAEvent(kEventDefault)), be on the "
          "same device, and have been recorded";
    }
    fail(err, kNoDevice, str_cat("cudaEventElapsedTime(", start, ", ", end, ")"), hint);
  }

  // ---- copies
  void memcpy_async(void* dst, const void* src, size_t nbytes, CopyKind kind,
                    StreamHandle stream) override {
    if (nbytes == 0) return;
    const int device = stream_device(stream);
    // runtime.h promises that a copy into pageable memory has finished when this call
    // returns (the caller may read dst next). cudart only says such a copy "might be
    // synchronous", so the stream is synchronized here. A pageable source needs nothing:
    // cudart stages it through its own pinned buffer before returning.
    const bool wait = kind == CopyKind::DeviceToHost && !is_pinned(dst);
    {
      DeviceScope scope(device);
      check(cudaMemcpyAsync(dst, src, nbytes, to_cuda(kind), as_stream(stream)), device,
            "cudaMemcpyAsync(", dst, ", ", src, ", ", nbytes, " bytes, ", to_string(kind),
            ", stream ", stream, ")");
    }
    if (wait) stream_synchronize(stream);
  }

  void memset_async(void* dst, int value, size_t nbytes, StreamHandle stream) override {
    if (nbytes == 0) return;
    const int device = stream_device(stream);
    DeviceScope scope(device);
    check(cudaMemsetAsync(dst, value, nbytes, as_stream(stream)), device, "cudaMemsetAsync(", dst,
          ", ", value, ", ", nbytes, " bytes, stream ", stream, ")");
  }

  // ---- code built at run time: the runtime's library API (CUDA 12+), no driver API
#if CUDART_VERSION >= 12000
  ModuleHandle module_load(int device, const std::string& image) override {
    check_device(device, "module_load");
    DeviceScope scope(device);
    cudaLibrary_t library = nullptr;
    check(cudaLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
          device, "cudaLibraryLoadData(", image.size(), " bytes)");
    return library;
  }

  void module_unload(ModuleHandle module) override {
    check(cudaLibraryUnload(static_cast<cudaLibrary_t>(module)), kNoDevice, "cudaLibraryUnload(",
          module, ")");
  }

  KernelHandle module_kernel(ModuleHandle module, const std::string& name) override {
    cudaKernel_t kernel = nullptr;
    check(cudaLibraryGetKernel(&kernel, static_cast<cudaLibrary_t>(module), name.c_str()),
          kNoDevice, "cudaLibraryGetKernel(", name, ")");
    return kernel;
  }

  void module_launch(KernelHandle kernel, const char* name, Dim3 grid, Dim3 block,
                     size_t dynamic_shared_bytes, StreamHandle stream, void** args) override {
    const int device = stream_device(stream);
    check_launch(properties_[device], name, grid, block, dynamic_shared_bytes);
    DeviceScope scope(device);
    // A cudaKernel_t goes where cudaLaunchKernel takes a kernel's address (CUDA 12+).
    check(cudaLaunchKernel(static_cast<const void*>(kernel), dim3(grid.x, grid.y, grid.z),
                           dim3(block.x, block.y, block.z), args, dynamic_shared_bytes,
                           as_stream(stream)),
          device, "launch of kernel '", name, "'");
  }
#else
  ModuleHandle module_load(int, const std::string&) override {
    GLASS_CHECK(false,
                "module_load: loading code built at run time needs CUDA 12's library API; "
                "this build has CUDA ",
                CUDART_VERSION / 1000, ".", CUDART_VERSION % 1000 / 10);
    return nullptr;
  }
#endif

 private:
  void check_device(int device, const char* call) const {
    const int n = static_cast<int>(properties_.size());
    GLASS_CHECK(device >= 0 && device < n, call, "(): cuda:", device, " does not exist; this ",
                "machine has ", n, " CUDA device", n == 1 ? "" : "s", " (cuda:0 to cuda:", n - 1,
                ")");
  }

  // A device's default stream, made on first use: making it creates the device's context.
  struct DefaultStream {
    std::once_flag once;
    std::atomic<StreamHandle> handle{nullptr};
  };

  const std::vector<DeviceProperties> properties_;    // read once, at start-up
  std::unique_ptr<DefaultStream[]> default_streams_;  // one per device
};

// ---- start-up: is there a GPU? ----------------------------------------------------------

// Why cudaGetDeviceCount failed, in words a student can act on.
std::string explain_no_driver(cudaError_t err) {
  std::string why = str_cat("cudaGetDeviceCount() failed: ", cudaGetErrorString(err), " (",
                            cudaGetErrorName(err), ")");
  int driver = 0, runtime = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  (void)cudaGetLastError();
  auto version = [](int v) { return str_cat(v / 1000, ".", (v % 1000) / 10); };
  if (err == cudaErrorInsufficientDriver && driver == 0) {
    why += "; no NVIDIA driver is installed (libcuda.so.1 was not found)";
  } else if (err == cudaErrorInsufficientDriver) {
    why +=
        str_cat("; the NVIDIA driver supports CUDA ", version(driver),
                ", older than this build's CUDA runtime ", version(runtime), ": update the driver");
  }
  return why;
}

struct Probe {
  Runtime* runtime = nullptr;
  std::string why_not;
};

Probe probe() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    Probe p;
    p.why_not = explain_no_driver(err);
    return p;
  }
  if (count == 0) {
    return {nullptr, "cudaGetDeviceCount() found no CUDA device (is CUDA_VISIBLE_DEVICES empty?)"};
  }
  std::vector<DeviceProperties> properties;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    err = cudaGetDeviceProperties(&prop, d);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      return {nullptr, str_cat("cudaGetDeviceProperties(cuda:", d, ") failed: ",
                               cudaGetErrorString(err), " (", cudaGetErrorName(err), ")")};
    }
    properties.push_back(to_properties(prop));
  }
  // Never deleted: tensors destroyed during static destruction still free their memory
  // through it, and the driver tears the contexts down at exit anyway.
  return {new GpuRuntime(std::move(properties)), ""};
}

}  // namespace

Runtime* gpu_runtime(std::string* why_not) {
  static const Probe p = probe();  // one probe per process; thread-safe initialization
  if (p.runtime == nullptr && why_not != nullptr) *why_not = p.why_not;
  return p.runtime;
}

}  // namespace glass::cuda::gpu
