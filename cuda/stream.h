// cuda/stream.h — streams, events and the current device, in libtorch's names.
//
// Code ports by renaming c10::cuda::, at::cuda:: and torch::cuda:: to glass::cuda::.
//
// A stream is an in-order queue of device work; the host enqueues and returns at once.
// Every op on a CUDA tensor goes to the *current stream* of the tensor's device
// (getCurrentCUDAStream), which is per host thread and starts as the device's default
// stream. Work on two streams may run concurrently; an event recorded on one and waited
// on by the other (CUDAEvent::record / block) orders them.
//
// Invariant: a CUDAStream is a value (device index + runtime handle) and never owns the
// stream: the default stream and the pool's streams live as long as the process.
#pragma once

#include <cstdint>
#include <ostream>

#include "core/device.h"
#include "cuda/runtime.h"

namespace glass::cuda {

using DeviceIndex = int8_t;
using StreamId = int64_t;

// ---- the current device (cudaGetDevice / cudaSetDevice), per host thread
int current_device();
void set_device(int device);
// Sets the device for a scope and restores the previous one (c10::cuda::CUDAGuard).
class CUDAGuard {
 public:
  explicit CUDAGuard(int device);
  explicit CUDAGuard(Device device);
  ~CUDAGuard();
  CUDAGuard(const CUDAGuard&) = delete;
  CUDAGuard& operator=(const CUDAGuard&) = delete;

 private:
  int previous_;
};
using DeviceGuard = CUDAGuard;

class CUDAStream {
 public:
  CUDAStream(DeviceIndex device, StreamId id, StreamHandle handle)
      : device_(device), id_(id), handle_(handle) {}

  DeviceIndex device_index() const { return device_; }
  Device device() const { return Device(kCUDA, device_); }
  // 0 for a device's default stream; pool streams count from 1.
  StreamId id() const { return id_; }
  StreamHandle stream() const { return handle_; }
  operator StreamHandle() const { return handle_; }  // NOLINT: as cudaStream_t converts

  // True when all work queued on the stream has completed.
  bool query() const;
  // Blocks the host until all work queued on the stream has completed.
  void synchronize() const;

  bool operator==(const CUDAStream& o) const { return handle_ == o.handle_; }
  bool operator!=(const CUDAStream& o) const { return !(*this == o); }

 private:
  DeviceIndex device_;
  StreamId id_;
  StreamHandle handle_;
};

std::ostream& operator<<(std::ostream& os, const CUDAStream& s);  // "stream 1 on cuda:0"

// device -1 means the current device.
CUDAStream getDefaultCUDAStream(DeviceIndex device = -1);
CUDAStream getCurrentCUDAStream(DeviceIndex device = -1);
// The pool: 32 streams per device (and 32 high-priority ones), handed out round-robin.
CUDAStream getStreamFromPool(bool isHighPriority = false, DeviceIndex device = -1);
// Makes s the current stream of its device, for this host thread.
void setCurrentCUDAStream(CUDAStream s);

// Sets the current stream of the stream's device (and the current device) for a scope.
class CUDAStreamGuard {
 public:
  explicit CUDAStreamGuard(CUDAStream s);
  ~CUDAStreamGuard();
  CUDAStreamGuard(const CUDAStreamGuard&) = delete;
  CUDAStreamGuard& operator=(const CUDAStreamGuard&) = delete;
  CUDAStream original_stream() const { return original_; }
  CUDAStream current_stream() const { return current_; }

 private:
  CUDAStream original_, current_;
  int original_device_;
};

// cudaEventCreateWithFlags's flags: events do not record time unless asked for.
inline constexpr unsigned kEventDefault = 0x0;        // cudaEventDefault: timing on
inline constexpr unsigned kEventDisableTiming = 0x2;  // cudaEventDisableTiming

// An event marks a point in a stream. Created lazily on the first record(), on the
// recording stream's device; afterwards it may only be recorded on that device.
class CUDAEvent {
 public:
  explicit CUDAEvent(unsigned flags = kEventDisableTiming) : flags_(flags) {}
  ~CUDAEvent();
  CUDAEvent(const CUDAEvent&) = delete;
  CUDAEvent& operator=(const CUDAEvent&) = delete;
  CUDAEvent(CUDAEvent&& other) noexcept;
  CUDAEvent& operator=(CUDAEvent&& other) noexcept;

  bool isCreated() const { return event_ != nullptr; }
  DeviceIndex device_index() const { return device_; }
  EventHandle event() const { return event_; }

  // Records the event at the current end of the stream (the current stream by default).
  void record();
  void record(const CUDAStream& stream);
  // Records only if the event was never recorded.
  void recordOnce(const CUDAStream& stream);
  // Makes work queued on `stream` after this call wait for the event (cudaStreamWaitEvent).
  // The host does not wait. An event never recorded is a no-op, as in libtorch.
  void block(const CUDAStream& stream);
  // True when the work before the event has completed (or it was never recorded).
  bool query() const;
  void synchronize() const;
  // Milliseconds from this event to `end`; both recorded with kEventDefault and complete.
  float elapsed_time(const CUDAEvent& end) const;

 private:
  unsigned flags_;
  bool was_recorded_ = false;
  DeviceIndex device_ = -1;
  EventHandle event_ = nullptr;
};

// Waits for all work on every stream of a device (-1: the current device) to finish.
void synchronize(int64_t device_index = -1);

}  // namespace glass::cuda
