// cuda/sim/streams.h — streams, events, and the scheduler that feeds the engines.
//
// A stream is an in-order queue: its next operation starts only after the one before it
// has completed, and, for a wait on an event, after that event's record has completed.
// An event record is an operation too, one that needs no engine: it completes the moment
// it reaches the front of its stream, which is exactly "when everything enqueued on the
// stream before it has completed" (cudaEventRecord's meaning). The scheduler keeps the
// queues, hands each stream's front operation to its device's engine (engine.h) once it
// may start, and on completion moves every stream that was waiting on it forward. Streams
// do not wait for each other otherwise, so work on different streams runs concurrently.
//
// The host waits through wait(): a synchronize, or a pageable copy to host. A stream may
// be held (a test hook): it starts nothing until released, so a test can see that a call
// returned before its work ran. Synchronizing on work that a hold keeps from ever finishing
// is an error naming the held stream, never a hang.
//
// A kernel that throws makes its device's error sticky, as CUDA does: the work queued
// behind it is skipped, and every later call on the device that checks (launch, copy,
// query, synchronize) throws the kernel's message until reset_sticky_error.
//
// Invariant: each stream has at most one operation on an engine, and it is the stream's
// front; an operation is marked done, recorded on the timeline and popped exactly once;
// all state here is guarded by one mutex, never held while an engine runs work.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/sim/engine.h"
#include "cuda/sim/race_checker.h"
#include "cuda/sim/timeline.h"

namespace glass::cuda::sim {

struct Stream {
  int device = 0;
  int64_t id = 0;         // on its device; 0 is the default stream
  size_t race_index = 0;  // its entry in the race checker's vector clocks
  // Guarded by the scheduler's mutex.
  std::deque<std::shared_ptr<Op>> queue;  // enqueued and not completed; the front may run
  bool held = false;
  bool destroyed = false;  // deleted once its queue drains
};

struct Event {
  int device = 0;
  int64_t id = 0;
  bool timing = false;
  // Guarded by the scheduler's mutex.
  std::shared_ptr<Op> last_record;  // null until recorded
  VectorClock clock;                // what the race checker captured at the record
};

class Scheduler {
 public:
  Scheduler(int devices, int sms, Timeline& timeline);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // A new stream of `device` with the next id (the first one made is the default stream).
  Stream* create_stream(int device);
  void destroy_stream(Stream* stream);

  // Queues op on op->stream. `admit` runs first under the scheduler's lock (checks that
  // may throw, leaving nothing queued; state that must change in enqueue order).
  void enqueue(const std::shared_ptr<Op>& op, const std::function<void()>& admit = {});

  // Runs f under the scheduler's lock (to read stream and event state consistently).
  template <class F>
  auto locked(F&& f) -> decltype(f()) {
    std::lock_guard<std::mutex> lock(mutex_);
    return f();
  }
  // With the lock held: every stream of `device`, the default one first (destroyed ones
  // whose work has not drained yet included: a device synchronize waits for them too).
  std::vector<Stream*> streams_locked(int device) const;

  // Blocks the host until op has completed. With a `call` name, work that a hold keeps
  // from completing for longer than the held-wait limit is an error (another thread may
  // release it before); without, the host waits for the release however long it takes.
  void wait(const std::shared_ptr<Op>& op, const char* call);

  void hold(Stream* stream);
  void release(Stream* stream);
  void set_held_wait_limit(std::chrono::milliseconds limit) { held_wait_limit_ = limit; }

  // Throws the device's sticky kernel error, if any.
  void check_sticky(int device);
  void check_sticky_locked(int device) const;
  void reset_sticky_error(int device);

  uint64_t next_seq();  // the seq the next enqueued operation gets

  // Releases every hold, finishes all queued work, stops the engines. Later work runs on
  // the thread that enqueues it.
  void shutdown();

 private:
  struct Device;
  void on_complete(const std::shared_ptr<Op>& op);
  void advance_locked(std::vector<Stream*> work, std::vector<std::shared_ptr<Op>>& ready);
  void retire_locked(const std::shared_ptr<Op>& op, std::vector<Stream*>& work);
  void reap_locked();
  Stream* held_blocker_locked(const Op* op, std::vector<const Op*>& seen) const;
  void dispatch(const std::vector<std::shared_ptr<Op>>& ready);

  Timeline& timeline_;
  mutable std::mutex mutex_;
  std::condition_variable done_cv_;
  std::vector<std::unique_ptr<Device>> devices_;
  uint64_t next_seq_ = 0;
  std::atomic<std::chrono::milliseconds> held_wait_limit_{std::chrono::seconds(10)};
  uint64_t holds_ = 0;  // hold() calls so far: a waiter re-checks for deadlock when it moves
  bool reap_pending_ = false;
  bool shut_down_ = false;
};

}  // namespace glass::cuda::sim
