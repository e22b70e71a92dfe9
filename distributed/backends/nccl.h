// distributed/backends/nccl.h — the nccl backend: collectives between GPUs with NVIDIA's NCCL.
//
// Rank r drives one GPU, cuda:LOCAL_RANK (glassrun and torchrun set it). Rank 0 asks NCCL for
// unique ids, the others read them from the group's store — the only thing NCCL needs from
// us — and every rank then joins two communicators with ncclCommInitRank: one for the
// collectives, which only the communication thread uses, and one for point-to-point
// batches, which callers post from their own threads. NCCL requires every rank to issue the
// operations of one communicator in the same order; two threads sharing one would not.
//
// Streams: NCCL runs on streams of its own (one per communicator). Before a collective, its
// stream waits for an event recorded on the caller's current stream when the collective was
// queued (capture_ready), so the kernels that wrote the tensor are done before NCCL reads it;
// after it, an event on NCCL's stream tells when it finished. The communication thread polls
// that event, so a peer that never comes is a timeout (and the communicator is aborted), not
// a hang. A send and a receive posted together (batch_isend_irecv, as one ring step is) go
// into one ncclGroupStart/End, which NCCL needs to pair them.
//
// libnccl (~200 MB) is loaded with dlopen at first use, not linked: binaries start and run
// every other backend on machines without it, and say so when asked for nccl. On the
// simulated GPU there is no NCCL: use gloo, which stages CUDA tensors through host memory.
//
// Invariants: a Work completes only after its NCCL kernels have finished on the device; each
// communicator is entered by one thread at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cuda/stream.h"
#include "distributed/process_group.h"
#include "distributed/store.h"

struct ncclComm;  // NCCL's communicator (ncclComm_t); nccl.h stays out of this header

namespace glass::distributed {

// NCCL's version as "2.28.9", or why it cannot be loaded.
std::string nccl_version();
bool nccl_is_loadable(std::string* why_not = nullptr);

// The rendezvous, apart so it can be tested without a GPU: rank 0 calls `generate` and
// publishes the bytes under `key`; every rank returns them (the others wait up to
// `timeout`). `generate` is NCCL's ncclGetUniqueId in the backend.
std::vector<uint8_t> exchange_unique_id(Store& store, int rank,
                                        const std::function<std::vector<uint8_t>()>& generate,
                                        std::chrono::milliseconds timeout,
                                        const std::string& key = "nccl/unique_id");
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
  std::shared_ptr<void> capture_ready() override;
  // Makes the collective stream wait for what the collective's tensors depend on: the
  // caller's stream (ctx.ready) and the communication thread's own (its staging copies).
  void order_after_inputs(const CollectiveContext& ctx);
  // Records an event on `stream` and waits (polling) until the device passes it; on timeout
  // or an asynchronous NCCL error, aborts `comm` and throws naming `what`.
  void wait_until_done(const cuda::CUDAStream& stream, ncclComm* comm, const char* what,
                       std::chrono::milliseconds timeout);

  int device_ = 0;
  ncclComm* comm_ = nullptr;      // collectives: the communication thread only
  ncclComm* p2p_comm_ = nullptr;  // batch_isend_irecv: callers, one at a time
  std::optional<cuda::CUDAStream> stream_, p2p_stream_;
  std::mutex comm_mutex_;  // guards p2p_comm_ (and aborted_ with comm_)
  std::atomic<bool> aborted_{false};
  struct Waiter {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex waiters_mutex_;
  std::vector<Waiter> waiters_;  // one per batch of p2p ops still in flight
};

std::shared_ptr<ProcessGroup> make_nccl_group(std::shared_ptr<Store> store, int rank, int size,
                                              const ProcessGroup::Options& options);

}  // namespace glass::distributed
