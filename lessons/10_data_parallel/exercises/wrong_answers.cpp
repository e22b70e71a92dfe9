// lessons/10_data_parallel/exercises/wrong_answers.cpp — the wrong answers of
// wrong_answers.h, each wrong in the one way its comment names.
#include "wrong_answers.h"

#include <numeric>

#include <memory>

#include "autograd/variable.h"
#include "distributed/backends/threads.h"
#include "distributed/ddp.h"
#include "distributed/reducer.h"
#include "distributed/ring.h"
#include "nn/data/sampler.h"

namespace glass::lesson10::wrong {

namespace {
int mod(int a, int n) { return ((a % n) + n) % n; }

Tensor chunk_of(const Tensor& flat, int n, int c) {
  const distributed::RingChunk k = distributed::ring_chunk(flat.numel(), n, c);
  return flat.narrow(0, k.begin, k.length);
}

void exchange(distributed::ProcessGroup& group, const Tensor& out, const Tensor& in) {
  const int n = group.size(), r = group.rank();
  std::vector<Tensor> o{out}, i{in};
  auto sent = group.send(o, mod(r + 1, n));
  auto received = group.recv(i, mod(r - 1, n));
  received->wait();
  sent->wait();
}
}  // namespace

// Stops after the reduce-scatter: each rank holds one complete chunk, the others partial.
void ring_reduce_scatter_only(distributed::ProcessGroup& group, Tensor& tensor) {
  const int n = group.size(), r = group.rank();
  Tensor flat = tensor.view({-1});
  for (int s = 0; s < n - 1; ++s) {
    Tensor own = chunk_of(flat, n, mod(r - s - 1, n));
    Tensor incoming = empty_like(own);
    exchange(group, chunk_of(flat, n, mod(r - s, n)), incoming);
    own.add_(incoming);
  }
}

// Right values, but rank 0 sends and receives (n − 1) · size, and talks to every rank.
void ring_gather_to_rank_zero(distributed::ProcessGroup& group, Tensor& tensor) {
  const int n = group.size();
  std::vector<Tensor> t{tensor};
  if (group.rank() == 0) {
    Tensor incoming = empty_like(tensor);
    std::vector<Tensor> in{incoming};
    for (int src = 1; src < n; ++src) {
      group.recv(in, src)->wait();
      tensor.add_(incoming);
    }
    for (int dst = 1; dst < n; ++dst) group.send(t, dst)->wait();
  } else {
    group.send(t, 0)->wait();
    group.recv(t, 0)->wait();
  }
}

// Right values: every rank sends its whole tensor to every other and adds what arrives in
// rank order. (n − 1) · size bytes from every rank.
void ring_everyone_to_everyone(distributed::ProcessGroup& group, Tensor& tensor) {
  const int n = group.size(), r = group.rank();
  std::vector<Tensor> mine{tensor.clone()};
  std::vector<std::shared_ptr<distributed::Work>> sends;
  for (int dst = 0; dst < n; ++dst)
    if (dst != r) sends.push_back(group.send(mine, dst));
  Tensor sum = zeros_like(tensor);
  for (int src = 0; src < n; ++src) {
    if (src == r) {
      sum.add_(mine[0]);
      continue;
    }
    Tensor incoming = empty_like(tensor);
    std::vector<Tensor> in{incoming};
    group.recv(in, src)->wait();
    sum.add_(incoming);
  }
  for (auto& w : sends) w->wait();
  tensor.copy_(sum);
}

// Right values, by the group's own collective.
void ring_with_allreduce(distributed::ProcessGroup& group, Tensor& tensor) {
  group.allreduce(tensor)->wait();
}

// Right values, right bytes, right peers: the library's ring, which only the symbol check sees.
void ring_from_the_library(distributed::ProcessGroup& group, Tensor& tensor) {
  distributed::ring_all_reduce(group, tensor);
}

// The ring, but each step waits for its send before posting its recv. The threads backend
// buffers sends, so this would pass there; on gloo or MPI a large send waits for its
// receiver, every rank waits on its own send, and nobody posts a recv.
void ring_send_then_recv(distributed::ProcessGroup& group, Tensor& tensor) {
  const int n = group.size(), r = group.rank();
  Tensor flat = tensor.view({-1});
  auto step = [&](const Tensor& out, const Tensor& in) {
    std::vector<Tensor> o{out}, i{in};
    group.send(o, mod(r + 1, n))->wait();
    group.recv(i, mod(r - 1, n))->wait();
  };
  for (int s = 0; s < n - 1; ++s) {
    Tensor own = chunk_of(flat, n, mod(r - s - 1, n));
    Tensor incoming = empty_like(own);
    step(chunk_of(flat, n, mod(r - s, n)), incoming);
    own.add_(incoming);
  }
  for (int s = 0; s < n - 1; ++s)
    step(chunk_of(flat, n, mod(r + 1 - s, n)), chunk_of(flat, n, mod(r - s, n)));
}

// Right values, and the group it was given sees no collective: the all-reduce runs on a
// fresh group of the same threads. Only the symbol check sees it.
void ring_on_a_group_of_its_own(distributed::ProcessGroup& group, Tensor& tensor) {
  const distributed::ThreadsRendezvous* rv = distributed::current_threads_rendezvous();
  distributed::ProcessGroup::Options options;
  options.group_name = "dodge";
  auto fresh = distributed::make_threads_group(rv->store, group.rank(), group.size(), options);
  fresh->allreduce(tensor)->wait();
}

// Sums the gradients but never divides: world_size times the average.
void hooks_sum_without_dividing(nn::Module& module, distributed::ProcessGroup& group) {
  for (const Tensor& p : module.parameters())
    autograd::register_post_accumulate_grad_hook(p, [&group](const Tensor& param) {
      Tensor grad = param.grad();
      group.allreduce(grad)->wait();
    });
}

// Averages the weights' gradients only; every bias trains on its own rank's data.
void hooks_weights_only(nn::Module& module, distributed::ProcessGroup& group) {
  for (const auto& [name, p] : module.named_parameters()) {
    if (name.ends_with("bias")) continue;
    autograd::register_post_accumulate_grad_hook(p, [&group](const Tensor& param) {
      Tensor grad = param.grad();
      group.allreduce(grad)->wait();
      grad.div_(static_cast<double>(group.size()));
    });
  }
}

// DDP's engine room, borrowed (and kept alive for the process's life). Only its symbol
// matters here: the tests never run it.
void hooks_by_reducer(nn::Module& module, distributed::ProcessGroup& group) {
  static std::vector<std::unique_ptr<distributed::Reducer>> kept;
  kept.push_back(std::make_unique<distributed::Reducer>(
      module.named_parameters(), group.shared_from_this(), distributed::Reducer::Options{}));
}

// DDP itself, on a non-owning pointer to the module (kept alive for the process's life).
// Only its symbol matters here: the tests never run it.
void hooks_by_ddp(nn::Module& module, distributed::ProcessGroup& group) {
  using DDP = nn::parallel::DistributedDataParallel<std::shared_ptr<nn::Module>>;
  static std::vector<std::unique_ptr<DDP>> kept;
  kept.push_back(
      std::make_unique<DDP>(std::shared_ptr<nn::Module>(std::shared_ptr<nn::Module>(), &module),
                            group.shared_from_this()));
}

namespace {
std::vector<size_t> order_of(size_t n, bool shuffle, uint64_t seed) {
  if (shuffle) return data::shuffled_order(n, seed);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  return order;
}
}  // namespace

// Strided slices of the unpadded order: ranks get different numbers of samples.
std::vector<size_t> indices_without_padding(size_t n, size_t num_replicas, size_t rank,
                                            bool shuffle, uint64_t seed, size_t epoch) {
  const std::vector<size_t> order = order_of(n, shuffle, seed + epoch);
  std::vector<size_t> mine;
  for (size_t i = rank; i < n; i += num_replicas) mine.push_back(order[i]);
  return mine;
}

// Padded and strided, but every epoch shuffles alike (the seed alone).
std::vector<size_t> indices_ignoring_epoch(size_t n, size_t num_replicas, size_t rank, bool shuffle,
                                           uint64_t seed, size_t /*epoch*/) {
  std::vector<size_t> order = order_of(n, shuffle, seed);
  const size_t total = (n + num_replicas - 1) / num_replicas * num_replicas;
  for (size_t i = n; i < total; ++i) order.push_back(order[i % n]);
  std::vector<size_t> mine;
  for (size_t i = rank; i < total; i += num_replicas) mine.push_back(order[i]);
  return mine;
}

// Padded, but rank r takes the r-th contiguous block instead of every num_replicas-th index.
std::vector<size_t> indices_in_blocks(size_t n, size_t num_replicas, size_t rank, bool shuffle,
                                      uint64_t seed, size_t epoch) {
  std::vector<size_t> order = order_of(n, shuffle, seed + epoch);
  const size_t per_rank = (n + num_replicas - 1) / num_replicas;
  for (size_t i = n; i < per_rank * num_replicas; ++i) order.push_back(order[i % n]);
  return {order.begin() + static_cast<std::ptrdiff_t>(rank * per_rank),
          order.begin() + static_cast<std::ptrdiff_t>((rank + 1) * per_rank)};
}

// Exactly right, by the banned class.
std::vector<size_t> indices_from_the_library(size_t n, size_t num_replicas, size_t rank,
                                             bool shuffle, uint64_t seed, size_t epoch) {
  data::DistributedSampler sampler(num_replicas, rank, shuffle, seed);
  sampler.set_epoch(epoch);
  return sampler.indices(n, 0);
}

}  // namespace glass::lesson10::wrong
