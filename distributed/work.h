// distributed/work.h — the handle an asynchronous collective returns (c10d::Work's shape).
//
// A collective runs on its group's communication thread; Work is how the caller learns it
// finished. Invariants: a Work completes exactly once, either successfully or with the
// exception that stopped it; wait() rethrows that exception on the caller's thread; a
// wait() that times out throws an error naming the op, its sequence number and the
// timeout, and leaves the Work pending (the transport still owns the tensors).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/types.h"

namespace glass::distributed {

class Work {
 public:
  // op: "allreduce", "send", ...; seq: the group's sequence number of this call (p2p ops
  // have their own counter); timeout: what wait() with no argument waits.
  Work(std::string op, uint64_t seq, std::chrono::milliseconds timeout,
       std::vector<Tensor> outputs = {});
  virtual ~Work() = default;

  bool is_completed() const;
  bool is_success() const;  // completed without an exception
  std::exception_ptr exception() const;

  // Blocks until the work completes (rethrowing its exception) or the timeout passes
  // (kNoTimeout: this Work's own timeout). Returns true, as libtorch's does.
  virtual bool wait(std::chrono::milliseconds timeout = kNoTimeout);

  // The tensors the op wrote (the output of allgather, the buffer of recv, ...).
  const std::vector<Tensor>& result() const { return outputs_; }

  const std::string& op() const { return op_; }
  uint64_t seq() const { return seq_; }

  // Called by the backend, once. Callbacks added by then() run on the completing thread
  // (a transport's: the communication thread, a completion thread, or under the threads
  // backend the sender's), before wait() returns anywhere; one that throws is reported on
  // stderr, since nobody on that thread could catch it.
  void finish();
  void finish(std::exception_ptr error);
  // finish(error) unless the Work has completed already; returns whether it did finish it.
  // For the one case with two finishers: a group that gives up on a collective its transport
  // is stuck in (a dead peer the transport missed) fails the Work at once, and the thread
  // stuck in the transport finishes it again, ignored, when the transport lets go.
  bool finish_if_pending(std::exception_ptr error);
  // Runs fn (on the thread that completes the work, or now if already complete).
  void then(std::function<void(Work&)> fn);

  // What a timed-out wait() adds to its message (the group fills in which ranks did not join).
  void set_timeout_diagnosis(std::function<std::string()> fn);

 private:
  // Both finishers: completes the Work and runs its callbacks; `once` asserts it was pending.
  bool complete(std::exception_ptr error, bool once);

  std::string op_;
  uint64_t seq_;
  std::chrono::milliseconds timeout_;
  std::vector<Tensor> outputs_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool completed_ = false;
  bool callbacks_done_ = false;  // completed, and its then() callbacks have run
  std::exception_ptr error_;
  std::vector<std::function<void(Work&)>> callbacks_;
  std::function<std::string()> diagnosis_;
};

}  // namespace glass::distributed
