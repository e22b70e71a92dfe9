// distributed/ring.cpp — ring all-reduce on send/recv: reduce-scatter, then all-gather.
//
// Read it beside the seed's picture of the ring: n ranks, n chunks, 2(n−1) steps. In every
// step each rank sends one chunk to its right neighbour and receives one from its left, so
// all n links carry data at once and no rank sends more than 1/n of the tensor per step.
// Two things only make it faster, neither changes a bit of the result: a received partial is
// added into the rank's own chunk in place (no copy back), and a large chunk travels as
// several segments (ring_segments), so that adding segment k overlaps the arrival of k + 1.
// The observer still sees the tensor after each whole step.
#include "distributed/ring.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/ops/factories.h"

namespace glass::distributed {

RingChunk ring_chunk(int64_t numel, int n, int c) {
  const int64_t base = numel / n;
  const int64_t extra = numel % n;  // the first `extra` chunks hold one more element
  const int64_t begin = c * base + std::min<int64_t>(c, extra);
  return {begin, base + (c < extra ? 1 : 0)};
}

// One message per step leaves the reduction and the wire taking turns (receive a whole chunk,
// then add it, then send it on); in segments, as in Gloo's ring, the adds overlap the wire.
int ring_segments(int64_t numel, int n, int64_t element_size) {
  const int64_t chunk_bytes = ring_chunk(numel, n, 0).length * element_size;
  const int64_t wanted = std::min<int64_t>(
      (chunk_bytes + kRingSegmentBytes - 1) / kRingSegmentBytes, kRingMaxSegments);
  return static_cast<int>(std::max<int64_t>(1, std::min(wanted, numel / n)));
}

namespace {

// own = own ∘ received, in place. The order the ring adds in is (((x_c + x_{c+1}) + …),
// the partial that arrives on the left: + and × are commutative in IEEE arithmetic (NaN
// payloads aside), so own + received has the same bits as received + own and needs no copy
// back. max and min are not (max(+0, −0) depends on the order), so they keep the received
// value on the left and write the result over `own`.
void combine_into(Tensor& own, const Tensor& received, ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG: own.add_(received); return;
    case ReduceOp::PRODUCT: own.mul_(received); return;
    case ReduceOp::MAX: own.copy_(received.maximum(own)); return;
    case ReduceOp::MIN: own.copy_(received.minimum(own)); return;
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
  // like NCCL must see both halves of the step at once. Each chunk travels as `segments`
  // messages (sender and receiver cut it alike); `on_segment(k)` runs as soon as segment k
  // has arrived, while the later ones are still on the wire.
  const int segments = ring_segments(numel, n, flat.element_size());
  auto exchange = [&](int send_c, Tensor into, const std::function<void(int)>& on_segment) {
    Tensor out = chunk(send_c);
    std::vector<P2POp> step;
    for (int k = 0; k < segments; ++k) {
      const RingChunk send_k = ring_chunk(out.numel(), segments, k);
      const RingChunk recv_k = ring_chunk(into.numel(), segments, k);
      step.push_back(
          {P2POp::Kind::Send, out.narrow(0, send_k.begin, send_k.length), right, kRingTag});
      step.push_back(
          {P2POp::Kind::Recv, into.narrow(0, recv_k.begin, recv_k.length), left, kRingTag});
    }
    std::vector<std::shared_ptr<Work>> works = group.batch_isend_irecv(step);
    for (int k = 0; k < segments; ++k) {
      works[2 * k + 1]->wait();
      if (on_segment) on_segment(k);
    }
    for (int k = 0; k < segments; ++k) works[2 * k]->wait();
  };

  if (n > 1) {
    // Reduce-scatter: at step s rank r passes on chunk r − s (which it has just added its own
    // part to) and receives chunk r − s − 1. After n − 1 steps chunk r + 1 is complete here.
    Tensor partial = empty({ring_chunk(numel, n, 0).length}, flat.options());
    for (int s = 0; s < n - 1; ++s) {
      const int recv_c = mod(r - s - 1, n);
      Tensor own = chunk(recv_c);
      Tensor received = partial.narrow(0, 0, own.numel());
      exchange(mod(r - s, n), received, [&](int k) {
        const RingChunk seg = ring_chunk(own.numel(), segments, k);
        Tensor own_k = own.narrow(0, seg.begin, seg.length);
        combine_into(own_k, received.narrow(0, seg.begin, seg.length), op);
      });
      if (t_ring_observer) t_ring_observer({r, n, false, s, mod(r - s, n), recv_c, flat});
    }
    // All-gather: pass the finished chunks round; each arrives straight in its place.
    for (int s = 0; s < n - 1; ++s) {
      exchange(mod(r + 1 - s, n), chunk(mod(r - s, n)), nullptr);
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
