// distributed/work.cpp — Work: a one-shot completion flag with an error slot and callbacks.
//
// Invariant: completed_ flips false -> true exactly once, under mutex_, and every waiter
// and callback sees the error_ that was stored with it. Callbacks and the timeout
// diagnosis run without the lock held: they may take other locks (a store, the caller's).
#include "distributed/work.h"

#include <iostream>
#include <utility>

#include "core/error.h"

namespace glass::distributed {

Work::Work(std::string op, uint64_t seq, std::chrono::milliseconds timeout,
           std::vector<Tensor> outputs)
    : op_(std::move(op)), seq_(seq), timeout_(timeout), outputs_(std::move(outputs)) {}

bool Work::is_completed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_;
}

bool Work::is_success() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_ && !error_;
}

std::exception_ptr Work::exception() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

bool Work::wait(std::chrono::milliseconds timeout) {
  if (timeout == kNoTimeout) timeout = timeout_;
  std::unique_lock<std::mutex> lock(mutex_);
  // A negative timeout (kNoTimeout as the Work's own) waits without a bound.
  if (timeout.count() < 0) {
    cv_.wait(lock, [&] { return callbacks_done_; });
  } else if (!cv_.wait_for(lock, timeout, [&] { return callbacks_done_; })) {
    std::function<std::string()> diagnosis = diagnosis_;
    lock.unlock();
    std::string message =
        detail::str_cat(op_, " #", seq_, " timed out after ", timeout.count(), " ms");
    if (diagnosis) {
      std::string why = diagnosis();
      if (!why.empty()) message += " — " + why;
    }
    detail::throw_error(message);
  }
  if (error_) std::rethrow_exception(error_);
  return true;
}

void Work::finish() { finish(nullptr); }

void Work::finish(std::exception_ptr error) { complete(std::move(error), /*once=*/true); }

bool Work::finish_if_pending(std::exception_ptr error) {
  return complete(std::move(error), /*once=*/false);
}

bool Work::complete(std::exception_ptr error, bool once) {
  std::vector<std::function<void(Work&)>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    GLASS_INTERNAL_ASSERT(!once || !completed_, op_, " #", seq_, " was finished twice");
    if (completed_) return false;
    completed_ = true;  // callbacks see a finished Work; then() from now on runs at once
    error_ = std::move(error);
    callbacks.swap(callbacks_);
  }
  // Every callback runs even if one throws. finish() runs on a transport's thread (the
  // communication thread, gloo's or MPI's completion thread, a sender under the threads
  // backend), where nobody could catch an exception, so a callback's error is reported on
  // stderr and the Work stays as the transport left it.
  for (auto& fn : callbacks) {
    try {
      fn(*this);
    } catch (const std::exception& e) {
      std::cerr << "glass::distributed: a then() callback of " << op_ << " #" << seq_
                << " threw: " << e.what() << "\n";
    } catch (...) {
      std::cerr << "glass::distributed: a then() callback of " << op_ << " #" << seq_
                << " threw an unknown exception\n";
    }
  }
  // Waiters wake only now, so that when wait() returns every then() callback has run (DDP's
  // timeline relies on it).
  {
    std::lock_guard<std::mutex> lock(mutex_);
    callbacks_done_ = true;
  }
  cv_.notify_all();
  return true;
}

void Work::then(std::function<void(Work&)> fn) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!completed_) {
      callbacks_.push_back(std::move(fn));
      return;
    }
  }
  fn(*this);
}

void Work::set_timeout_diagnosis(std::function<std::string()> fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  diagnosis_ = std::move(fn);
}

}  // namespace glass::distributed
