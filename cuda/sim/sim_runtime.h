// cuda/sim/sim_runtime.h — the simulated GPU, behind the Runtime interface.
//
// A CPU model of a CUDA device, not an alias for the CPU backend: device memory is its
// own arena (arena.h) that host code cannot dereference; kernels run on SM worker
// threads and copies on copy engines (engine.h), asynchronously to the host; streams are
// in-order queues ordered by events (streams.h); pinned memory is really page-locked
// (pinned.h); every operation lands on a timeline (timeline.h); and, when asked, a race
// checker verifies that streams touching the same memory are ordered (race_checker.h).
// Configured from the environment (config.h). One instance per process: simulator().
//
//   auto& sim = glass::cuda::sim::simulator();
//   void* d = sim.malloc(0, 4096);                       // device memory on cuda:0
//   auto s = sim.create_stream(0);
//   sim.memcpy_async(d, host, 4096, CopyKind::HostToDevice, s);  // staged, then returns
//   enqueue_kernel(s, launch);                           // returns before any block runs
//   sim.memcpy_async(host, d, 4096, CopyKind::DeviceToHost, s);  // pageable: waits
//   sim.write_chrome_trace("trace.json");                // open in ui.perfetto.dev
//
// Invariant: every call is thread-safe; a failed call throws glass::Error naming the call,
// the device and the values, and changes nothing (malloc and host_alloc return null
// instead, as the Runtime contract says).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda/runtime.h"
#include "cuda/sim/arena.h"
#include "cuda/sim/config.h"
#include "cuda/sim/kernel_launch.h"
#include "cuda/sim/pinned.h"
#include "cuda/sim/race_checker.h"
#include "cuda/sim/streams.h"
#include "cuda/sim/timeline.h"

namespace glass::cuda::sim {

class SimRuntime final : public Runtime {
 public:
  // Maps the arena and starts the engines. Only simulator() should call this: one
  // arena per process (address_space.h).
  explicit SimRuntime(const SimConfig& config);
  ~SimRuntime() override;
  SimRuntime(const SimRuntime&) = delete;
  SimRuntime& operator=(const SimRuntime&) = delete;

  bool is_simulated() const override { return true; }
  int device_count() override { return config_.devices; }
  const DeviceProperties& properties(int device) override;
  void device_synchronize(int device) override;

  void* malloc(int device, size_t nbytes) override;
  void free(int device, void* ptr) override;
  void* host_alloc(size_t nbytes) override;
  void host_free(void* ptr) override;
  bool is_pinned(const void* host_ptr) override;
  int device_of(const void* ptr) override;

  StreamHandle default_stream(int device) override;
  StreamHandle create_stream(int device) override;
  void destroy_stream(StreamHandle stream) override;
  int stream_device(StreamHandle stream) override;
  void stream_synchronize(StreamHandle stream) override;
  bool stream_query(StreamHandle stream) override;

  EventHandle event_create(int device, bool enable_timing) override;
  void event_destroy(EventHandle event) override;
  void event_record(EventHandle event, StreamHandle stream) override;
  void stream_wait_event(StreamHandle stream, EventHandle event) override;
  bool event_query(EventHandle event) override;
  void event_synchronize(EventHandle event) override;
  float event_elapsed_ms(EventHandle start, EventHandle end) override;

  void memcpy_async(void* dst, const void* src, size_t nbytes, CopyKind kind,
                    StreamHandle stream) override;
  void memset_async(void* dst, int value, size_t nbytes, StreamHandle stream) override;

  // ---- the simulator's own calls -------------------------------------------------------
  const SimConfig& config() const { return config_; }
  // kernel_launch.h's enqueue_kernel: checks the launch shape against properties(),
  // queues the kernel, returns before any block runs.
  void enqueue_kernel(StreamHandle stream, KernelLaunch launch);
  int64_t stream_id(StreamHandle stream);  // 0 for a device's default stream
  // Operations enqueued on the stream that have not completed (running ones included).
  size_t pending_ops(StreamHandle stream);
  size_t bytes_in_use(int device);  // reserved by malloc (2 MiB pages)

  // Test hooks. A held stream starts nothing until released (work already running
  // finishes). reset_sticky_error forgets a device's kernel error.
  void hold(StreamHandle stream);
  void release(StreamHandle stream);
  // How long a synchronize waits for another thread to release a held stream before it
  // is an error (default 10 s).
  void set_held_wait_limit(std::chrono::milliseconds limit) {
    scheduler_.set_held_wait_limit(limit);
  }
  void reset_sticky_error(int device);

  // The timeline (timeline.h): records in enqueue order, and the Chrome trace export.
  std::vector<TimelineRecord> timeline() const;
  void clear_timeline();
  std::string chrome_trace_json() const;
  void write_chrome_trace(const std::string& path) const;

  // The stream-race checker (race_checker.h): on with GLASS_SIM_CHECK=1 or this call.
  void set_race_check(bool on);
  bool race_check() const { return checker_.enabled(); }
  // The caching allocator's tensor blocks, so a race names the tensor's memory, not the
  // 2 MiB segment around it. Unregistering forgets the block's history.
  void register_block(const void* ptr, size_t nbytes);
  void unregister_block(const void* ptr);

  // Releases holds, finishes all queued work and joins the engine threads (at exit).
  void shutdown();

 private:
  Stream* stream_of(StreamHandle handle, const char* call) const;
  Event* event_of(EventHandle handle, const char* call) const;
  void check_device(int device, const char* call) const;
  void check_device_range(const void* p, size_t nbytes, const char* call, const char* what) const;
  std::shared_ptr<Op> new_op(Stream* stream, OpKind kind, Engine engine, std::string name) const;
  void host_synchronized(const VectorClock& clock);

  SimConfig config_;
  std::vector<DeviceProperties> properties_;
  Arena arena_;
  PinnedHostMemory pinned_;
  Timeline timeline_;
  RaceChecker checker_;
  Scheduler scheduler_;  // last: its engines stop before anything they use goes away
  std::vector<Stream*> default_streams_;
  std::atomic<int64_t> next_event_id_{0};
};

// The process's simulated GPU, created on first use from the environment (config.h);
// it lives until exit, when its work is finished and its threads joined.
SimRuntime& simulator();

}  // namespace glass::cuda::sim
