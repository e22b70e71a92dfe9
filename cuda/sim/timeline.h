// cuda/sim/timeline.h — every operation the simulated GPU ran, as nsys would show it.
//
// Each kernel, copy, memset and event operation leaves one record: where it ran (device,
// stream, engine), when the host enqueued it and got control back, when it started and
// ended, and what it moved (bytes, pinned or pageable) or launched (grid, block). The
// records are what lesson 08 draws: "the CPU enqueues and returns" is the gap between a
// record's returned_ns and its end_ns. The Chrome trace export (chrome://tracing, or
// ui.perfetto.dev) has one process per device with a track per stream and per engine,
// and a "host" process whose track holds the enqueue marks and the spans the host spent
// staging or waiting.
//
// Invariant: records are pushed when an operation completes and kept in a ring of the
// last `capacity` (older ones are dropped and counted); records() returns them in enqueue
// order; an operation enqueued before clear() never appears after it. Thread-safe; a
// push is one move under a mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/runtime.h"
#include "cuda/sim/kernel_stats.h"

namespace glass::cuda::sim {

// Where an operation runs. Event records and waits need no engine: they complete in the
// stream itself, when the operations before them (and, for a wait, the event) have.
enum class Engine : uint8_t { Compute, CopyHtoD, CopyDtoH, None };
enum class OpKind : uint8_t { Kernel, Copy, Memset, Event };
const char* to_string(Engine engine);  // "compute", "copy HtoD", "copy DtoH", "none"
const char* to_string(OpKind kind);    // "kernel", "copy", "memset", "event"

struct TimelineRecord {
  uint64_t seq = 0;  // enqueue order, process-wide
  int device = 0;
  int64_t stream = 0;  // the stream's id on its device; 0 is the default stream
  Engine engine = Engine::None;
  OpKind kind = OpKind::Kernel;
  std::string name;  // the kernel's name, "HtoD 4.0 KiB", "memset 1.0 MiB", "record event 2"
  // Nanoseconds of the steady clock since the simulator started.
  int64_t enqueue_ns = 0;   // the host called (before staging a pageable source)
  int64_t returned_ns = 0;  // the call handed control back to the host
  int64_t start_ns = 0;     // the engine began it
  int64_t end_ns = 0;       // it completed
  uint64_t bytes = 0;       // copies and memsets
  Dim3 grid, block;         // kernels
  CopyKind copy_kind = CopyKind::DeviceToDevice;  // copies
  bool pinned = false;                            // a copy whose host side is pinned memory
  bool host_waited = false;  // the host blocked until it completed (pageable DtoH)
  // Kernels launched while counting was on (kernel_stats.h): what they moved and did.
  bool has_stats = false;
  KernelStats stats;
};

class Timeline {
 public:
  explicit Timeline(size_t capacity = size_t{1} << 20);

  void push(TimelineRecord record);
  std::vector<TimelineRecord> records() const;
  // Forgets every record, and every operation with seq < first_seq still to complete.
  void clear(uint64_t first_seq);
  uint64_t dropped() const;  // records pushed out of the ring since the last clear

  std::string chrome_trace_json() const;
  void write_chrome_trace(const std::string& path) const;

 private:
  mutable std::mutex mutex_;
  size_t capacity_;
  std::vector<TimelineRecord> ring_;
  size_t next_ = 0;  // where the next push goes once the ring is full
  uint64_t first_seq_ = 0;
  uint64_t dropped_ = 0;
};

// Nanoseconds of the steady clock since the simulator's epoch (the first call).
int64_t timeline_now_ns();

// "4.0 KiB", "512 B", "1.5 GiB": sizes as the timeline names them.
std::string format_bytes(uint64_t bytes);

}  // namespace glass::cuda::sim
