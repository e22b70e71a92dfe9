// lessons/11_sharding/exercises/wrong_answers.cpp — the deliberately wrong answers of
// wrong_answers.h: each is a plausible attempt with one mistake (or a banned call), and
// exercises_test.cpp asserts its grader rejects it.
#include "wrong_answers.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "distributed/distributed.h"
#include "distributed/fsdp.h"

namespace glass::lesson11::wrong {

namespace {

int mod(int a, int n) { return ((a % n) + n) % n; }

std::vector<int64_t> with_rows(const Tensor& t, int64_t rows) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  sizes[0] = rows;
  return sizes;
}

// A right cut, for the wrong answers whose mistake is elsewhere. Their own copy, not
// lesson11::shard_rows: the graders must reject them before student.cpp is written.
Tensor right_cut(const Tensor& full, int world_size, int rank) {
  const int64_t d0 = full.size(0), rows = (d0 + world_size - 1) / world_size;
  const int64_t real = std::clamp<int64_t>(d0 - rank * rows, 0, rows);
  Tensor block = zeros(with_rows(full, rows), full.options());
  if (real > 0) block.narrow(0, 0, real).copy_(full.narrow(0, rank * rows, real));
  return block;
}

// Lesson 10's ring reduce-scatter; `shift` 1 ends with this rank's chunk, 0 with the next's.
Tensor ring_reduce_scatter(distributed::ProcessGroup& group, const Tensor& input, int shift) {
  const int n = group.size(), r = group.rank();
  const int64_t k = input.numel() / n;
  auto chunk = [&](int c) { return input.narrow(0, c * k, k); };
  Tensor acc = chunk(mod(r - shift, n)).clone();
  for (int s = 0; s < n - 1; ++s) {
    Tensor incoming = empty_like(acc);
    std::vector<Tensor> out{acc}, in{incoming};
    auto sent = group.send(out, mod(r + 1, n));
    auto received = group.recv(in, mod(r - 1, n));
    received->wait();
    sent->wait();
    acc = incoming.add_(chunk(mod(r - s - 1 - shift, n)));
  }
  return acc;
}

}  // namespace

// ---- exercise 1 ------------------------------------------------------------------------

Tensor shard_rows_floor(const Tensor& full, int world_size, int rank) {
  const int64_t rows = full.size(0) / world_size;  // loses the last d0 mod N rows
  return full.narrow(0, rank * rows, rows).clone();
}

Tensor shard_rows_padding_first(const Tensor& full, int world_size, int rank) {
  const int64_t d0 = full.size(0), rows = (d0 + world_size - 1) / world_size;
  const int64_t real = std::clamp<int64_t>(d0 - rank * rows, 0, rows);
  Tensor block = zeros(with_rows(full, rows), full.options());
  if (real > 0) block.narrow(0, rows - real, real).copy_(full.narrow(0, rank * rows, real));
  return block;
}

Tensor shard_rows_a_view(const Tensor& full, int world_size, int rank) {
  const int64_t d0 = full.size(0), rows = (d0 + world_size - 1) / world_size;
  if (rank * rows + rows <= d0) return full.narrow(0, rank * rows, rows);  // no copy
  return right_cut(full, world_size, rank);
}

Tensor shard_rows_from_fsdp(const Tensor& full, int world_size, int rank) {
  // The library's cut of a parameter it shards (none here: the answer is still right, and
  // only the symbol check tells).
  if (auto cut = distributed::fsdp_row_shard(full)) (void)cut->rows;
  return right_cut(full, world_size, rank);
}

// ---- exercise 2 ------------------------------------------------------------------------

Tensor reduce_scatter_wrong_chunk(distributed::ProcessGroup& group, const Tensor& input) {
  return ring_reduce_scatter(group, input, /*shift=*/0);  // ends with chunk rank + 1
}

Tensor reduce_scatter_averaged(distributed::ProcessGroup& group, const Tensor& input) {
  // FSDP's AVG, not the SUM asked for.
  return ring_reduce_scatter(group, input, /*shift=*/1).div(group.size());
}

Tensor reduce_scatter_everything_to_everyone(distributed::ProcessGroup& group,
                                             const Tensor& input) {
  // Every rank sends its whole input to every other and picks out its chunk: right values,
  // n − 1 times the bytes.
  const int n = group.size(), r = group.rank();
  const int64_t k = input.numel() / n;
  std::vector<std::shared_ptr<distributed::Work>> sent;
  std::vector<Tensor> out{input};
  for (int q = 0; q < n; ++q)
    if (q != r) sent.push_back(group.send(out, q));
  Tensor sum = input.narrow(0, r * k, k).clone();
  std::vector<Tensor> from(n);
  std::vector<std::shared_ptr<distributed::Work>> received(n);
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    from[q] = empty_like(input);
    std::vector<Tensor> in{from[q]};
    received[q] = group.recv(in, q);
  }
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    received[q]->wait();
    sum.add_(from[q].narrow(0, r * k, k));
  }
  for (auto& w : sent) w->wait();
  return sum;
}

Tensor reduce_scatter_by_allreduce(distributed::ProcessGroup& group, const Tensor& input) {
  Tensor all = input.clone();
  group.allreduce(all)->wait();  // a collective, and twice a reduce-scatter's bytes
  const int64_t k = input.numel() / group.size();
  return all.narrow(0, group.rank() * k, k).clone();
}

Tensor reduce_scatter_collective(distributed::ProcessGroup& group, const Tensor& input) {
  Tensor out = empty({input.numel() / group.size()}, input.options());
  distributed::reduce_scatter_tensor(out, input);  // the default group: banned twice over
  (void)group;
  return out;
}

// ---- exercise 3 ------------------------------------------------------------------------

namespace {

struct Piece {
  Tensor param, shard, padded;
  int64_t d0 = 0, real = 0;
};

// Cuts every parameter of `module` into this rank's padded block, as the reference does,
// and points the parameter at its real rows.
std::shared_ptr<std::vector<Piece>> shard_pieces(nn::Module& module,
                                                 distributed::ProcessGroup& group) {
  const int n = group.size(), r = group.rank();
  auto pieces = std::make_shared<std::vector<Piece>>();
  NoGradGuard no_grad;
  for (const Tensor& p : module.parameters()) {
    Piece s;
    s.param = p;
    s.d0 = p.size(0);
    s.shard = right_cut(p.detach(), n, r);
    s.real = std::clamp<int64_t>(s.d0 - r * s.shard.size(0), 0, s.shard.size(0));
    p.set_data(s.shard.narrow(0, 0, s.real));
    pieces->push_back(std::move(s));
  }
  return pieces;
}

// Shards like the reference; `free_bytes`, `put_back` and `with_post_hook` each switch off
// one part of the contract.
void shard_with(nn::Module& module, distributed::ProcessGroup& group, bool free_bytes,
                bool put_back, bool with_post_hook) {
  auto pieces = shard_pieces(module, group);
  module.register_forward_pre_hook([pieces, &group](nn::Module&, std::vector<Tensor>&) {
    NoGradGuard no_grad;
    for (Piece& s : *pieces) {
      // A fresh buffer every time: dropping the last handle should free it...
      s.padded = empty(with_rows(s.shard, group.size() * s.shard.size(0)), s.shard.options());
      group.allgather(s.padded, s.shard)->wait();
      s.param.set_data(s.padded.narrow(0, 0, s.d0));
    }
  });
  if (!with_post_hook) return;
  module.register_forward_hook([pieces, free_bytes, put_back](
                                   nn::Module&, const std::vector<Tensor>&, std::vector<Tensor>&) {
    for (Piece& s : *pieces) {
      if (put_back) s.param.set_data(s.shard.narrow(0, 0, s.real));
      if (free_bytes) s.padded.storage().drop_bytes();
      // ...but autograd saved the weight for backward: without drop_bytes they stay.
      s.padded = Tensor();
    }
  });
}

}  // namespace

void shard_never_freed(nn::Module& module, distributed::ProcessGroup& group) {
  shard_with(module, group, /*free_bytes=*/false, /*put_back=*/false, /*with_post_hook=*/false);
}

void shard_freed_by_set_data(nn::Module& module, distributed::ProcessGroup& group) {
  shard_with(module, group, /*free_bytes=*/false, /*put_back=*/true, /*with_post_hook=*/true);
}

void shard_left_whole(nn::Module& module, distributed::ProcessGroup& group) {
  shard_with(module, group, /*free_bytes=*/true, /*put_back=*/false, /*with_post_hook=*/true);
}

void shard_keeps_gather_buffer(nn::Module& module, distributed::ProcessGroup& group) {
  // Gathers into one buffer kept for the module's life, hands forward a copy of it, and
  // frees only the copy's bytes: every check on the parameters passes, yet the whole
  // (padded) parameters stay in memory between forwards, which FSDP exists to avoid.
  auto pieces = shard_pieces(module, group);
  module.register_forward_pre_hook([pieces, &group](nn::Module&, std::vector<Tensor>&) {
    NoGradGuard no_grad;
    for (Piece& s : *pieces) {
      if (!s.padded.defined())
        s.padded = empty(with_rows(s.shard, group.size() * s.shard.size(0)), s.shard.options());
      group.allgather(s.padded, s.shard)->wait();
      s.param.set_data(s.padded.narrow(0, 0, s.d0).clone());
    }
  });
  module.register_forward_hook(
      [pieces](nn::Module&, const std::vector<Tensor>&, std::vector<Tensor>&) {
        for (Piece& s : *pieces) {
          s.param.detach().storage().drop_bytes();  // the copy's bytes go...
          s.param.set_data(s.shard.narrow(0, 0, s.real));
        }  // ...and s.padded stays
      });
}

void shard_kept_whole(nn::Module& module, distributed::ProcessGroup& group) {
  // Right values, no memory saved: every rank keeps the whole parameters.
  (void)module;
  (void)group;
}

void shard_by_fully_shard(nn::Module& module, distributed::ProcessGroup& group) {
  (void)group;
  // A no-op shared_ptr: the module stays the caller's. (Not run by the tests: the symbol
  // check alone must catch it.)
  distributed::fully_shard(std::shared_ptr<nn::Module>(&module, [](nn::Module*) {}));
}

}  // namespace glass::lesson11::wrong
