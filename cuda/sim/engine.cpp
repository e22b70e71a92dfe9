// cuda/sim/engine.cpp — the copy engines' loop and the SM workers' chunk claiming.
//
// Chunk claiming (Note [SM workers]): a worker takes the op at the front of the queue,
// then claims chunks with one atomic fetch_add each, without the engine's lock. The
// worker that claims past the end pops the op (if still at the front), so the other
// workers move to the next op while the last chunks of this one finish. Each worker
// counts the chunks it ran and subtracts them from `unfinished`; whoever brings it to
// zero finished the op's last chunk and reports completion.
#include "cuda/sim/engine.h"

#include <pthread.h>

#include <exception>

#include "core/error.h"

namespace glass::cuda::sim {
namespace {

void name_this_thread(const std::string& name) {
  // Linux limits thread names to 15 characters; they show in gdb, top and perf.
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace

void Op::run_chunk(int64_t c) {
  if (failed.load(std::memory_order_relaxed)) return;
  if (abandon != nullptr && abandon->load(std::memory_order_relaxed)) return;
  try {
    run(c);
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!failed.exchange(true)) error = e.what();
  } catch (...) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!failed.exchange(true)) error = "an exception that is not a std::exception";
  }
}

// ---- copy engine ----------------------------------------------------------------------

CopyEngine::CopyEngine(std::string thread_name, OpCompletion on_complete)
    : on_complete_(std::move(on_complete)) {
  thread_ = std::thread([this, name = std::move(thread_name)] {
    name_this_thread(name);
    loop();
  });
}

CopyEngine::~CopyEngine() { stop(); }

void CopyEngine::submit(std::shared_ptr<Op> op) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopped_) {
      queue_.push_back(std::move(op));
      cv_.notify_one();
      return;
    }
  }
  // Stopped (the process is exiting): the caller's thread does the engine's work.
  op->record.start_ns = timeline_now_ns();
  for (int64_t c = 0; c < op->num_chunks; ++c) op->run_chunk(c);
  op->record.end_ns = timeline_now_ns();
  on_complete_(op);
}

void CopyEngine::loop() {
  for (;;) {
    std::shared_ptr<Op> op;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stopped_ || !queue_.empty(); });
      if (queue_.empty()) return;
      op = std::move(queue_.front());
      queue_.pop_front();
    }
    op->record.start_ns = timeline_now_ns();
    for (int64_t c = 0; c < op->num_chunks; ++c) op->run_chunk(c);
    op->record.end_ns = timeline_now_ns();
    on_complete_(op);
  }
}

void CopyEngine::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    stopped_ = true;  // later submissions run inline; the thread drains what it has
    cv_.notify_all();
  }
  thread_.join();
}

// ---- compute engine -------------------------------------------------------------------

ComputeEngine::ComputeEngine(std::string thread_prefix, int sms, OpCompletion on_complete)
    : on_complete_(std::move(on_complete)) {
  GLASS_INTERNAL_ASSERT(sms >= 1);
  for (int i = 0; i < sms; ++i) {
    workers_.emplace_back([this, name = thread_prefix + std::to_string(i)] {
      name_this_thread(name);
      worker();
    });
  }
}

ComputeEngine::~ComputeEngine() { stop(); }

void ComputeEngine::submit(std::shared_ptr<Op> op) {
  GLASS_INTERNAL_ASSERT(op->num_chunks >= 1, "an op with no work: ", op->record.name);
  op->unfinished.store(op->num_chunks);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopped_) {
      queue_.push_back(std::move(op));
      cv_.notify_all();
      return;
    }
  }
  run_inline(op);
}

void ComputeEngine::run_inline(const std::shared_ptr<Op>& op) {
  op->record.start_ns = timeline_now_ns();
  for (int64_t c = 0; c < op->num_chunks; ++c) op->run_chunk(c);
  op->record.end_ns = timeline_now_ns();
  on_complete_(op);
}

void ComputeEngine::worker() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stopped_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::shared_ptr<Op> op = queue_.front();
    lock.unlock();
    int64_t ran = 0;
    for (int64_t c = op->next_chunk.fetch_add(1); c < op->num_chunks;
         c = op->next_chunk.fetch_add(1)) {
      if (c == 0) op->record.start_ns = timeline_now_ns();
      op->run_chunk(c);
      ++ran;
    }
    lock.lock();
    // Every chunk is claimed: the op leaves the queue (if no other worker popped it).
    if (!queue_.empty() && queue_.front() == op) queue_.pop_front();
    if (ran > 0 && op->unfinished.fetch_sub(ran) == ran) {
      lock.unlock();
      op->record.end_ns = timeline_now_ns();
      on_complete_(op);
      lock.lock();
    }
  }
}

void ComputeEngine::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    stopped_ = true;  // later submissions run inline; the workers drain what they have
    cv_.notify_all();
  }
  for (std::thread& t : workers_) t.join();
}

}  // namespace glass::cuda::sim
