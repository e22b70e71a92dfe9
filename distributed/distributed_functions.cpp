// distributed/distributed_functions.cpp — torch.distributed's free functions.
//
// Each one is thin on purpose: pick the group (the one given, else the default), call the
// ProcessGroup method (which checks the arguments and runs the op on the group's
// communication thread), and wait unless async_op. Invariant: without async_op, the call
// returns only once the op is complete — its error, if any, is thrown here.
#include <utility>

#include "core/error.h"
#include "distributed/distributed.h"

namespace glass::distributed {
namespace {

std::shared_ptr<ProcessGroup> pick(std::shared_ptr<ProcessGroup> group, const char* caller) {
  if (group) return group;
  GLASS_CHECK(is_initialized(), caller,
              ": no group given and the default process group is not initialized; call "
              "init_process_group() first");
  return default_group();
}

std::shared_ptr<Work> wait_unless_async(std::shared_ptr<Work> work, bool async_op) {
  if (async_op) return work;
  work->wait();
  return nullptr;
}

}  // namespace

std::shared_ptr<Work> all_reduce(Tensor& tensor, ReduceOp op, std::shared_ptr<ProcessGroup> group,
                                 bool async_op) {
  AllreduceOptions opts;
  opts.reduceOp = op;
  return wait_unless_async(pick(std::move(group), "all_reduce")->allreduce(tensor, opts), async_op);
}

std::shared_ptr<Work> broadcast(Tensor& tensor, int src, std::shared_ptr<ProcessGroup> group,
                                bool async_op) {
  BroadcastOptions opts;
  opts.rootRank = src;
  return wait_unless_async(pick(std::move(group), "broadcast")->broadcast(tensor, opts), async_op);
}

std::shared_ptr<Work> all_gather_into_tensor(Tensor& output, const Tensor& input,
                                             std::shared_ptr<ProcessGroup> group, bool async_op) {
  return wait_unless_async(
      pick(std::move(group), "all_gather_into_tensor")->allgather(output, input), async_op);
}

std::shared_ptr<Work> reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op,
                                            std::shared_ptr<ProcessGroup> group, bool async_op) {
  ReduceScatterOptions opts;
  opts.reduceOp = op;
  return wait_unless_async(
      pick(std::move(group), "reduce_scatter_tensor")->reduce_scatter(output, input, opts),
      async_op);
}

std::shared_ptr<Work> gather(const Tensor& tensor, std::vector<Tensor>& gather_list, int dst,
                             std::shared_ptr<ProcessGroup> group, bool async_op) {
  GatherOptions opts;
  opts.rootRank = dst;
  return wait_unless_async(pick(std::move(group), "gather")->gather(gather_list, tensor, opts),
                           async_op);
}

std::shared_ptr<Work> scatter(Tensor& tensor, const std::vector<Tensor>& scatter_list, int src,
                              std::shared_ptr<ProcessGroup> group, bool async_op) {
  ScatterOptions opts;
  opts.rootRank = src;
  return wait_unless_async(pick(std::move(group), "scatter")->scatter(tensor, scatter_list, opts),
                           async_op);
}

std::shared_ptr<Work> isend(const Tensor& tensor, int dst, std::shared_ptr<ProcessGroup> group,
                            int tag) {
  // The list shares the tensor's storage: the transport reads the caller's data.
  std::vector<Tensor> tensors{tensor};
  return pick(std::move(group), "isend")->send(tensors, dst, tag);
}

std::vector<std::shared_ptr<Work>> batch_isend_irecv(std::vector<P2POp>& ops,
                                                     std::shared_ptr<ProcessGroup> group) {
  return pick(std::move(group), "batch_isend_irecv")->batch_isend_irecv(ops);
}

std::shared_ptr<Work> irecv(Tensor& tensor, int src, std::shared_ptr<ProcessGroup> group, int tag) {
  // The list shares the tensor's storage: the message lands in the caller's tensor.
  std::vector<Tensor> tensors{tensor};
  return pick(std::move(group), "irecv")->recv(tensors, src, tag);
}

void send(const Tensor& tensor, int dst, std::shared_ptr<ProcessGroup> group, int tag) {
  isend(tensor, dst, std::move(group), tag)->wait();
}

void recv(Tensor& tensor, int src, std::shared_ptr<ProcessGroup> group, int tag) {
  irecv(tensor, src, std::move(group), tag)->wait();
}

std::shared_ptr<Work> barrier(std::shared_ptr<ProcessGroup> group, bool async_op) {
  return wait_unless_async(pick(std::move(group), "barrier")->barrier(), async_op);
}

}  // namespace glass::distributed
