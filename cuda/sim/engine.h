// cuda/sim/engine.h — an operation, and the engines that run it.
//
// Each simulated device has three engines, as a GPU does: the compute engine (the SMs:
// a pool of worker threads) and two copy engines (DMA, one per direction: host to device
// and device to host, one thread each). An engine takes operations whose turn has come
// (the scheduler decides that, streams.h), runs them and reports completion; because
// the engines are separate threads, a copy on one stream runs while a kernel of another
// stream occupies the SMs.
//
// An Op's work is split into chunks (a kernel's blocks; a memset's or DtoD copy's 1 MiB
// pieces; a copy engine's single chunk). The compute engine's SM workers claim chunks
// from the op at the front of its queue, so one kernel's blocks spread over every SM, and
// the next op may start on an SM as soon as the last block of the current one is claimed.
//
// Invariant: every chunk of a submitted op is claimed exactly once, and the completion
// callback runs exactly once per op, after every chunk has finished (or been skipped
// because an earlier chunk threw, or the device has a sticky error), on an engine thread
// (or, once the engine has stopped, on the thread that submitted it).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda/sim/timeline.h"

namespace glass::cuda::sim {

struct Stream;

struct Op {
  TimelineRecord record;  // seq, device, stream, names, sizes; times filled in as it runs
  Stream* stream = nullptr;

  // The work (none for Engine::None): run(chunk) for every chunk in [0, num_chunks).
  int64_t num_chunks = 0;
  std::function<void(int64_t chunk)> run;
  // For a stream_wait_event: the event record this op waits for (null: the event had
  // never been recorded, and the wait is a no-op, as in CUDA).
  std::shared_ptr<Op> waits_for;
  // Called once, just before the record goes to the timeline (a kernel adds its stats).
  std::function<void(TimelineRecord&)> finish_record;
  // The device's sticky-error flag: once set, the work of ops not yet run is skipped.
  const std::atomic<bool>* abandon = nullptr;

  // Scheduler state, guarded by the scheduler's mutex.
  bool dispatched = false;
  bool done = false;
  bool waiter_registered = false;
  std::vector<Stream*> waiters;  // streams whose next op is a wait for this one

  // Engine state.
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> unfinished{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::string error;  // the first exception's message, when failed

  // Runs chunk c unless the op failed or was abandoned; records the first exception.
  void run_chunk(int64_t c);
};

using OpCompletion = std::function<void(const std::shared_ptr<Op>&)>;

// A DMA engine: one thread, operations one after another in submission order.
class CopyEngine {
 public:
  CopyEngine(std::string thread_name, OpCompletion on_complete);
  ~CopyEngine();
  void submit(std::shared_ptr<Op> op);
  void stop();  // finishes what was submitted, then joins the thread

 private:
  void loop();

  OpCompletion on_complete_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Op>> queue_;
  bool stopped_ = false;
  std::thread thread_;
};

// The SMs: `sms` worker threads that share out the chunks of the op at the front.
class ComputeEngine {
 public:
  ComputeEngine(std::string thread_prefix, int sms, OpCompletion on_complete);
  ~ComputeEngine();
  void submit(std::shared_ptr<Op> op);
  void stop();

 private:
  void worker();
  void run_inline(const std::shared_ptr<Op>& op);

  OpCompletion on_complete_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Op>> queue_;  // the front op may still have chunks to claim
  bool stopped_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace glass::cuda::sim
