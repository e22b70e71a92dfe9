// cuda/sim/streams.cpp — stream queues, dependency tracking, host waits, sticky errors.
//
// Progress is event-driven: a stream moves forward only when something that could
// unblock it happens — an enqueue onto an empty stream, the completion of its front op,
// the completion of an event record it waits for (the record's `waiters`), a release.
// advance_locked() then retires every op that needs no engine (event records, waits whose
// event has completed) and hands the first op that needs one to its engine. Engines are
// only called after the lock is dropped (dispatch), so an engine thread reporting a
// completion never waits behind a host thread holding the lock for long.
#include "cuda/sim/streams.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace glass::cuda::sim {

struct Scheduler::Device {
  std::vector<std::unique_ptr<Stream>> streams;
  int64_t next_stream_id = 0;
  std::atomic<bool> failed{false};  // Op::abandon points here
  std::string sticky_error;
  std::unique_ptr<ComputeEngine> compute;
  std::unique_ptr<CopyEngine> h2d, d2h;
};

Scheduler::Scheduler(int devices, int sms, Timeline& timeline) : timeline_(timeline) {
  OpCompletion done = [this](const std::shared_ptr<Op>& op) { on_complete(op); };
  for (int d = 0; d < devices; ++d) {
    auto dev = std::make_unique<Device>();
    const std::string prefix = "sim" + std::to_string(d);
    dev->compute = std::make_unique<ComputeEngine>(prefix + "-sm", sms, done);
    dev->h2d = std::make_unique<CopyEngine>(prefix + "-htod", done);
    dev->d2h = std::make_unique<CopyEngine>(prefix + "-dtoh", done);
    devices_.push_back(std::move(dev));
  }
}

Scheduler::~Scheduler() { shutdown(); }

Stream* Scheduler::create_stream(int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  Device& dev = *devices_[static_cast<size_t>(device)];
  auto stream = std::make_unique<Stream>();
  stream->device = device;
  stream->id = dev.next_stream_id++;
  dev.streams.push_back(std::move(stream));
  return dev.streams.back().get();
}

void Scheduler::destroy_stream(Stream* stream) {
  std::vector<std::shared_ptr<Op>> ready;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stream->destroyed = true;
    stream->held = false;  // a hold dies with its stream; the queued work still runs
    advance_locked({stream}, ready);
    reap_pending_ = true;
    reap_locked();
  }
  dispatch(ready);
}

std::vector<Stream*> Scheduler::streams_locked(int device) const {
  std::vector<Stream*> out;
  for (const auto& s : devices_[static_cast<size_t>(device)]->streams) out.push_back(s.get());
  return out;
}

void Scheduler::enqueue(const std::shared_ptr<Op>& op, const std::function<void()>& admit) {
  std::vector<std::shared_ptr<Op>> ready;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Stream* s = op->stream;
    GLASS_INTERNAL_ASSERT(!s->destroyed, "enqueue on a destroyed stream");
    check_sticky_locked(s->device);
    if (admit) admit();
    op->record.seq = next_seq_++;
    op->record.device = s->device;
    op->record.stream = s->id;
    op->abandon = &devices_[static_cast<size_t>(s->device)]->failed;
    op->record.returned_ns = timeline_now_ns();
    s->queue.push_back(op);
    if (s->queue.size() == 1) advance_locked({s}, ready);
  }
  dispatch(ready);
}

void Scheduler::advance_locked(std::vector<Stream*> work, std::vector<std::shared_ptr<Op>>& ready) {
  while (!work.empty()) {
    Stream* s = work.back();
    work.pop_back();
    while (!s->held && !s->queue.empty()) {
      std::shared_ptr<Op> head = s->queue.front();
      if (head->dispatched) break;  // on an engine; its completion moves the stream on
      if (head->waits_for && !head->waits_for->done) {
        if (!head->waiter_registered) {
          head->waits_for->waiters.push_back(s);
          head->waiter_registered = true;
        }
        break;
      }
      head->dispatched = true;
      if (head->record.engine != Engine::None) {
        ready.push_back(std::move(head));
        break;
      }
      head->record.start_ns = head->record.end_ns = timeline_now_ns();
      retire_locked(head, work);
    }
  }
}

void Scheduler::retire_locked(const std::shared_ptr<Op>& op, std::vector<Stream*>& work) {
  Stream* s = op->stream;
  GLASS_INTERNAL_ASSERT(!s->queue.empty() && s->queue.front() == op,
                        "retiring an op that is "
                        "not its stream's front");
  op->done = true;
  if (op->record.host_waited) op->record.returned_ns = op->record.end_ns;
  if (op->finish_record) op->finish_record(op->record);
  timeline_.push(op->record);
  s->queue.pop_front();
  work.push_back(s);
  work.insert(work.end(), op->waiters.begin(), op->waiters.end());
  op->waiters.clear();
  if (s->destroyed && s->queue.empty()) reap_pending_ = true;
}

void Scheduler::reap_locked() {
  if (!reap_pending_) return;
  reap_pending_ = false;
  for (auto& dev : devices_) {
    std::erase_if(dev->streams, [](const std::unique_ptr<Stream>& s) {
      return s->destroyed && s->queue.empty();
    });
  }
}

void Scheduler::on_complete(const std::shared_ptr<Op>& op) {
  std::vector<std::shared_ptr<Op>> ready;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (op->failed.load()) {
      Device& dev = *devices_[static_cast<size_t>(op->stream->device)];
      if (!dev.failed.load()) {
        const std::string d = "cuda:" + std::to_string(op->stream->device);
        std::lock_guard<std::mutex> error_lock(op->error_mutex);
        dev.sticky_error = detail::str_cat(
            "CUDA error on ", d, " (simulated): ", to_string(op->record.kind), " '",
            op->record.name, "' failed: ", op->error, op->error.ends_with('.') ? "" : ".",
            " The error is sticky, as on a GPU: every later launch, copy, query "
            "and synchronize on ",
            d, " fails with it.");
        dev.failed.store(true);
      }
    }
    std::vector<Stream*> work;
    retire_locked(op, work);
    advance_locked(std::move(work), ready);
    reap_locked();
  }
  done_cv_.notify_all();
  // The work's closure may own resources (a kernel's arguments, a staging buffer) whose
  // destructors call back into the runtime: free them now, and never under the lock.
  op->run = nullptr;
  dispatch(ready);
}

void Scheduler::dispatch(const std::vector<std::shared_ptr<Op>>& ready) {
  for (const std::shared_ptr<Op>& op : ready) {
    Device& dev = *devices_[static_cast<size_t>(op->stream->device)];
    switch (op->record.engine) {
      case Engine::Compute: dev.compute->submit(op); break;
      case Engine::CopyHtoD: dev.h2d->submit(op); break;
      case Engine::CopyDtoH: dev.d2h->submit(op); break;
      case Engine::None: GLASS_INTERNAL_ASSERT(false, "dispatching an op without an engine");
    }
  }
}

// The held stream that keeps `op` from ever completing: its own stream, if held with op
// (or an op before it) not yet started, or, recursively, one that an event wait before
// it depends on.
Stream* Scheduler::held_blocker_locked(const Op* op, std::vector<const Op*>& seen) const {
  if (op->done || std::find(seen.begin(), seen.end(), op) != seen.end()) return nullptr;
  seen.push_back(op);
  Stream* s = op->stream;
  for (const std::shared_ptr<Op>& queued : s->queue) {
    if (s->held && !queued->dispatched) return s;
    if (queued->waits_for) {
      if (Stream* b = held_blocker_locked(queued->waits_for.get(), seen)) return b;
    }
    if (queued.get() == op) break;
  }
  return nullptr;
}

void Scheduler::wait(const std::shared_ptr<Op>& op, const char* call) {
  // A wait that a held stream blocks may still end: another thread can release it (a
  // test that shows a call blocking does exactly that). So it waits, but not for ever:
  // still blocked by a hold after the held-wait limit (10 s), it is an error, not a hang.
  std::unique_lock<std::mutex> lock(mutex_);
  uint64_t holds_checked = ~uint64_t{0};
  bool waiting_on_hold = false;  // then `deadline` is when the wait becomes an error
  std::chrono::steady_clock::time_point deadline{};
  while (!op->done) {
    // Only a new hold can make the wait hopeless, so the walk runs again only after a
    // hold() (not on every completion: that would be quadratic in the queue).
    Stream* held = nullptr;
    if (call != nullptr && (holds_checked != holds_ || waiting_on_hold)) {
      holds_checked = holds_;
      std::vector<const Op*> seen;
      held = held_blocker_locked(op.get(), seen);
      if (held == nullptr) {
        waiting_on_hold = false;
      } else if (!waiting_on_hold) {
        waiting_on_hold = true;
        deadline = std::chrono::steady_clock::now() + held_wait_limit_.load();
      } else if (std::chrono::steady_clock::now() >= deadline) {
        GLASS_CHECK(false, call, ": stream ", held->id, " of cuda:", held->device,
                    " is held (simulator().hold()) and was not released within ",
                    held_wait_limit_.load().count(),
                    " ms, so the work waited for would never finish; release(stream) from another "
                    "thread, or before waiting.");
      }
    }
    if (waiting_on_hold) {
      done_cv_.wait_until(lock, deadline);
    } else {
      done_cv_.wait(lock);
    }
  }
}

void Scheduler::hold(Stream* stream) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stream->held = true;
    ++holds_;
  }
  done_cv_.notify_all();  // a waiter re-checks whether the hold now blocks it
}

void Scheduler::release(Stream* stream) {
  std::vector<std::shared_ptr<Op>> ready;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stream->held = false;
    advance_locked({stream}, ready);
    reap_locked();
  }
  done_cv_.notify_all();
  dispatch(ready);
}

void Scheduler::check_sticky(int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  check_sticky_locked(device);
}

void Scheduler::check_sticky_locked(int device) const {
  const Device& dev = *devices_[static_cast<size_t>(device)];
  if (dev.failed.load()) detail::throw_error(dev.sticky_error);
}

void Scheduler::reset_sticky_error(int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  Device& dev = *devices_[static_cast<size_t>(device)];
  dev.failed.store(false);
  dev.sticky_error.clear();
}

uint64_t Scheduler::next_seq() {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_seq_;
}

void Scheduler::shutdown() {
  std::vector<std::shared_ptr<Op>> ready;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (shut_down_) return;
    shut_down_ = true;
    std::vector<Stream*> all;
    for (auto& dev : devices_) {
      for (auto& s : dev->streams) {
        s->held = false;
        all.push_back(s.get());
      }
    }
    advance_locked(std::move(all), ready);
  }
  dispatch(ready);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] {
      for (auto& dev : devices_) {
        for (auto& s : dev->streams) {
          if (!s->queue.empty()) return false;
        }
      }
      return true;
    });
  }
  for (auto& dev : devices_) {
    dev->compute->stop();
    dev->h2d->stop();
    dev->d2h->stop();
  }
}

}  // namespace glass::cuda::sim
