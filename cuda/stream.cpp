// cuda/stream.cpp — the current device, the current stream, the stream pool, events.
//
// The current device and the current stream are per host thread, as in CUDA and PyTorch:
// one thread setting a stream never changes what another thread's ops use. The pool's
// streams are created on first use and live for the process.
#include "cuda/stream.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "cuda/device_error.h"

namespace glass::cuda {
namespace {

constexpr int kPoolSize = 32;

int checked_device(int device) {
  int count = runtime().device_count();
  GLASS_CHECK(device >= 0 && device < count, "cuda:", device, " does not exist; this machine has ",
              count, " CUDA device", (count == 1 ? "" : "s"));
  return device;
}

thread_local int t_current_device = 0;

// A device's streams: the default one and the two pools, created once.
struct DeviceStreams {
  std::once_flag once;
  StreamHandle default_stream = nullptr;
  std::array<StreamHandle, kPoolSize> pool{};
  std::array<StreamHandle, kPoolSize> high_priority_pool{};
  std::atomic<uint32_t> next{0}, next_high{0};
};

// Room for as many devices as a machine may have; entries are filled lazily.
constexpr int kMaxDevices = 64;

DeviceStreams& streams_of(int device) {
  static std::array<DeviceStreams, kMaxDevices> all;
  GLASS_CHECK(device < kMaxDevices, "cuda:", device, " is beyond the ", kMaxDevices,
              " devices glasstorch supports");
  DeviceStreams& d = all[device];
  std::call_once(d.once, [&] {
    Runtime& rt = runtime();
    d.default_stream = rt.default_stream(device);
    // Created in id order (the pool, then the high-priority pool), so that a runtime
    // which numbers streams as they are made (the simulator's timeline does) agrees with
    // CUDAStream::id().
    for (int i = 0; i < kPoolSize; ++i) d.pool[i] = rt.create_stream(device);
    for (int i = 0; i < kPoolSize; ++i) d.high_priority_pool[i] = rt.create_stream(device);
  });
  return d;
}

// Per thread, per device: the current stream (null = the default stream).
struct CurrentStream {
  StreamHandle handle = nullptr;
  StreamId id = 0;
};
thread_local std::array<CurrentStream, kMaxDevices> t_current_stream{};

int resolve(DeviceIndex device) {
  return checked_device(device < 0 ? current_device() : static_cast<int>(device));
}

}  // namespace

// ---- the current device ------------------------------------------------------------------

int current_device() { return t_current_device; }

void set_device(int device) { t_current_device = checked_device(device); }

CUDAGuard::CUDAGuard(int device) : previous_(current_device()) { set_device(device); }

CUDAGuard::CUDAGuard(Device device) : previous_(current_device()) {
  GLASS_CHECK(device.is_cuda(), "CUDAGuard: ", device, " is not a CUDA device");
  if (device.index() >= 0) set_device(device.index());
}

CUDAGuard::~CUDAGuard() { t_current_device = previous_; }

// ---- streams ------------------------------------------------------------------------------

bool CUDAStream::query() const { return runtime().stream_query(handle_); }

void CUDAStream::synchronize() const {
  runtime().stream_synchronize(handle_);
  check_device_errors_after_stream_sync(device_, handle_);  // cuda/device_error.h
}

std::ostream& operator<<(std::ostream& os, const CUDAStream& s) {
  return os << "stream " << s.id() << " on cuda:" << int(s.device_index());
}

CUDAStream getDefaultCUDAStream(DeviceIndex device) {
  int d = resolve(device);
  return CUDAStream(static_cast<DeviceIndex>(d), 0, streams_of(d).default_stream);
}

CUDAStream getCurrentCUDAStream(DeviceIndex device) {
  int d = resolve(device);
  const CurrentStream& c = t_current_stream[d];
  if (c.handle == nullptr) return getDefaultCUDAStream(static_cast<DeviceIndex>(d));
  return CUDAStream(static_cast<DeviceIndex>(d), c.id, c.handle);
}

CUDAStream getStreamFromPool(bool isHighPriority, DeviceIndex device) {
  int d = resolve(device);
  DeviceStreams& s = streams_of(d);
  // Ids: 1..32 for the pool, 33..64 for the high-priority pool.
  if (isHighPriority) {
    uint32_t i = s.next_high.fetch_add(1) % kPoolSize;
    return CUDAStream(static_cast<DeviceIndex>(d), 1 + kPoolSize + i, s.high_priority_pool[i]);
  }
  uint32_t i = s.next.fetch_add(1) % kPoolSize;
  return CUDAStream(static_cast<DeviceIndex>(d), 1 + i, s.pool[i]);
}

void setCurrentCUDAStream(CUDAStream s) {
  int d = checked_device(s.device_index());
  t_current_stream[d] = CurrentStream{s.stream(), s.id()};
}

CUDAStreamGuard::CUDAStreamGuard(CUDAStream s)
    : original_(getCurrentCUDAStream(s.device_index())),
      current_(s),
      original_device_(current_device()) {
  set_device(s.device_index());
  setCurrentCUDAStream(s);
}

CUDAStreamGuard::~CUDAStreamGuard() {
  setCurrentCUDAStream(original_);
  t_current_device = original_device_;
}

// ---- events -------------------------------------------------------------------------------

CUDAEvent::~CUDAEvent() {
  if (event_ != nullptr) {
    try {
      runtime().event_destroy(event_);
    } catch (...) {
      // A destructor must not throw; a sticky device error is reported by the next call.
    }
  }
}

CUDAEvent::CUDAEvent(CUDAEvent&& other) noexcept { *this = std::move(other); }

CUDAEvent& CUDAEvent::operator=(CUDAEvent&& other) noexcept {
  if (this != &other) {
    std::swap(flags_, other.flags_);
    std::swap(was_recorded_, other.was_recorded_);
    std::swap(device_, other.device_);
    std::swap(event_, other.event_);
  }
  return *this;
}

void CUDAEvent::record() { record(getCurrentCUDAStream()); }

void CUDAEvent::record(const CUDAStream& stream) {
  if (event_ == nullptr) {
    event_ = runtime().event_create(stream.device_index(), (flags_ & kEventDisableTiming) == 0);
    device_ = stream.device_index();
  }
  GLASS_CHECK(device_ == stream.device_index(),
              "CUDAEvent::record(): the event belongs to cuda:", int(device_),
              " but the stream is on cuda:", int(stream.device_index()),
              "; an event can only be recorded on streams of its own device");
  runtime().event_record(event_, stream.stream());
  was_recorded_ = true;
}

void CUDAEvent::recordOnce(const CUDAStream& stream) {
  if (!was_recorded_) record(stream);
}

void CUDAEvent::block(const CUDAStream& stream) {
  if (!was_recorded_) return;
  GLASS_CHECK(device_ == stream.device_index(),
              "CUDAEvent::block(): the event was recorded on cuda:", int(device_),
              " but the waiting stream is on cuda:", int(stream.device_index()),
              "; to order work across devices, record an event on the waiting device after a "
              "synchronize, or copy through one device");
  runtime().stream_wait_event(stream.stream(), event_);
}

bool CUDAEvent::query() const { return !was_recorded_ || runtime().event_query(event_); }

void CUDAEvent::synchronize() const {
  if (!was_recorded_) return;
  runtime().event_synchronize(event_);
  check_device_errors_after_event_sync(device_);
}

float CUDAEvent::elapsed_time(const CUDAEvent& end) const {
  GLASS_CHECK((flags_ & kEventDisableTiming) == 0 && (end.flags_ & kEventDisableTiming) == 0,
              "CUDAEvent::elapsed_time(): both events must be created with timing enabled "
              "(CUDAEvent(glass::cuda::kEventDefault)); the default disables timing");
  GLASS_CHECK(was_recorded_ && end.was_recorded_,
              "CUDAEvent::elapsed_time(): both events must be recorded first");
  return runtime().event_elapsed_ms(event_, end.event_);
}

void synchronize(int64_t device_index) {
  int d = resolve(static_cast<DeviceIndex>(device_index));
  runtime().device_synchronize(d);
  check_device_errors_after_device_sync(d);
}

}  // namespace glass::cuda
