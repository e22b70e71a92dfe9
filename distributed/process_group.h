// distributed/process_group.h — a group of ranks and the collectives they run together.
//
// ProcessGroup is c10d's interface in miniature, split the way a textbook would: this class
// does everything every backend needs — it checks arguments (one tensor per rank, dtypes,
// devices, sizes, root ranks) and names what is wrong, numbers each collective, stages
// tensors the transport cannot take (non-contiguous, or CUDA tensors on a CPU transport)
// through contiguous host copies, runs collectives on the group's communication thread so
// they overlap the caller's work, publishes events, and explains failures (which ranks did
// not join op #n) — and a backend (backends/) only moves bytes.
//
// Invariants: collectives start on the communication thread in the order they were called,
// one at a time, so every rank runs op #n as its n-th collective; send/recv are posted at
// once from the calling thread (they do not wait behind collectives), so a ring can send
// right while it receives from the left; a tensor passed to an async op must not be touched
// until its Work completes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "distributed/store.h"
#include "distributed/types.h"
#include "distributed/work.h"

namespace glass::distributed {

// GLASS_DISTRIBUTED_DEBUG (torch's TORCH_DISTRIBUTED_DEBUG): OFF, INFO, or DETAIL — then
// every collective first checks that all ranks called the same op with the same shape and
// dtype, and names the ranks that differ.
enum class DebugLevel : uint8_t { Off, Info, Detail };
DebugLevel debug_level();  // read once from the environment
void set_debug_level(DebugLevel level);

// One send or receive of a batch (torch.distributed.P2POp).
struct P2POp {
  enum class Kind : uint8_t { Send, Recv };
  Kind kind;
  Tensor tensor;
  int peer;
  int tag = 0;
};

class ProcessGroup : public std::enable_shared_from_this<ProcessGroup> {
 public:
  struct Options {
    std::chrono::milliseconds timeout = kDefaultTimeout;
    std::string group_name = "default";
    // Where failures are diagnosed (ranks publish which collective they are stuck in) and
    // where exited ranks are recorded (TCPStore::set_on_disconnect). May be null.
    std::shared_ptr<Store> store;
  };

  ProcessGroup(int rank, int size, Options options);
  virtual ~ProcessGroup();  // finishes queued collectives, then stops the thread
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual std::string backend_name() const = 0;
  const Options& options() const { return options_; }
  // Collectives issued so far (the next one gets this number).
  uint64_t sequence_number() const;

  // Each takes one tensor per rank (libtorch's list form with one element, or the tensor).
  std::shared_ptr<Work> allreduce(std::vector<Tensor>& tensors, const AllreduceOptions& opts = {});
  std::shared_ptr<Work> allreduce(Tensor& tensor, const AllreduceOptions& opts = {});
  std::shared_ptr<Work> broadcast(std::vector<Tensor>& tensors, const BroadcastOptions& opts = {});
  std::shared_ptr<Work> broadcast(Tensor& tensor, const BroadcastOptions& opts = {});
  // output holds size() copies of input's shape, rank r's at [r] — either [size * n0, ...]
  // (concatenated along dim 0) or [size, n0, ...] (stacked), as all_gather_into_tensor.
  std::shared_ptr<Work> allgather(Tensor& output, const Tensor& input,
                                  const AllgatherOptions& opts = {});
  // The inverse: input holds size() blocks of output's shape; rank r gets the reduction of
  // every rank's block r.
  std::shared_ptr<Work> reduce_scatter(Tensor& output, const Tensor& input,
                                       const ReduceScatterOptions& opts = {});
  // outputs: size() tensors on the root, empty elsewhere.
  std::shared_ptr<Work> gather(std::vector<Tensor>& outputs, const Tensor& input,
                               const GatherOptions& opts = {});
  // inputs: size() tensors on the root, empty elsewhere.
  std::shared_ptr<Work> scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                const ScatterOptions& opts = {});
  std::shared_ptr<Work> barrier(const BarrierOptions& opts = {});

  // Point-to-point. A message matches the recv with the same peer and tag; messages between
  // one pair with one tag arrive in the order they were sent.
  std::shared_ptr<Work> send(std::vector<Tensor>& tensors, int dst_rank, int tag = 0);
  std::shared_ptr<Work> recv(std::vector<Tensor>& tensors, int src_rank, int tag = 0);
  // Several sends and receives posted together (torch.distributed.batch_isend_irecv), one
  // Work per op, in order. A ring step is one batch: its send and its receive. Transports
  // that must see both at once (NCCL, where a send can wait for a receive the peer queued
  // behind its own send) take the batch whole; the others post op by op.
  std::vector<std::shared_ptr<Work>> batch_isend_irecv(std::vector<P2POp>& ops);

  // True while a collective the group gave up on (see abandon_running_collective) still
  // holds the communication thread inside the transport. Destroying the group then waits
  // until the transport lets go, at the latest at the collective's timeout;
  // destroy_process_group() and process exit keep such a group instead of waiting.
  bool transport_stuck() const;

 protected:
  // What a backend gets for one collective: its number (use it as the transport's tag so
  // concurrent groups never mix messages) and the timeout to give the transport.
  struct CollectiveContext {
    uint64_t seq;
    std::chrono::milliseconds timeout;
    // What capture_ready() returned on the caller's thread (null for most backends).
    std::shared_ptr<void> ready;
  };

  // Called on the caller's thread as a collective is queued. A backend whose transport runs
  // on a stream of its own returns what the collective must wait for there — NCCL: an event
  // recorded on the caller's current CUDA stream, so kernels the caller queued before the
  // collective (the ones writing its tensor) finish before NCCL reads it.
  virtual std::shared_ptr<void> capture_ready() { return nullptr; }

  // The transport. Collectives run on the communication thread, one at a time; every
  // tensor is contiguous and on backend_device(), with the checks above already passed.
  // They block until done and throw on failure (the message will be prefixed with the op
  // and its number).
  virtual Device backend_device() const { return Device(kCPU); }
  // op is never AVG: the base sums, then divides by size() (the same for reduce_scatter).
  virtual void run_allreduce(Tensor& tensor, ReduceOp op, const CollectiveContext& ctx) = 0;
  virtual void run_broadcast(Tensor& tensor, int root, const CollectiveContext& ctx) = 0;
  virtual void run_allgather(Tensor& output, const Tensor& input, const CollectiveContext& ctx) = 0;
  virtual void run_reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op,
                                  const CollectiveContext& ctx) = 0;
  virtual void run_barrier(const CollectiveContext& ctx) = 0;
  // Defaults built from allgather (every rank receives; the root keeps what it needs) and
  // broadcast; a backend with its own gather/scatter overrides them.
  virtual void run_gather(std::vector<Tensor>& outputs, const Tensor& input, int root,
                          const CollectiveContext& ctx);
  virtual void run_scatter(Tensor& output, const std::vector<Tensor>& inputs, int root,
                           const CollectiveContext& ctx);
  // Posted from the caller's thread; the returned Work completes when the transport is done
  // with the tensor (send) or the tensor holds the message (recv).
  virtual std::shared_ptr<Work> post_send(const Tensor& tensor, int dst, int tag,
                                          std::chrono::milliseconds timeout) = 0;
  virtual std::shared_ptr<Work> post_recv(Tensor& tensor, int src, int tag,
                                          std::chrono::milliseconds timeout) = 0;
  // batch_isend_irecv's transport (ops checked and staged); the default posts op by op.
  virtual std::vector<std::shared_ptr<Work>> post_batch(std::vector<P2POp>& ops,
                                                        std::chrono::milliseconds timeout);

  // Subclasses call start() last in their constructor, once the transport is connected,
  // and stop() first in their destructor (it finishes queued collectives and joins the
  // communication thread, which must not run a backend that is half destroyed).
  void start();
  void stop();

  // The sequence number of the collective the communication thread runs now, if any.
  std::optional<uint64_t> running_collective() const;
  // Gives up on the group: fails the running collective's Work now, with the message the
  // communication thread would give it for `reason`, while that thread is still inside the
  // transport (its own finish comes later and is ignored), fails every queued collective,
  // and makes every later call an error naming `reason`. For a backend that learns of a
  // failure its transport missed (gloo: a peer that died mid-message). Returns whether a
  // collective was running.
  bool abandon_running_collective(const std::string& reason);

 private:
  struct Impl;
  struct Task;  // one queued collective (process_group.cpp)
  // Numbers the collective and queues `body` for the communication thread. `described` is
  // the tensor the DETAIL check fingerprints (undefined for barrier).
  std::shared_ptr<Work> enqueue(const char* op, std::chrono::milliseconds timeout,
                                std::vector<Tensor> outputs, const Tensor& described,
                                std::function<void(const CollectiveContext&)> body);
  void run_task(Task& task);  // on the communication thread
  // "<op> #<seq>: <what> — <which ranks did not join>", the message of a failed collective.
  std::string failure_message(const char* op, uint64_t seq, const std::string& what) const;
  void check_fingerprints(const Task& task);  // GLASS_DISTRIBUTED_DEBUG=DETAIL

  int rank_;
  int size_;
  Options options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace glass::distributed
