// distributed/backends/threads_world.h — the shared meeting place of one threads group.
//
// Every rank-thread of a threads group holds the same ThreadsWorld. A collective is a slot
// (numbered by how many collectives the rank has run): each rank deposits its inputs, the
// last to arrive combines them in rank order 0..n−1 into one result, and every rank copies
// its part out — or, for work that divides (an all-reduce), each rank does its share.
// Point-to-point messages travel through per (src, dst, tag) FIFO mailboxes.
//
// Invariants: a rank's inputs are read, and with collective_shared its tensors written, only
// while it waits in the slot, and it leaves only when no rank works on the slot any more,
// even a failed one (so an output may alias an input, and a caller's tensor never changes
// after its wait returned); a slot that failed (timeout, mismatched calls, a rank that left)
// stays failed, so a late rank sees the same error instead of waiting for partners that
// gave up; every wait ends by the timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/tensor.h"
#include "distributed/backends/threads.h"
#include "distributed/store.h"
#include "distributed/work.h"

namespace glass::distributed {

class ThreadsWorld {
 public:
  ThreadsWorld(int size, ThreadsLinkModel link);

  // The world of (store, group) that `rank` has not joined yet, made by whichever rank comes
  // first. A rank joining again (the group was destroyed and made anew) starts a new world.
  // The registry keeps a world until every rank has joined and left it (or the store is
  // gone), so a rank that fails and leaves before the others arrive is still seen to have left.
  static std::shared_ptr<ThreadsWorld> join(const std::shared_ptr<Store>& store,
                                            const std::string& group, int rank, int size,
                                            ThreadsLinkModel link);
  // The rank's group is gone: collectives and receives waiting for it fail now.
  void leave(int rank);

  int size() const { return size_; }
  // How long a transfer of `hops` sequential messages carrying `bytes` in all takes on the link.
  std::chrono::nanoseconds wire_time(int64_t hops, double bytes) const;

  // One rank's part of a collective: all ranks must agree on op, dtype and numel.
  struct Call {
    const char* op = "";
    uint64_t seq = 0;
    ScalarType dtype = ScalarType::Undefined;
    int64_t numel = 0;
    std::vector<Tensor> inputs;  // contiguous CPU tensors, read by the combining ranks
  };
  // inputs_by_rank[r] = rank r's Call::inputs; returns the shared result (or undefined).
  using Combine = std::function<Tensor(const std::vector<std::vector<Tensor>>& inputs_by_rank)>;
  // Blocks until every rank has called slot `slot` (or the timeout: throws naming the ranks
  // that had not arrived), then until `wire` has passed since the last arrival.
  Tensor collective(int rank, uint64_t slot, Call call, const Combine& combine,
                    std::chrono::nanoseconds wire, std::chrono::milliseconds timeout);
  // Work shared out: once all have arrived, every rank runs share(inputs_by_rank, its rank)
  // (rank r's part of the job, e.g. block r of an all-reduce, as a ring divides it), and the
  // slot is done when every part is; `wire` counts from then. The parts must touch disjoint
  // memory.
  using Share =
      std::function<void(const std::vector<std::vector<Tensor>>& inputs_by_rank, int part)>;
  void collective_shared(int rank, uint64_t slot, Call call, const Share& share,
                         std::chrono::nanoseconds wire, std::chrono::milliseconds timeout);

  // send copies the tensor into the mailbox (after the wire time: a blocking send, as
  // MPI_Send may be); recv completes when a message is there, on the sender's thread.
  std::shared_ptr<Work> send(int src, int dst, int tag, const Tensor& tensor,
                             std::chrono::milliseconds timeout);
  std::shared_ptr<Work> recv(int dst, int src, int tag, Tensor& buffer,
                             std::chrono::milliseconds timeout);

 private:
  struct Slot {
    explicit Slot(int size) : calls(size) {}
    std::vector<std::unique_ptr<Call>> calls;  // by rank; null until it arrives
    int arrived = 0;
    int departed = 0;
    int parts_done = 0;  // collective_shared: ranks whose part is done
    int working = 0;     // ranks combining or doing their part right now
    bool ready = false;
    std::string failure;                 // non-empty: failed for every rank, now and later
    bool failure_names_culprit = false;  // a rank left, or ranks called different ops
    Tensor result;
    std::chrono::steady_clock::time_point wire_done;
  };
  struct PendingRecv {
    Tensor buffer;
    std::shared_ptr<Work> work;
    // After this the receiver's wait() has given up: a message must not land in its buffer.
    std::chrono::steady_clock::time_point deadline;
  };
  struct Mailbox {
    std::deque<Tensor> messages;
    std::deque<PendingRecv> waiting;
  };
  using MailboxKey = std::tuple<int, int, int>;  // src, dst, tag

  // collective and collective_shared: exactly one of combine and share is given.
  Tensor run_slot(int rank, uint64_t slot, Call call, const Combine* combine, const Share* share,
                  std::chrono::nanoseconds wire, std::chrono::milliseconds timeout);
  std::string missing_ranks(const Slot& slot) const;
  void fail_slot(Slot& slot, std::string why, bool names_culprit = false);
  // Throws the slot's failure (as RanksAtFaultError when it names the rank at fault).
  [[noreturn]] static void throw_failure(const Slot& slot);

  const int size_;
  const ThreadsLinkModel link_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<uint64_t, std::shared_ptr<Slot>> slots_;
  std::map<MailboxKey, Mailbox> mailboxes_;
  std::vector<bool> joined_;
  std::vector<bool> left_;
};

}  // namespace glass::distributed
