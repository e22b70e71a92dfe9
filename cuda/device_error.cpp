// cuda/device_error.cpp — the per-stream error records and the sync-point checks.
//
// Records are 64-byte slots carved from one device allocation per 64 streams (a device
// allocation is 2 MiB-granular). In the simulator each slot is registered with the
// stream-race checker as a block of its own, as the caching allocator registers tensors,
// so two streams' records are two separate pieces of memory to it.
#include "cuda/device_error.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops/indexing.h"
#include "cuda/sim/kernel_launch.h"
#include "cuda/sim/sim_runtime.h"

namespace glass::cuda {
namespace {

constexpr size_t kRecordBytes = sizeof(unsigned long long) * kErrorWords;
constexpr size_t kSlotBytes = 64;
constexpr size_t kSlotsPerSlab = 64;
constexpr int kMaxDevices = 64;

struct StreamRecord {
  StreamHandle stream = nullptr;
  unsigned long long* words = nullptr;  // device address
  bool pending = false;                 // launches that may set it since the last check
};

struct DeviceErrors {
  std::mutex mutex;
  std::vector<StreamRecord> records;
  char* slab = nullptr;  // device address of the current slab
  size_t slab_used = kSlotsPerSlab;
  std::atomic<bool> any_pending{false};  // some record is pending (read without the lock)
};

DeviceErrors& errors_of(int device) {
  static std::array<DeviceErrors, kMaxDevices> all;
  return all[device];
}

// Op names, interned: a kernel records a number, the host turns it back into the name.
std::mutex g_names_mutex;
std::vector<std::string> g_names;

long long intern(const char* op) {
  std::lock_guard<std::mutex> lock(g_names_mutex);
  auto it = std::find(g_names.begin(), g_names.end(), op);
  if (it == g_names.end()) it = g_names.insert(g_names.end(), op);
  return static_cast<long long>(it - g_names.begin());
}

std::string name_of(unsigned long long id) {
  std::lock_guard<std::mutex> lock(g_names_mutex);
  return id < g_names.size() ? g_names[id] : std::string("a CUDA kernel");
}

unsigned long long* new_record(int device, StreamHandle stream, DeviceErrors& e) {
  Runtime& rt = runtime();
  if (e.slab_used == kSlotsPerSlab) {
    e.slab = static_cast<char*>(rt.malloc(device, kSlotBytes * kSlotsPerSlab));
    GLASS_CHECK(e.slab != nullptr, "cuda:", device, ": out of memory for device error records");
    e.slab_used = 0;
  }
  char* slot = e.slab + kSlotBytes * e.slab_used++;
  if (rt.is_simulated()) sim::simulator().register_block(slot, kSlotBytes);
  // Zeroed on the stream itself: ordered before the stream's first kernel, no host wait.
  rt.memset_async(slot, 0, kRecordBytes, stream);
  return reinterpret_cast<unsigned long long*>(slot);
}

void update_flag(DeviceErrors& e) {
  const bool any = std::any_of(e.records.begin(), e.records.end(),
                               [](const StreamRecord& r) { return r.pending; });
  e.any_pending.store(any, std::memory_order_relaxed);
}

// Reads r's record on its stream, which must be idle (the copy then waits for nothing
// else), and clears r. Returns the error message, or "" when the record is clear.
std::string take_error(int device, StreamRecord& r) {
  r.pending = false;
  std::array<unsigned long long, kErrorWords> words{};
  Runtime& rt = runtime();
  rt.memcpy_async(words.data(), r.words, kRecordBytes, CopyKind::DeviceToHost, r.stream);
  if (words[kErrorReady] == 0) return "";
  rt.memset_async(r.words, 0, kRecordBytes, r.stream);  // ordered before later kernels
  const auto as_signed = [](unsigned long long w) { return static_cast<int64_t>(w); };
  const std::string op = name_of(words[kErrorOp]);
  return index_error_message(op.c_str(), as_signed(words[kErrorIndex]), as_signed(words[kErrorDim]),
                             as_signed(words[kErrorSize])) +
         " (found by a kernel on cuda:" + std::to_string(device) +
         " and reported at the next sync point; that op's output may hold partial results)";
}

// Checks the pending records that `covered` selects; throws the first error found.
template <class Covered>
void check(int device, Covered covered) {
  if (device < 0 || device >= kMaxDevices) return;
  DeviceErrors& e = errors_of(device);
  if (!e.any_pending.load(std::memory_order_relaxed)) return;  // the common case
  std::string first;
  {
    std::lock_guard<std::mutex> lock(e.mutex);
    for (StreamRecord& r : e.records) {
      if (!r.pending || !covered(r.stream)) continue;
      std::string message = take_error(device, r);
      if (first.empty()) first = std::move(message);
    }
    update_flag(e);
  }
  if (!first.empty()) detail::throw_error(first);
}

}  // namespace

void append_accesses(const DeviceErrorSlot& slot, std::vector<sim::Access>& out) {
  out.push_back({slot.words, true});
}

DeviceErrorSlot device_error_slot(int device, const char* op, StreamHandle stream) {
  GLASS_CHECK(device >= 0 && device < kMaxDevices, "cuda:", device, " is beyond the ", kMaxDevices,
              " devices glasstorch supports");
  DeviceErrors& e = errors_of(device);
  std::lock_guard<std::mutex> lock(e.mutex);
  auto it = std::find_if(e.records.begin(), e.records.end(),
                         [&](const StreamRecord& r) { return r.stream == stream; });
  if (it == e.records.end())
    it = e.records.insert(e.records.end(),
                          StreamRecord{stream, new_record(device, stream, e), false});
  it->pending = true;
  e.any_pending.store(true, std::memory_order_relaxed);
  return DeviceErrorSlot{it->words, intern(op)};
}

void check_device_errors_after_stream_sync(int device, StreamHandle stream) {
  check(device, [&](StreamHandle s) { return s == stream; });
}

void check_device_errors_after_event_sync(int device) {
  check(device, [](StreamHandle s) { return runtime().stream_query(s); });
}

void check_device_errors_after_device_sync(int device) {
  check(device, [](StreamHandle) { return true; });
}

}  // namespace glass::cuda
