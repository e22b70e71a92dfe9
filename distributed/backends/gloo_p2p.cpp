// distributed/backends/gloo_p2p.cpp — send and recv of the gloo backend.
//
// A send or recv is a gloo UnboundBuffer over the tensor's memory, posted at once from the
// caller's thread (so a ring can send right while it receives from the left). gloo reports
// completion only to a thread blocked in waitSend/waitRecv — there is no callback, and
// polling is not possible (a wait that times out poisons every connection of the group) —
// so each posted op gets a waiter thread that blocks there and then finishes the Work.
// That keeps Work honest: is_completed() turns true when the transport is done, whether or
// not anyone calls wait(). (PyTorch's gloo SendWork/RecvWork instead wait inside wait(),
// and report not-completed until then; a thread per op is the price of honesty here, and
// send/recv are not on DDP's hot path.)
//
// Invariants: the slot of a message is Slot::build(kP2PSlotPrefix, tag) — a prefix none of
// gloo's collectives use (they use 0x01..0x08), so a p2p message never meets a collective;
// a PendingP2P keeps its tensor alive until its waiter has returned; the destructor aborts
// waits still pending and joins every waiter, so no thread outlives the group.
#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <utility>

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
  std::future<void> waiter;

  bool waiter_done() const {
    return !waiter.valid() || waiter.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
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

  PendingP2P* raw = op.get();  // outlives the waiter: abandon_pending_p2p joins it first
  op->waiter = std::async(std::launch::async, [this, raw, timeout] {
    std::exception_ptr error;
    try {
      bool completed = false;
      call_gloo(timeout, [&] {
        completed = raw->is_send ? raw->buffer->waitSend(timeout) : raw->buffer->waitRecv(timeout);
      });
      GLASS_CHECK(completed, "it was still pending when its gloo group was destroyed");
    } catch (const std::exception& e) {
      error = std::make_exception_ptr(Error(raw->what + " failed: " + e.what()));
    }
    raw->work->finish(error);
  });
  p2p_.push_back(op);
  return op->work;
}

void GlooProcessGroup::reap_finished_p2p_locked() {
  p2p_.remove_if([](const std::shared_ptr<PendingP2P>& op) { return op->waiter_done(); });
}

void GlooProcessGroup::abandon_pending_p2p() {
  std::list<std::shared_ptr<PendingP2P>> pending;
  {
    std::lock_guard<std::mutex> lock(p2p_mutex_);
    pending.swap(p2p_);
  }
  for (auto& op : pending) {
    if (op->waiter_done()) continue;
    // Sticky: a waiter that has not yet started waiting returns at once when it does.
    if (op->is_send) {
      op->buffer->abortWaitSend();
    } else {
      op->buffer->abortWaitRecv();
    }
  }
  for (auto& op : pending) {
    if (op->waiter.valid()) op->waiter.wait();
  }
}

}  // namespace glass::distributed
