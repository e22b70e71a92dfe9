// lessons/10_data_parallel/exercises/solution.cpp — the reference answers to lesson 10's
// exercises (exercises.h has the contracts). Try them yourself first, in student.cpp.
#include "exercises.h"

#include <numeric>

#include "autograd/variable.h"
#include "distributed/ring.h"
#include "nn/data/sampler.h"

namespace glass::lesson10 {

namespace {
int mod(int a, int n) { return ((a % n) + n) % n; }
}  // namespace

void my_ring_all_reduce(distributed::ProcessGroup& group, Tensor& tensor) {
  const int n = group.size(), r = group.rank();
  const int right = mod(r + 1, n), left = mod(r - 1, n);
  Tensor flat = tensor.view({-1});
  auto chunk = [&](int c) {
    const distributed::RingChunk k = distributed::ring_chunk(flat.numel(), n, c);
    return flat.narrow(0, k.begin, k.length);
  };
  // Both halves of a step are posted before either is waited for: if every rank waited for
  // its send first, and sends waited for their receiver, the ring would wait for itself.
  auto exchange = [&](int send_c, const Tensor& into) {
    std::vector<Tensor> out{chunk(send_c)}, in{into};
    auto sent = group.send(out, right);
    auto received = group.recv(in, left);
    received->wait();
    sent->wait();
  };
  // Reduce-scatter: at step s send chunk r − s on, and add this rank's part to chunk
  // r − s − 1 as it arrives. After n − 1 steps chunk r + 1 holds every rank's part.
  for (int s = 0; s < n - 1; ++s) {
    Tensor own = chunk(mod(r - s - 1, n));
    Tensor incoming = empty_like(own);
    exchange(mod(r - s, n), incoming);
    own.add_(incoming);
  }
  // All-gather: pass the finished chunks round, each received straight into its place.
  for (int s = 0; s < n - 1; ++s) exchange(mod(r + 1 - s, n), chunk(mod(r - s, n)));
}

void average_gradients_with_hooks(nn::Module& module, distributed::ProcessGroup& group) {
  for (const Tensor& p : module.parameters()) {
    if (!p.requires_grad()) continue;
    // Runs once p.grad() holds this backward's gradient: every rank reaches its hooks in the
    // same order (backward visits the same graph), so the all-reduces pair up.
    autograd::register_post_accumulate_grad_hook(p, [&group](const Tensor& param) {
      Tensor grad = param.grad();
      group.allreduce(grad)->wait();
      grad.div_(static_cast<double>(group.size()));
    });
  }
}

std::vector<size_t> my_distributed_indices(size_t n, size_t num_replicas, size_t rank, bool shuffle,
                                           uint64_t seed, size_t epoch) {
  std::vector<size_t> order(n);
  if (shuffle) {
    order = data::shuffled_order(n, seed + epoch);  // the same on every rank: same seed
  } else {
    std::iota(order.begin(), order.end(), size_t{0});
  }
  // Pad to a multiple of num_replicas, so every rank gets as many samples (and so runs as
  // many steps, each with its collectives) as every other.
  const size_t total = (n + num_replicas - 1) / num_replicas * num_replicas;
  for (size_t i = n; i < total; ++i) order.push_back(order[i % n]);
  std::vector<size_t> mine;
  for (size_t i = rank; i < total; i += num_replicas) mine.push_back(order[i]);
  return mine;
}

}  // namespace glass::lesson10
