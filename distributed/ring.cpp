// distributed/ring.cpp — ring all-reduce on send/recv: reduce-scatter, then all-gather.
//
// Read it beside the seed's picture of the ring: n ranks, n chunks, 2(n−1) steps. In every
// step each rank sends one chunk to its right neighbour and receives one from its left, so
// all n links carry data at once and no rank sends more than 1/n of the tensor per step.
#include "distributed/ring.h"

#include <utility>

#include "core/error.h"
#include "core/ops/factories.h"

namespace glass::distributed {

RingChunk ring_chunk(int64_t numel, int n, int c) {
  const int64_t base = numel / n;
  const int64_t extra = numel % n;  // the first `extra` chunks hold one more element
  const int64_t begin = c * base + std::min<int64_t>(c, extra);
  return {begin, base + (c < extra ? 1 : 0)};
}

namespace {

// into = received ∘ own, the received partial on the left: that fixes the summation order
// (chunk c is ((x_c + x_{c+1}) + …) on its way round), which ring_reference_sum repeats.
void combine(Tensor& received, const Tensor& own, ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG: received.add_(own); return;
    case ReduceOp::PRODUCT: received.mul_(own); return;
    case ReduceOp::MAX: received.copy_(received.maximum(own)); return;
    case ReduceOp::MIN: received.copy_(received.minimum(own)); return;
  }
}

int mod(int a, int n) { return ((a % n) + n) % n; }

// Per thread: with the threads backend every rank is a thread and watches its own steps.
thread_local RingObserver t_ring_observer;

}  // namespace

void ring_all_reduce(ProcessGroup& group, Tensor& tensor, ReduceOp op) {
  GLASS_CHECK(tensor.defined(), "ring_all_reduce: the tensor is undefined");
  GLASS_CHECK(tensor.is_contiguous(), "ring_all_reduce: the tensor must be contiguous (sizes ",
              tensor.sizes(), ", strides ", tensor.strides(), ")");
  GLASS_CHECK(op != ReduceOp::AVG || is_floating_type(tensor.scalar_type()),
              "ring_all_reduce: AVG needs a floating dtype, got ", tensor.scalar_type(),
              " (an integer average would have to round)");
  const int n = group.size();
  const int r = group.rank();
  const int right = mod(r + 1, n);
  const int left = mod(r - 1, n);
  Tensor flat = tensor.view({-1});
  const int64_t numel = flat.numel();
  auto chunk = [&](int c) {
    const RingChunk k = ring_chunk(numel, n, c);
    return flat.narrow(0, k.begin, k.length);
  };

  // One step: send chunk `send_c` right while receiving into `into` from the left, posted
  // together as one batch — a blocking send here would deadlock the ring, and a transport
  // like NCCL must see both halves of the step at once.
  auto exchange = [&](int send_c, Tensor into) {
    std::vector<P2POp> step{{P2POp::Kind::Send, chunk(send_c), right, kRingTag},
                            {P2POp::Kind::Recv, std::move(into), left, kRingTag}};
    for (auto& work : group.batch_isend_irecv(step)) work->wait();
  };

  if (n > 1) {
    // Reduce-scatter: at step s rank r passes on chunk r − s (which it has just added its own
    // part to) and receives chunk r − s − 1. After n − 1 steps chunk r + 1 is complete here.
    Tensor partial = empty({ring_chunk(numel, n, 0).length}, flat.options());
    for (int s = 0; s < n - 1; ++s) {
      const int recv_c = mod(r - s - 1, n);
      Tensor received = partial.narrow(0, 0, chunk(recv_c).numel());
      exchange(mod(r - s, n), received);
      Tensor own = chunk(recv_c);
      combine(received, own, op);
      own.copy_(received);
      if (t_ring_observer) t_ring_observer({r, n, false, s, mod(r - s, n), recv_c, flat});
    }
    // All-gather: pass the finished chunks round; each arrives straight in its place.
    for (int s = 0; s < n - 1; ++s) {
      exchange(mod(r + 1 - s, n), chunk(mod(r - s, n)));
      if (t_ring_observer) t_ring_observer({r, n, true, s, mod(r + 1 - s, n), mod(r - s, n), flat});
    }
  }
  if (op == ReduceOp::AVG) tensor.div_(static_cast<double>(n));
}

RingObserverGuard::RingObserverGuard(RingObserver observer)
    : previous_(std::exchange(t_ring_observer, std::move(observer))) {}

RingObserverGuard::~RingObserverGuard() { t_ring_observer = std::move(previous_); }

Tensor ring_reference_sum(const std::vector<Tensor>& per_rank, int world_size) {
  GLASS_CHECK(static_cast<int>(per_rank.size()) == world_size, "ring_reference_sum: got ",
              per_rank.size(), " tensors for a world of ", world_size);
  Tensor out = empty(per_rank.at(0).sizes(), per_rank[0].options());
  Tensor flat = out.view({-1});
  const int64_t numel = flat.numel();
  for (int c = 0; c < world_size; ++c) {
    const RingChunk k = ring_chunk(numel, world_size, c);
    Tensor acc = per_rank[c].reshape({-1}).narrow(0, k.begin, k.length).clone();
    for (int step = 1; step < world_size; ++step)
      acc.add_(per_rank[(c + step) % world_size].reshape({-1}).narrow(0, k.begin, k.length));
    flat.narrow(0, k.begin, k.length).copy_(acc);
  }
  return out;
}

}  // namespace glass::distributed
