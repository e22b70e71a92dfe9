// lessons/11_sharding/exercises/solution.cpp — the reference answers to lesson 11's
// exercises (exercises.h has the contracts). Try them yourself first, in student.cpp.
#include "exercises.h"

#include <algorithm>
#include <memory>
#include <vector>

namespace glass::lesson11 {

namespace {
int mod(int a, int n) { return ((a % n) + n) % n; }
}  // namespace

Tensor shard_rows(const Tensor& full, int world_size, int rank) {
  const int64_t d0 = full.size(0);
  const int64_t rows = (d0 + world_size - 1) / world_size;  // ceil: every rank as many
  // The real rows this rank gets: none past d0, fewer at the end.
  const int64_t real = std::clamp<int64_t>(d0 - rank * rows, 0, rows);
  std::vector<int64_t> sizes(full.sizes().begin(), full.sizes().end());
  sizes[0] = rows;
  Tensor block = zeros(sizes, full.options());  // the padding is zeros
  if (real > 0) block.narrow(0, 0, real).copy_(full.narrow(0, rank * rows, real));
  return block;
}

Tensor my_reduce_scatter(distributed::ProcessGroup& group, const Tensor& input) {
  const int n = group.size(), r = group.rank();
  const int64_t k = input.numel() / n;
  const int right = mod(r + 1, n), left = mod(r - 1, n);
  auto chunk = [&](int c) { return input.narrow(0, c * k, k); };
  // The first half of lesson 10's ring, shifted by one so that rank r ends with chunk r: at
  // step s it sends its running sum of chunk r − s − 1 to the right, and adds its own part of
  // chunk r − s − 2 to what arrives from the left. After n − 1 steps that is chunk r, summed.
  Tensor acc = chunk(mod(r - 1, n)).clone();
  for (int s = 0; s < n - 1; ++s) {
    Tensor incoming = empty_like(acc);
    std::vector<Tensor> out{acc}, in{incoming};
    auto sent = group.send(out, right);  // both posted before either is waited for
    auto received = group.recv(in, left);
    received->wait();
    sent->wait();
    acc = incoming.add_(chunk(mod(r - s - 2, n)));
  }
  return acc;  // one rank: the loop did not run, and acc is its own chunk
}

namespace {

// One parameter's pieces: its padded block, and the buffer it is gathered into (bytes only
// while a forward runs).
struct Sharded {
  Tensor param;   // the module's tensor: its rows, or the whole during forward
  Tensor shard;   // (rows, ...): exercise 1's block
  Tensor padded;  // (world · rows, ...): gathered into
  int64_t d0 = 0, real = 0;
};

}  // namespace

void shard_for_forward(nn::Module& module, distributed::ProcessGroup& group) {
  const int n = group.size(), r = group.rank();
  auto params = std::make_shared<std::vector<Sharded>>();
  NoGradGuard no_grad;
  for (const Tensor& p : module.parameters()) {
    Sharded s;
    s.param = p;
    s.d0 = p.size(0);
    s.shard = shard_rows(p.detach(), n, r);
    s.real = std::clamp<int64_t>(s.d0 - r * s.shard.size(0), 0, s.shard.size(0));
    std::vector<int64_t> sizes(p.sizes().begin(), p.sizes().end());
    sizes[0] = n * s.shard.size(0);
    s.padded = empty(sizes, p.options());
    s.padded.storage().drop_bytes();  // no bytes until the first forward
    p.set_data(s.shard.narrow(0, 0, s.real));
    params->push_back(std::move(s));
  }
  module.register_forward_pre_hook([params, &group](nn::Module&, std::vector<Tensor>&) {
    NoGradGuard no_grad;
    for (Sharded& s : *params) {
      s.padded.storage().restore_bytes();
      group.allgather(s.padded, s.shard)->wait();
      s.param.set_data(s.padded.narrow(0, 0, s.d0));
    }
  });
  // The storage stays (autograd's saved tensors point at it); only its bytes go.
  module.register_forward_hook(
      [params](nn::Module&, const std::vector<Tensor>&, std::vector<Tensor>&) {
        for (Sharded& s : *params) {
          s.param.set_data(s.shard.narrow(0, 0, s.real));
          s.padded.storage().drop_bytes();
        }
      });
}

}  // namespace glass::lesson11
