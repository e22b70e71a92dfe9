// lessons/common/send_rendezvous.h — sends that complete only once their receiver
// has posted the matching recv, as large messages do on gloo, MPI and NCCL.
//
// The threads backend buffers every message, so its send completes at once and a program
// that waits for each send before posting its recv works there — and deadlocks on a real
// transport, where a big send waits for the receiver to post its buffer. SendRendezvous
// gives CountingGroup (counting_group.h) the strict behaviour: all the ranks' groups share
// one board, every recv is written on it, and a send's Work completes when the matching recv
// (same sender, receiver and tag; the k-th send matches the k-th recv, as messages between
// one pair with one tag arrive in order) has been posted. A send with no matching recv
// within `timeout` fails, naming the ranks and the rule broken, so a ring that waits for its
// own send first fails in a second instead of hanging.
//
// Invariant: every Work handed to await_recv() finishes exactly once — when its recv is
// posted, at its deadline, or (failed) when the board is destroyed — and never under mutex_.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "distributed/work.h"

namespace glass::lessons {

class SendRendezvous {
 public:
  explicit SendRendezvous(std::chrono::milliseconds timeout)
      : timeout_(timeout), watchdog_([this] { watch(); }) {}
  ~SendRendezvous() {
    std::vector<Pending> left;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      left.swap(pending_);
    }
    cv_.notify_all();
    watchdog_.join();
    for (Pending& p : left) fail(p, "the rendezvous board was destroyed first");
  }
  SendRendezvous(const SendRendezvous&) = delete;
  SendRendezvous& operator=(const SendRendezvous&) = delete;

  std::chrono::milliseconds timeout() const { return timeout_; }

  // A send from `src` to `dst` with `tag` was posted; `work` finishes once its recv is.
  void await_recv(int src, int dst, int tag, std::shared_ptr<distributed::Work> work) {
    std::shared_ptr<distributed::Work> done;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const Key key{src, dst, tag};
      const uint64_t k = sends_[key]++;
      if (k < recvs_[key]) {
        done = std::move(work);
      } else {
        pending_.push_back({key, k, Clock::now() + timeout_, std::move(work)});
      }
    }
    cv_.notify_all();
    if (done) done->finish();
  }

  // `dst` posted a recv from `src` with `tag`: the send it matches may complete.
  void recv_posted(int src, int dst, int tag) {
    std::vector<std::shared_ptr<distributed::Work>> done;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const Key key{src, dst, tag};
      const uint64_t posted = ++recvs_[key];
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->key == key && it->index < posted) {
          done.push_back(std::move(it->work));
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& work : done) work->finish();
  }

 private:
  using Clock = std::chrono::steady_clock;
  using Key = std::tuple<int, int, int>;  // src, dst, tag
  struct Pending {
    Key key;
    uint64_t index;  // the k-th send on this key
    Clock::time_point deadline;
    std::shared_ptr<distributed::Work> work;
  };

  // Fails the sends whose deadline passed; waits on the condition variable in between.
  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      if (pending_.empty()) {
        cv_.wait(lock);
        continue;
      }
      Clock::time_point first = pending_.front().deadline;
      for (const Pending& p : pending_) first = std::min(first, p.deadline);
      if (cv_.wait_until(lock, first) != std::cv_status::timeout) continue;
      std::vector<Pending> expired;
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->deadline <= Clock::now()) {
          expired.push_back(std::move(*it));
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
      lock.unlock();
      for (Pending& p : expired)
        fail(p, "rank " + std::to_string(std::get<1>(p.key)) + " posted no matching recv within " +
                    std::to_string(timeout_.count()) + " ms");
      lock.lock();
    }
  }

  static void fail(Pending& p, const std::string& why) {
    const auto [src, dst, tag] = p.key;
    std::ostringstream os;
    os << "rank " << src << "'s send #" << p.index << " to rank " << dst << " (tag " << tag
       << ") waited for its receiver, and " << why
       << ". On gloo, MPI and NCCL a large send completes only once the receiver has posted "
          "its recv: post each step's send and recv before waiting for either, or every rank "
          "waits on its own send and the ring waits for itself";
    p.work->finish(std::make_exception_ptr(std::runtime_error(os.str())));
  }

  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<Key, uint64_t> sends_, recvs_;  // posted so far, per key
  std::vector<Pending> pending_;
  std::thread watchdog_;  // last: started once the members above exist
};

}  // namespace glass::lessons
