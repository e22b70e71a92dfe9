// cuda/copy.cpp — copies between the host and a device, and between two devices.
//
// The one fast path is a single memcpy of contiguous bytes of one dtype (a copy
// engine's job). Anything else — another dtype, strides, a broadcast source — is
// reduced to it: convert and compact on the side that can do it (the CPU for a host
// source, a device kernel for a device source), copy the bytes, and scatter into the
// destination's strides on its own side.
//
// Note [When a copy makes the host wait]
// As CUDA and PyTorch do:
//   * host -> device, non_blocking=false: the host waits until the copy has finished
//     (the stream is synchronized, so earlier work on it finishes too);
//   * device -> host into pageable memory: always waits (the bytes must be there when
//     the call returns — this is why item(), printing and to(kCPU) are sync points);
//   * non_blocking=true with pinned host memory: queued, the call returns at once; the
//     pinned block is not reused until the copy is done (host_allocator record_event);
//   * non_blocking=true with pageable memory: host -> device returns once the source is
//     staged; device -> host still waits.
// lessons/08 and cuda/README.md list every place the host waits.
#include "cuda/copy.h"

#include "core/error.h"
#include "core/ops/factories.h"
#include "cuda/host_allocator.h"
#include "cuda/runtime.h"
#include "cuda/stream.h"

namespace glass::cuda {
namespace {

// Tells the pinned allocator that a queued copy uses the block behind `host`.
void note_pinned_use(const Tensor& host, const CUDAStream& stream) {
  host_allocator_record_event(host.storage().data(), stream);
}

void host_to_device(const Tensor& dst, const Tensor& src, bool non_blocking) {
  if (dst.dtype() != src.dtype() || !src.is_contiguous()) {
    // Convert and compact on the CPU, then copy that; the temporary is pageable, so the
    // bytes are staged before the call returns and it may die right after.
    return host_to_device(dst, src.to(dst.dtype()).contiguous(), non_blocking);
  }
  if (!dst.is_contiguous()) {
    Tensor staging = empty(dst.sizes(), TensorOptions().dtype(dst.dtype()).device(dst.device()));
    host_to_device(staging, src, non_blocking);
    Tensor(dst).copy_(staging);  // a device kernel, queued on the same stream
    return;
  }
  CUDAGuard guard(dst.device());
  const CUDAStream stream = getCurrentCUDAStream(static_cast<DeviceIndex>(dst.device().index()));
  runtime().memcpy_async(dst.data_ptr(), src.data_ptr(), static_cast<size_t>(src.nbytes()),
                         CopyKind::HostToDevice, stream);
  if (!non_blocking) {
    stream.synchronize();
  } else if (src.is_pinned()) {
    note_pinned_use(src, stream);
  }
}

void device_to_host(const Tensor& dst, const Tensor& src, bool non_blocking) {
  if (dst.dtype() != src.dtype() || !src.is_contiguous()) {
    // Convert and compact on the device (a kernel), then copy the bytes.
    return device_to_host(dst, src.to(dst.dtype()).contiguous(), non_blocking);
  }
  if (!dst.is_contiguous()) {
    // The scatter into dst's strides runs on the CPU, so the bytes must have arrived.
    Tensor staging = empty(dst.sizes(), TensorOptions().dtype(dst.dtype()));
    device_to_host(staging, src, false);
    Tensor(dst).copy_(staging);
    return;
  }
  CUDAGuard guard(src.device());
  const CUDAStream stream = getCurrentCUDAStream(static_cast<DeviceIndex>(src.device().index()));
  runtime().memcpy_async(dst.data_ptr(), src.data_ptr(), static_cast<size_t>(src.nbytes()),
                         CopyKind::DeviceToHost, stream);
  if (non_blocking && dst.is_pinned()) {
    note_pinned_use(dst, stream);
  } else {
    stream.synchronize();
  }
}

// Orders `later` after everything queued so far on `earlier` (streams may be on two
// devices: cudaStreamWaitEvent allows it).
void order_after(const CUDAStream& earlier, const CUDAStream& later) {
  Runtime& rt = runtime();
  EventHandle e = rt.event_create(earlier.device_index(), false);
  rt.event_record(e, earlier.stream());
  rt.stream_wait_event(later.stream(), e);
  rt.event_destroy(e);
}

void device_to_device(const Tensor& dst, const Tensor& src) {
  if (dst.dtype() != src.dtype() || !src.is_contiguous()) {
    return device_to_device(dst, src.to(dst.dtype()).contiguous());
  }
  if (!dst.is_contiguous()) {
    Tensor staging = empty(dst.sizes(), TensorOptions().dtype(dst.dtype()).device(dst.device()));
    device_to_device(staging, src);
    Tensor(dst).copy_(staging);
    return;
  }
  // The copy runs on the source's stream, after the destination's earlier work, and the
  // destination's stream waits for it: both tensors' users see it in stream order.
  const CUDAStream src_stream =
      getCurrentCUDAStream(static_cast<DeviceIndex>(src.device().index()));
  const CUDAStream dst_stream =
      getCurrentCUDAStream(static_cast<DeviceIndex>(dst.device().index()));
  order_after(dst_stream, src_stream);
  runtime().memcpy_async(dst.data_ptr(), src.data_ptr(), static_cast<size_t>(src.nbytes()),
                         CopyKind::DeviceToDevice, src_stream);
  order_after(src_stream, dst_stream);
}

}  // namespace

void copy_between_devices(const Tensor& dst, const Tensor& src, bool non_blocking) {
  GLASS_INTERNAL_ASSERT(dst.sizes() == src.sizes(), "copy_between_devices: shapes differ");
  if (dst.numel() == 0) return;
  if (dst.is_cuda() && src.is_cuda()) return device_to_device(dst, src);
  if (dst.is_cuda()) return host_to_device(dst, src, non_blocking);
  return device_to_host(dst, src, non_blocking);
}

}  // namespace glass::cuda
