// distributed/distributed.h — torch.distributed's free functions over a default group.
//
// init_process_group() makes the default group (one per process; per thread for the
// threads backend, whose ranks are threads); the free functions run on it, or on the group
// given, and block unless async_op is true — then they return the Work, as in
// torch.distributed. Invariant: every call on a group that is not initialized, destroyed,
// or that this rank is not a member of is an error that says so.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "distributed/process_group.h"
#include "distributed/store.h"
#include "distributed/types.h"
#include "distributed/work.h"

namespace glass::distributed {

struct InitOptions {
  // "env://" reads torchrun's variables (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE,
  // LOCAL_RANK, LOCAL_WORLD_SIZE; see env.h); "tcp://host:port" names the master and takes
  // rank and world_size from here. Ignored when a store is given.
  std::string init_method = "env://";
  int world_size = -1;
  int rank = -1;
  std::shared_ptr<Store> store;
  std::chrono::milliseconds timeout = kDefaultTimeout;
  std::string group_name = "default";
};

// backend: "gloo", "nccl", "mpi" or "threads" (see backends/). Also connects the store,
// records this rank's exit in it (so others can name a rank that died), and sets the rank
// that core's events are tagged with.
void init_process_group(const std::string& backend, const InitOptions& options = {});
void destroy_process_group();
bool is_initialized();
int get_rank();                                 // in the default group
int get_world_size();                           // in the default group
std::shared_ptr<ProcessGroup> default_group();  // throws when not initialized

// A group of some ranks of the default group; every rank of the default group must call it
// with the same list (as in torch.distributed). Ranks outside the list get nullptr.
std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks);

// Backends register a factory under their name; nccl and mpi exist only where built.
using BackendFactory = std::function<std::shared_ptr<ProcessGroup>(
    std::shared_ptr<Store> store, int rank, int world_size, const ProcessGroup::Options&)>;
void register_backend(const std::string& name, BackendFactory factory);
bool is_backend_available(const std::string& name);

// torch.distributed's functions. group = nullptr means the default group. With async_op
// they return the Work; otherwise they wait and return nullptr.
std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM,
                                 std::shared_ptr<ProcessGroup> group = nullptr,
                                 bool async_op = false);
std::shared_ptr<Work> broadcast(Tensor& tensor, int src,
                                std::shared_ptr<ProcessGroup> group = nullptr,
                                bool async_op = false);
std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input,
                                             std::shared_ptr<ProcessGroup> group = nullptr,
                                             bool async_op = false);
std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input,
                                            ReduceOp op = ReduceOp::SUM,
                                            std::shared_ptr<ProcessGroup> group = nullptr,
                                            bool async_op = false);
// gather_list: world_size tensors on dst, empty elsewhere. scatter_list likewise on src.
std::shared_ptr<Work> gather(const Tensor& tensor, std::vector<Tensor>& gather_list, int dst = 0,
                             std::shared_ptr<ProcessGroup> group = nullptr, bool async_op = false);
std::shared_ptr<Work> scatter(Tensor& tensor, const std::vector<Tensor>& scatter_list, int src = 0,
                              std::shared_ptr<ProcessGroup> group = nullptr, bool async_op = false);
// send/recv block (torch's isend/irecv are the async forms).
void send(const Tensor& tensor, int dst, std::shared_ptr<ProcessGroup> group = nullptr,
          int tag = 0);
void recv(Tensor& tensor, int src, std::shared_ptr<ProcessGroup> group = nullptr, int tag = 0);
std::shared_ptr<Work> isend(const Tensor& tensor, int dst,
                            std::shared_ptr<ProcessGroup> group = nullptr, int tag = 0);
// Several isend/irecv posted together; one Work per op (see ProcessGroup::batch_isend_irecv).
std::vector<std::shared_ptr<Work>> batch_isend_irecv(std::vector<P2POp>& ops,
                                                     std::shared_ptr<ProcessGroup> group = nullptr);
std::shared_ptr<Work> irecv(Tensor& tensor, int src, std::shared_ptr<ProcessGroup> group = nullptr,
                            int tag = 0);
std::shared_ptr<Work> barrier(std::shared_ptr<ProcessGroup> group = nullptr, bool async_op = false);

}  // namespace glass::distributed
