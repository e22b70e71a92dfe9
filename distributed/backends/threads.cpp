// distributed/backends/threads.cpp — ThreadsProcessGroup: collectives as slots of a ThreadsWorld.
//
// Each collective is combined once, by the last rank to arrive, reading the ranks' inputs in
// order 0..n−1; so a float sum is ((x0 + x1) + x2) + x3 on every rank, bit for bit. An
// all-reduce divides that work: each rank reduces its n-th of the elements, in the same
// order, and writes it into every rank's tensor.
//
// The wall time of each collective on the simulated link is what a ring would take (n ranks,
// B bytes per rank):
//   allreduce       2(n−1) hops, 2(n−1)/n · B bytes  (reduce-scatter, then all-gather)
//   allgather       (n−1) hops,  (n−1)/n · B_output
//   reduce_scatter  (n−1) hops,  (n−1)/n · B_input
//   broadcast       (n−1) hops,  B  (pipelined along the ring)
//   barrier         2(n−1) hops, no bytes
//   send / recv     1 hop,       B
// Invariant: run_* see contiguous CPU tensors (the base staged them) of the dtype and size
// every rank agreed on (the world checks), so the loops below index raw memory safely.
#include "distributed/backends/threads.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/ops/factories.h"
#include "distributed/backends/threads_world.h"

namespace glass::distributed {

namespace {

// out[0, len) = x0 ⊕ x1 ⊕ … over elements [begin, begin + len) of the ranks' inputs, in rank
// order 0..n−1, so a float sum has the same bits wherever it is computed.
template <class T>
void reduce_range(const std::vector<std::vector<Tensor>>& inputs, ReduceOp op, int64_t begin,
                  int64_t len, T* out) {
  const T* first = inputs[0][0].data_ptr<T>() + begin;
  if (inputs.size() == 1) std::copy(first, first + len, out);
  for (size_t r = 1; r < inputs.size(); ++r) {
    const T* x = inputs[r][0].data_ptr<T>() + begin;
    const T* left = r == 1 ? first : out;  // the first pass reads rank 0 directly, no copy
    switch (op) {
      case ReduceOp::SUM:
        for (int64_t i = 0; i < len; ++i) out[i] = left[i] + x[i];
        break;
      case ReduceOp::PRODUCT:
        for (int64_t i = 0; i < len; ++i) out[i] = left[i] * x[i];
        break;
      case ReduceOp::MAX:
        for (int64_t i = 0; i < len; ++i) out[i] = std::max(left[i], x[i]);
        break;
      case ReduceOp::MIN:
        for (int64_t i = 0; i < len; ++i) out[i] = std::min(left[i], x[i]);
        break;
      case ReduceOp::AVG:
        GLASS_INTERNAL_ASSERT(false, "AVG reaches the backend as SUM (see process_group.h)");
    }
  }
}

// The whole reduction as one new flat tensor.
Tensor reduce_in_rank_order(const std::vector<std::vector<Tensor>>& inputs, ReduceOp op) {
  Tensor result = empty({inputs[0][0].numel()}, TensorOptions(inputs[0][0].dtype()));
  dispatch_numeric(result.dtype(), "threads allreduce", [&]<class T>() {
    reduce_range<T>(inputs, op, 0, result.numel(), result.data_ptr<T>());
  });
  return result;
}

// Elements [begin, end) of an all-reduce, written straight into every rank's tensor a block
// at a time: a block of the result is made in a small buffer that stays in cache and copied
// out to each rank. Every input of a block is read before any rank's copy of that block is
// written, and other blocks are untouched, so the inputs may be the outputs. Each rank's
// bytes are read once and written once, instead of a full-size result being made and then
// copied out by each rank: this runs on the ranks' own threads, taking its time from backward.
void reduce_into_every_rank(const std::vector<std::vector<Tensor>>& inputs, ReduceOp op,
                            int64_t begin, int64_t end) {
  const Tensor& any = inputs[0][0];
  dispatch_numeric(any.dtype(), "threads allreduce", [&]<class T>() {
    constexpr int64_t kBlock = (64 << 10) / static_cast<int64_t>(sizeof(T));  // 64 KiB
    std::vector<T> block(static_cast<size_t>(std::clamp<int64_t>(end - begin, 0, kBlock)));
    for (int64_t at = begin; at < end; at += kBlock) {
      const int64_t len = std::min(kBlock, end - at);
      reduce_range<T>(inputs, op, at, len, block.data());
      for (const auto& rank_inputs : inputs)
        std::copy(block.begin(), block.begin() + len, rank_inputs[0].data_ptr<T>() + at);
    }
  });
}

void copy_bytes(Tensor& dst, const Tensor& src, int64_t src_offset_elements) {
  std::memcpy(dst.data_ptr(),
              static_cast<const char*>(src.data_ptr()) + src_offset_elements * src.element_size(),
              static_cast<size_t>(dst.nbytes()));
}

class ThreadsProcessGroup final : public ProcessGroup {
 public:
  ThreadsProcessGroup(std::shared_ptr<ThreadsWorld> world, int rank, int size, Options options)
      : ProcessGroup(rank, size, std::move(options)), world_(std::move(world)) {
    start();
  }
  ~ThreadsProcessGroup() override {
    stop();                 // finishes what is queued (each wait bounded by its timeout)...
    world_->leave(rank());  // ...then whoever still waits for this rank fails at once
  }

  std::string backend_name() const override { return "threads"; }

 protected:
  void run_allreduce(Tensor& tensor, ReduceOp op, const CollectiveContext& ctx) override {
    const int n = size();
    // Rank r reduces and writes out the r-th n-th of the elements, for every rank — the share
    // of the work a ring's reduce-scatter and all-gather would give it.
    const int64_t numel = tensor.numel();
    world_->collective_shared(
        rank(), next_slot_++, call_of("allreduce", tensor, {tensor}, ctx),
        [op, n, numel](const auto& inputs, int part) {
          reduce_into_every_rank(inputs, op, numel * part / n, numel * (part + 1) / n);
        },
        world_->wire_time(2 * (n - 1), 2.0 * (n - 1) / n * tensor.nbytes()), ctx.timeout);
  }

  void run_broadcast(Tensor& tensor, int root, const CollectiveContext& ctx) override {
    const int n = size();
    Tensor result = meet("broadcast", tensor, {tensor}, ctx,
                         world_->wire_time(n - 1, static_cast<double>(tensor.nbytes())),
                         // A copy: the root may write its tensor as soon as its Work is done.
                         [root](const auto& inputs) { return inputs[root][0].clone(); });
    copy_bytes(tensor, result, 0);
  }

  void run_allgather(Tensor& output, const Tensor& input, const CollectiveContext& ctx) override {
    const int n = size();
    Tensor result = meet("allgather", input, {input}, ctx,
                         world_->wire_time(n - 1, 1.0 * (n - 1) / n * output.nbytes()),
                         [&output](const auto& inputs) {
                           Tensor all = empty({output.numel()}, TensorOptions(output.dtype()));
                           const int64_t block = inputs[0][0].numel();
                           for (size_t r = 0; r < inputs.size(); ++r) {
                             Tensor dst = all.narrow(0, static_cast<int64_t>(r) * block, block);
                             copy_bytes(dst, inputs[r][0], 0);
                           }
                           return all;
                         });
    copy_bytes(output, result, 0);
  }

  void run_reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op,
                          const CollectiveContext& ctx) override {
    const int n = size();
    Tensor result = meet("reduce_scatter", input, {input}, ctx,
                         world_->wire_time(n - 1, 1.0 * (n - 1) / n * input.nbytes()),
                         [op](const auto& inputs) { return reduce_in_rank_order(inputs, op); });
    copy_bytes(output, result, rank() * output.numel());
  }

  void run_barrier(const CollectiveContext& ctx) override {
    const int n = size();
    meet("barrier", Tensor(), {}, ctx, world_->wire_time(2 * (n - 1), 0),
         [](const auto&) { return Tensor(); });
  }

  std::shared_ptr<Work> post_send(const Tensor& tensor, int dst, int tag,
                                  std::chrono::milliseconds timeout) override {
    return world_->send(rank(), dst, tag, tensor, timeout);
  }

  std::shared_ptr<Work> post_recv(Tensor& tensor, int src, int tag,
                                  std::chrono::milliseconds timeout) override {
    return world_->recv(rank(), src, tag, tensor, timeout);
  }

 private:
  // One collective in the world; `described` is what every rank must agree on.
  Tensor meet(const char* op, const Tensor& described, std::vector<Tensor> inputs,
              const CollectiveContext& ctx, std::chrono::nanoseconds wire,
              const ThreadsWorld::Combine& combine) {
    return world_->collective(rank(), next_slot_++, call_of(op, described, std::move(inputs), ctx),
                              combine, wire, ctx.timeout);
  }
  static ThreadsWorld::Call call_of(const char* op, const Tensor& described,
                                    std::vector<Tensor> inputs, const CollectiveContext& ctx) {
    ThreadsWorld::Call call;
    call.op = op;
    call.seq = ctx.seq;
    if (described.defined()) {
      call.dtype = described.dtype();
      call.numel = described.numel();
    }
    call.inputs = std::move(inputs);
    return call;
  }

  std::shared_ptr<ThreadsWorld> world_;
  // Slots count this rank's collectives (the DETAIL check's allgather included), which agree
  // across ranks because every rank runs the same calls in the same order. Touched only on
  // the communication thread.
  uint64_t next_slot_ = 0;
};

thread_local const ThreadsRendezvous* t_rendezvous = nullptr;

}  // namespace

const ThreadsRendezvous* current_threads_rendezvous() { return t_rendezvous; }

namespace threads_internal {
// threads_run.cpp sets and clears it around each rank's function.
void set_current_threads_rendezvous(const ThreadsRendezvous* rendezvous) {
  t_rendezvous = rendezvous;
}
}  // namespace threads_internal

std::shared_ptr<ProcessGroup> make_threads_group(std::shared_ptr<Store> store, int rank, int size,
                                                 const ProcessGroup::Options& options,
                                                 ThreadsLinkModel link) {
  GLASS_CHECK(store != nullptr, "threads backend: a store is needed (the ranks meet through it)");
  GLASS_CHECK(size >= 1, "threads backend: the group size must be at least 1, got ", size);
  GLASS_CHECK(rank >= 0 && rank < size, "threads backend: rank ", rank,
              " is out of range for a group of size ", size);
  ProcessGroup::Options opts = options;
  if (!opts.store) opts.store = store;
  auto world = ThreadsWorld::join(store, opts.group_name, rank, size, link);
  return std::make_shared<ThreadsProcessGroup>(std::move(world), rank, size, std::move(opts));
}

std::shared_ptr<ProcessGroup> make_threads_group(std::shared_ptr<Store> store, int rank, int size,
                                                 const ProcessGroup::Options& options) {
  const ThreadsRendezvous* rendezvous = current_threads_rendezvous();
  if (rendezvous == nullptr) return make_threads_group(std::move(store), rank, size, options, {});
  ProcessGroup::Options opts = options;
  if (rendezvous->timeout.count() > 0) opts.timeout = std::min(opts.timeout, rendezvous->timeout);
  return make_threads_group(std::move(store), rank, size, opts, rendezvous->link);
}

}  // namespace glass::distributed
