// distributed/backends/gloo.h — the gloo backend: Debian's libgloo-dev, the CPU transport
// PyTorch itself uses, across threads, processes and machines.
//
// Gloo's collectives are synchronous in the calling thread; ProcessGroup runs them on the
// group's communication thread, one at a time, so Work is truly asynchronous. Every gloo
// operation is tagged with the collective's sequence number (or, for send/recv, a slot in a
// prefix no collective uses), so messages of different operations can never be mixed up.
//
// Invariant: once constructed, every rank of the group holds a TCP connection to every other
// rank (gloo's full mesh); after a transport error or a timeout gloo poisons the whole
// connection set, so every later operation on the group fails too (as in PyTorch: a group
// that failed is rebuilt, not retried).
//
// A watchdog covers the one death gloo misses: a peer that dies while this rank is reading
// one of its messages leaves gloo waiting for the rest until the timeout (gloo signals the
// receives it has queued, not the one it is filling). When a collective has made no progress
// for a while and the store records that a rank exited, the watchdog closes the group's
// connections and fails the collective naming that rank (see watch_for_dead_peers).
//
// No gloo header appears here, so code that includes this one needs none.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/process_group.h"
#include "distributed/store.h"

namespace gloo {
class Context;
}

namespace glass::distributed {

struct GlooOptions {
  // The address this rank listens on and tells its peers through the store. Loopback by
  // default: a job on one machine never opens a port to the network.
  std::string hostname = "127.0.0.1";

  // GLASS_GLOO_HOSTNAME when set; else the host's name when MASTER_ADDR names another
  // machine (peers must reach us there); else loopback.
  static GlooOptions from_env();
};

class GlooProcessGroup : public ProcessGroup {
 public:
  // Connects to every other rank through `store` (each rank publishes its address under
  // "gloo/<rank>" and reads the others'), waiting at most options.timeout; throws naming
  // this rank, the world size and what failed.
  GlooProcessGroup(std::shared_ptr<Store> store, int rank, int size,
                   const ProcessGroup::Options& options, GlooOptions gloo_options = {});
  ~GlooProcessGroup() override;

  std::string backend_name() const override { return "gloo"; }
  const GlooOptions& gloo_options() const { return gloo_options_; }

 protected:
  void run_allreduce(Tensor& tensor, ReduceOp op, const CollectiveContext& ctx) override;
  void run_broadcast(Tensor& tensor, int root, const CollectiveContext& ctx) override;
  void run_allgather(Tensor& output, const Tensor& input, const CollectiveContext& ctx) override;
  void run_reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op,
                          const CollectiveContext& ctx) override;
  void run_barrier(const CollectiveContext& ctx) override;
  void run_gather(std::vector<Tensor>& outputs, const Tensor& input, int root,
                  const CollectiveContext& ctx) override;
  void run_scatter(Tensor& output, const std::vector<Tensor>& inputs, int root,
                   const CollectiveContext& ctx) override;
  std::shared_ptr<Work> post_send(const Tensor& tensor, int dst, int tag,
                                  std::chrono::milliseconds timeout) override;
  std::shared_ptr<Work> post_recv(Tensor& tensor, int src, int tag,
                                  std::chrono::milliseconds timeout) override;

 private:
  struct PendingP2P;  // one posted send or recv
  struct P2PWaiters;  // the pool of threads that wait for them (gloo_p2p.cpp)

  // Runs one gloo call, turning what gloo throws into a glass::Error that says what went
  // wrong in this group's terms (which rank exited, how long it waited) and quotes gloo.
  void call_gloo(std::chrono::milliseconds timeout, const std::function<void()>& fn) const;
  std::string explain_failure(const std::string& gloo_message,
                              std::chrono::milliseconds timeout) const;
  // Ranks that init_process_group's store recorded as exited ("glass/exited/<rank>").
  std::vector<int> exited_ranks() const;
  // Why the watchdog gave up on the group ("" while it has not).
  std::string broken_reason() const;

  // The watchdog thread: every kWatchTick, if the same collective is still running and the
  // store says a rank exited ("glass/exited/any"), and it still runs kExitGrace later (a
  // rank that exited normally may have left its last bytes in flight), gives up on the
  // group: closes its connections, fails the collective's Work and every pending send/recv.
  void watch_for_dead_peers();
  void give_up_on_dead_peer();
  static constexpr std::chrono::milliseconds kWatchTick{500};
  static constexpr std::chrono::milliseconds kExitGrace{2000};

  std::shared_ptr<Work> post_p2p(bool is_send, const Tensor& tensor, int peer, int tag,
                                 std::chrono::milliseconds timeout);
  // Waits for one posted op on a waiter thread, then finishes its Work.
  void complete_p2p(PendingP2P& op);
  // Forgets the send/recv that have completed.
  void reap_finished_p2p_locked();
  // Aborts the waits of send/recv still pending (their Work fails) and joins every waiter.
  void abandon_pending_p2p();
  // Aborts the waits of send/recv still pending; the waiters stay.
  void abort_pending_p2p_waits(const std::list<std::shared_ptr<PendingP2P>>& ops);

  GlooOptions gloo_options_;
  std::shared_ptr<gloo::Context> context_;

  std::mutex p2p_mutex_;  // guards p2p_, p2p_seq_ and the waiter pool
  std::list<std::shared_ptr<PendingP2P>> p2p_;
  uint64_t p2p_seq_ = 0;
  std::shared_ptr<P2PWaiters> p2p_waiters_;  // made by the first send or recv

  mutable std::mutex watch_mutex_;  // guards the three below
  std::condition_variable watch_wake_;
  bool watch_stopping_ = false;
  std::string broken_;    // why the watchdog gave up on the group
  std::thread watchdog_;  // only with a store (where exits are recorded) and a peer
};

// The factory the backend registry calls for "gloo" (GlooOptions::from_env()).
std::shared_ptr<ProcessGroup> make_gloo_group(std::shared_ptr<Store> store, int rank, int size,
                                              const ProcessGroup::Options& options);

}  // namespace glass::distributed
