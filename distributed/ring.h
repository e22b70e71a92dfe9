// distributed/ring.h — ring all-reduce, written out on send/recv (the teaching algorithm).
//
// The tensor is cut into world_size chunks. Reduce-scatter: in n−1 steps each rank sends
// one chunk to its right neighbour while it receives another from its left and adds its own
// part in; chunk c starts at rank c, so after n−1 steps rank r holds the full sum of chunk
// (r + 1) mod n. All-gather: n−1 more steps
// pass the finished chunks around the ring. Each rank sends 2(n−1)/n of the tensor in all,
// whatever n is — which is why the ring is bandwidth-optimal. Invariant: every rank ends
// with the same bits (chunk c is summed in the same order on its way round, then copied).
#pragma once

#include <functional>

#include "core/tensor.h"
#include "distributed/process_group.h"

namespace glass::distributed {

// Reduces `tensor` (contiguous) across `group` in place. op: SUM, PRODUCT, MAX, MIN, or
// AVG (floating dtypes only: the sum, then divided by the world size). Uses only
// group.send / group.recv, with tag kRingTag.
void ring_all_reduce(ProcessGroup& group, Tensor& tensor, ReduceOp op = ReduceOp::SUM);
// "RG": at most 32767, the largest tag every MPI must accept.
inline constexpr int kRingTag = 0x5247;

// Chunk c of a tensor of `numel` elements cut into n chunks: [begin, begin + length). The
// first numel % n chunks get one element more, so sizes differ by at most one.
struct RingChunk {
  int64_t begin;
  int64_t length;
};
RingChunk ring_chunk(int64_t numel, int n, int c);

// How many messages each chunk of a step travels as: about kRingSegmentBytes each, at most
// kRingMaxSegments, never more than the smallest chunk has elements. The receiver adds
// segment k while segment k + 1 is still on the wire; every rank computes the same count, and
// cuts a chunk into segments with ring_chunk(chunk length, segments, k). The sizes are
// measured, not derived (bench/RESULTS.md): each segment costs a message's hand-offs, so on
// loopback 1 MiB segments lost to 2 MiB ones, and whole chunks lost at 64 MiB.
inline constexpr int64_t kRingSegmentBytes = 2 << 20;
inline constexpr int kRingMaxSegments = 8;
int ring_segments(int64_t numel, int n, int64_t element_size);

// The order ring_all_reduce adds in, for checking it bit for bit without a ring: chunk c of
// the result is (((x_c + x_{c+1}) + x_{c+2}) + …) + x_{c−1}, rank indices mod n.
Tensor ring_reference_sum(const std::vector<Tensor>& per_rank, int world_size);

// Watching the ring step by step (the viewer's animation, lesson 10's figures). After each
// of its 2(n−1) steps, ring_all_reduce calls this thread's observer, if one is set, with
// what the step moved and the rank's whole tensor as it is after the step (flattened).
// The observer is per thread, because with the threads backend each rank is a thread; when
// none is set the only cost is one test of an empty std::function per step.
struct RingStep {
  int rank = 0, world = 1;
  bool gather_phase = false;  // false: reduce-scatter; true: all-gather
  int step = 0;               // 0 .. n−2 within its phase
  int send_chunk = 0;         // sent to rank + 1 (mod n)
  int recv_chunk = 0;         // received from rank − 1 (mod n), in place after the step
  Tensor tensor;              // this rank's tensor after the step, flattened (a view of it)
};
using RingObserver = std::function<void(const RingStep&)>;

// RAII: `observer` watches every ring_all_reduce this thread runs while the guard lives,
// then the previous observer (usually none) is restored.
class RingObserverGuard {
 public:
  explicit RingObserverGuard(RingObserver observer);
  ~RingObserverGuard();
  RingObserverGuard(const RingObserverGuard&) = delete;
  RingObserverGuard& operator=(const RingObserverGuard&) = delete;

 private:
  RingObserver previous_;
};

}  // namespace glass::distributed
