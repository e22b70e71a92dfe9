// distributed/backends/nccl.h — the nccl backend: collectives between GPUs with NVIDIA's NCCL.
//
// Rank r drives one GPU, cuda:LOCAL_RANK (glassrun and torchrun set it). Rank 0 asks NCCL for
// a unique id, the others read it from the group's store — the only thing NCCL needs from
// us — and every rank then joins the communicator with ncclCommInitRank. Collectives are
// queued on the device's default stream by the communication thread, which waits for them
// (polling, so a peer that never comes is a timeout, not a hang: the communicator is then
// aborted). A send and a receive posted together (batch_isend_irecv, as one ring step is)
// go into one ncclGroupStart/End, which NCCL needs to pair them.
//
// libnccl (~200 MB) is loaded with dlopen at first use, not linked: binaries start and run
// every other backend on machines without it, and say so when asked for nccl. On the
// simulated GPU there is no NCCL: use gloo, which stages CUDA tensors through host memory.
//
// Invariants: only the communication thread and batch_isend_irecv call into the
// communicator, one at a time (NCCL communicators are not thread-safe); a collective's Work
// completes only after its kernel has finished on the device.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/process_group.h"
#include "distributed/store.h"

struct ncclComm;  // NCCL's communicator (ncclComm_t); nccl.h stays out of this header

namespace glass::distributed {

// NCCL's version as "2.28.9", or why it cannot be loaded.
std::string nccl_version();
bool nccl_is_loadable(std::string* why_not = nullptr);

// The rendezvous, apart so it can be tested without a GPU: rank 0 calls `generate` and
// publishes the bytes under "nccl/unique_id"; every rank returns them (the others wait up to
// `timeout`). `generate` is NCCL's ncclGetUniqueId in the backend.
std::vector<uint8_t> exchange_unique_id(Store& store, int rank,
                                        const std::function<std::vector<uint8_t>()>& generate,
                                        std::chrono::milliseconds timeout);
// ncclGetUniqueId through the loaded library (it needs no GPU: it names this host's
// bootstrap address). Throws when NCCL cannot be loaded.
std::vector<uint8_t> nccl_unique_id();

struct NCCLOptions {
  int device = -1;  // -1: LOCAL_RANK from the environment, else rank % device_count()
};

class NCCLProcessGroup : public ProcessGroup {
 public:
  NCCLProcessGroup(std::shared_ptr<Store> store, int rank, int size, const Options& options,
                   NCCLOptions nccl = {});
  ~NCCLProcessGroup() override;
  std::string backend_name() const override { return "nccl"; }
  int device_index() const { return device_; }

 protected:
  Device backend_device() const override;
  void run_allreduce(Tensor& tensor, ReduceOp op, const CollectiveContext& ctx) override;
  void run_broadcast(Tensor& tensor, int root, const CollectiveContext& ctx) override;
  void run_allgather(Tensor& output, const Tensor& input, const CollectiveContext& ctx) override;
  void run_reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op,
                          const CollectiveContext& ctx) override;
  void run_barrier(const CollectiveContext& ctx) override;
  std::shared_ptr<Work> post_send(const Tensor& tensor, int dst, int tag,
                                  std::chrono::milliseconds timeout) override;
  std::shared_ptr<Work> post_recv(Tensor& tensor, int src, int tag,
                                  std::chrono::milliseconds timeout) override;
  std::vector<std::shared_ptr<Work>> post_batch(std::vector<P2POp>& ops,
                                                std::chrono::milliseconds timeout) override;

 private:
  // Waits (polling the stream) for what was queued on `stream`; on timeout or an
  // asynchronous NCCL error, aborts the communicator and throws naming `what`.
  void wait_for_stream(void* stream, const char* what, std::chrono::milliseconds timeout);

  int device_ = 0;
  ncclComm* comm_ = nullptr;
  std::mutex comm_mutex_;  // one caller into the communicator at a time
  bool aborted_ = false;
  std::mutex waiters_mutex_;
  struct Waiter {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Waiter> waiters_;  // one per batch of p2p ops still in flight
};

std::shared_ptr<ProcessGroup> make_nccl_group(std::shared_ptr<Store> store, int rank, int size,
                                              const ProcessGroup::Options& options);

}  // namespace glass::distributed
