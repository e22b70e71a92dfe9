// distributed/backends/gloo_p2p.cpp — send and recv of the gloo backend.
//
// A send or recv is a gloo UnboundBuffer over the tensor's memory, posted at once from the
// caller's thread (so a ring can send right while it receives from the left). gloo reports
// completion only to a thread blocked in waitSend/waitRecv — there is no callback, and
// polling is not possible (a wait that times out poisons every connection of the group) —
// so every posted op is handed to a waiter thread that blocks there and then finishes the
// Work. That keeps Work honest: is_completed() turns true when the transport is done,
// whether or not anyone calls wait(). (PyTorch's gloo SendWork/RecvWork instead wait inside
// wait(), and report not-completed until then.)
//
// The waiters are a pool that lives as long as the group: a thread that has finished one op
// takes the next from a queue, and a new thread starts only when an op is posted while every
// waiter is busy — so the pool grows to the most ops ever in flight at once (two for a ring
// step) and a message costs a hand-over, not a thread start. One waiter per op in flight,
// never one thread for several: waiting in posting order would let an early irecv, whose
// sender first needs something from us, hold back the completion of a later send that
// something depends on — a deadlock until the timeout.
//
// Invariants: the slot of a message is Slot::build(kP2PSlotPrefix, tag) — a prefix none of
// gloo's collectives use (they use 0x01..0x08), so a p2p message never meets a collective;
// a PendingP2P (and its tensor) lives until its waiter has finished its Work; every op is
// waited for by exactly one waiter; the destructor aborts waits still pending and joins every
// waiter, so no thread outlives the group.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include "core/error.h"
#include "distributed/backends/gloo.h"

namespace glass::distributed {
namespace {

constexpr uint8_t kP2PSlotPrefix = 0x20;

}  // namespace

struct GlooProcessGroup::PendingP2P {
  bool is_send = false;
  std::string what;  // "send to rank 1 (tag 3)", for error messages
  Tensor tensor;     // keeps the memory alive while gloo reads or writes it
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  std::shared_ptr<Work> work;
  std::chrono::milliseconds timeout{0};
  std::atomic<bool> done{false};  // its Work has finished: the op can be forgotten
};

// The waiter pool; all of it guarded by the group's p2p_mutex_.
struct GlooProcessGroup::P2PWaiters {
  std::condition_variable posted;                 // an op was queued, or the group is stopping
  std::deque<std::shared_ptr<PendingP2P>> queue;  // posted, not yet taken by a waiter
  std::vector<std::thread> threads;
  int idle = 0;  // waiters blocked on `posted`
  bool stopping = false;

  // One waiter: takes ops until the group stops and the queue is empty.
  void run(GlooProcessGroup& group) {
    std::unique_lock<std::mutex> lock(group.p2p_mutex_);
    for (;;) {
      ++idle;
      posted.wait(lock, [&] { return stopping || !queue.empty(); });
      --idle;
      if (queue.empty()) return;  // stopping, and nothing left to finish
      std::shared_ptr<PendingP2P> op = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      group.complete_p2p(*op);
      lock.lock();
    }
  }
};

std::shared_ptr<Work> GlooProcessGroup::post_send(const Tensor& tensor, int dst, int tag,
                                                  std::chrono::milliseconds timeout) {
  return post_p2p(/*is_send=*/true, tensor, dst, tag, timeout);
}

std::shared_ptr<Work> GlooProcessGroup::post_recv(Tensor& tensor, int src, int tag,
                                                  std::chrono::milliseconds timeout) {
  return post_p2p(/*is_send=*/false, tensor, src, tag, timeout);
}

std::shared_ptr<Work> GlooProcessGroup::post_p2p(bool is_send, const Tensor& tensor, int peer,
                                                 int tag, std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(p2p_mutex_);
  reap_finished_p2p_locked();

  auto op = std::make_shared<PendingP2P>();
  op->is_send = is_send;
  op->what =
      detail::str_cat(is_send ? "send to rank " : "recv from rank ", peer, " (tag ", tag, ")");
  op->tensor = tensor;
  op->timeout = timeout;
  op->work = std::make_shared<Work>(is_send ? "send" : "recv", p2p_seq_++, timeout,
                                    is_send ? std::vector<Tensor>{} : std::vector<Tensor>{tensor});
  // A message of no bytes has nothing to carry; both ends agree on the size, so both
  // complete here without touching the transport.
  if (tensor.nbytes() == 0) {
    op->work->finish();
    return op->work;
  }

  const uint64_t slot = gloo::Slot::build(kP2PSlotPrefix, static_cast<uint32_t>(tag));
  try {
    call_gloo(timeout, [&] {
      op->buffer =
          context_->createUnboundBuffer(tensor.data_ptr(), static_cast<size_t>(tensor.nbytes()));
      if (is_send) {
        op->buffer->send(peer, slot);
      } else {
        op->buffer->recv(peer, slot);
      }
    });
  } catch (const std::exception& e) {
    detail::throw_error(op->what + " failed: " + e.what());
  }

  p2p_.push_back(op);
  if (!p2p_waiters_) p2p_waiters_ = std::make_shared<P2PWaiters>();
  P2PWaiters& waiters = *p2p_waiters_;
  waiters.queue.push_back(std::move(op));
  // Every queued op needs a waiter of its own: an idle one if there is one left for it.
  if (waiters.idle >= static_cast<int>(waiters.queue.size())) {
    waiters.posted.notify_one();
  } else {
    waiters.threads.emplace_back([this, &waiters] { waiters.run(*this); });
  }
  return p2p_.back()->work;
}

void GlooProcessGroup::complete_p2p(PendingP2P& op) {
  std::exception_ptr error;
  try {
    bool completed = false;
    call_gloo(op.timeout, [&] {
      completed = op.is_send ? op.buffer->waitSend(op.timeout) : op.buffer->waitRecv(op.timeout);
    });
    if (!completed) {
      const std::string why = broken_reason();
      GLASS_CHECK(false, why.empty() ? "it was still pending when its gloo group was destroyed"
                                     : "the group is unusable: " + why);
    }
  } catch (const std::exception& e) {
    error = std::make_exception_ptr(Error(op.what + " failed: " + e.what()));
  }
  op.work->finish(error);
  op.done = true;
}

void GlooProcessGroup::reap_finished_p2p_locked() {
  p2p_.remove_if([](const std::shared_ptr<PendingP2P>& op) { return op->done.load(); });
}

void GlooProcessGroup::abandon_pending_p2p() {
  std::list<std::shared_ptr<PendingP2P>> pending;
  std::shared_ptr<P2PWaiters> waiters;
  {
    std::lock_guard<std::mutex> lock(p2p_mutex_);
    pending.swap(p2p_);
    waiters = p2p_waiters_;
    if (waiters) waiters->stopping = true;
  }
  if (!waiters) return;  // no send or recv was ever posted
  abort_pending_p2p_waits(pending);
  waiters->posted.notify_all();
  // No op is posted any more (the group is being destroyed), so `threads` no longer changes.
  for (std::thread& t : waiters->threads) t.join();
}

void GlooProcessGroup::abort_pending_p2p_waits(const std::list<std::shared_ptr<PendingP2P>>& ops) {
  for (const auto& op : ops) {
    if (op->done) continue;
    // Sticky: a waiter that has not yet started waiting returns at once when it does.
    if (op->is_send) {
      op->buffer->abortWaitSend();
    } else {
      op->buffer->abortWaitRecv();
    }
  }
}

}  // namespace glass::distributed
