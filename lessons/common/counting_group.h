// lessons/common/counting_group.h — a process group that counts what its rank sends
// (lessons 10 and 11).
//
// CountingGroup wraps another group (the threads backend, in the lessons) and hands every
// call on to it, but first writes down each point-to-point message: how many bytes, to
// which rank, from which rank. That is how lesson 10 measures the ring's bandwidth claim,
// bytes each rank sends = 2(n−1)/n · size, and how the exercise tests see whether a ring
// only ever talks to its neighbours. Collectives are handed on whole; what is written down
// for them is the size of the buffer each one moved (collective_bytes(), by kind), which
// lesson 11 turns into what a ring sends per rank. They are also numbered by the base class
// like any group's, so sequence_number() says whether one ran.
// Given a SendRendezvous (send_rendezvous.h) shared by every rank's CountingGroup, a send
// completes only once its receiver has posted the matching recv, as a large message does on
// gloo or MPI — so a program that waits for a send before posting its recv fails here too.
//
// Invariant: the counts cover exactly the send()/recv() calls and the collectives made on
// this object (not the inner group's own traffic), and they are read after the rank's Work
// has completed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "distributed/process_group.h"
#include "send_rendezvous.h"

namespace glass::lessons {

class CountingGroup final : public distributed::ProcessGroup {
 public:
  // rendezvous: null (sends complete as the inner group's do), or the board every rank's
  // CountingGroup shares.
  explicit CountingGroup(std::shared_ptr<distributed::ProcessGroup> inner,
                         std::shared_ptr<SendRendezvous> rendezvous = nullptr)
      : ProcessGroup(inner->rank(), inner->size(), options_of(*inner)),
        inner_(std::move(inner)),
        rendezvous_(std::move(rendezvous)) {
    start();
  }
  ~CountingGroup() override { stop(); }

  std::string backend_name() const override { return "counting(" + inner_->backend_name() + ")"; }

  int64_t bytes_sent() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_sent_;
  }
  int64_t bytes_received() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_received_;
  }
  int64_t messages_sent() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_sent_;
  }
  std::set<int> sent_to() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return sent_to_;
  }
  std::set<int> received_from() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return received_from_;
  }
  // Per kind of collective, the bytes of the buffers it moved: the tensor of an allreduce or
  // a broadcast, the output of an allgather, the input of a reduce_scatter — B in the ring
  // costs of distributed/backends/threads.cpp (an allgather sends (n−1)/n · B per rank).
  std::map<std::string, int64_t> collective_bytes() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return collective_bytes_;
  }

 protected:
  // The collectives: the inner group's, waited for here on this group's communication thread.
  void run_allreduce(Tensor& tensor, distributed::ReduceOp op, const CollectiveContext&) override {
    count("allreduce", tensor.nbytes());
    inner_->allreduce(tensor, {.reduceOp = op})->wait();
  }
  void run_broadcast(Tensor& tensor, int root, const CollectiveContext&) override {
    count("broadcast", tensor.nbytes());
    inner_->broadcast(tensor, {.rootRank = root})->wait();
  }
  void run_allgather(Tensor& output, const Tensor& input, const CollectiveContext&) override {
    count("allgather", output.nbytes());
    inner_->allgather(output, input)->wait();
  }
  void run_reduce_scatter(Tensor& output, const Tensor& input, distributed::ReduceOp op,
                          const CollectiveContext&) override {
    count("reduce_scatter", input.nbytes());
    inner_->reduce_scatter(output, input, {.reduceOp = op})->wait();
  }
  void run_barrier(const CollectiveContext&) override { inner_->barrier()->wait(); }

  // Point-to-point: counted, then posted on the inner group.
  std::shared_ptr<distributed::Work> post_send(const Tensor& tensor, int dst, int tag,
                                               std::chrono::milliseconds) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      bytes_sent_ += tensor.nbytes();
      ++messages_sent_;
      sent_to_.insert(dst);
    }
    std::vector<Tensor> message{tensor};
    std::shared_ptr<distributed::Work> sent = inner_->send(message, dst, tag);
    if (!rendezvous_) return sent;
    // Done when the inner send is done and the receiver has posted its recv.
    auto work = std::make_shared<distributed::Work>("send", 0, distributed::kNoTimeout);
    sent->then([work, board = rendezvous_, src = rank(), dst, tag](distributed::Work& done) {
      if (done.exception()) {
        work->finish(done.exception());
      } else {
        board->await_recv(src, dst, tag, work);
      }
    });
    return work;
  }
  std::shared_ptr<distributed::Work> post_recv(Tensor& tensor, int src, int tag,
                                               std::chrono::milliseconds) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      bytes_received_ += tensor.nbytes();
      received_from_.insert(src);
    }
    std::vector<Tensor> buffer{tensor};
    std::shared_ptr<distributed::Work> received = inner_->recv(buffer, src, tag);
    if (rendezvous_) rendezvous_->recv_posted(src, rank(), tag);
    return received;
  }

 private:
  void count(const char* kind, int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    collective_bytes_[kind] += bytes;
  }

  // The inner group's timeout; no store, so this wrapper publishes no diagnosis of its own
  // (the inner group does, under its own name).
  static Options options_of(const ProcessGroup& inner) {
    Options options;
    options.timeout = inner.options().timeout;
    options.group_name = inner.options().group_name + "/counted";
    return options;
  }

  std::shared_ptr<distributed::ProcessGroup> inner_;
  std::shared_ptr<SendRendezvous> rendezvous_;
  mutable std::mutex mutex_;
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
  int64_t messages_sent_ = 0;
  std::set<int> sent_to_;
  std::set<int> received_from_;
  std::map<std::string, int64_t> collective_bytes_;
};

}  // namespace glass::lessons
