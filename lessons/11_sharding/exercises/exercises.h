// lessons/11_sharding/exercises/exercises.h — the functions you write in lesson 11.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_11
// Use what lesson 11 teaches: ProcessGroup's send/recv (exercise 2) and allgather (exercise 3
// only), Work::wait(), Module's register_forward_pre_hook and register_forward_hook
// (nn/hooks.h), Tensor::set_data, Storage's drop_bytes and restore_bytes (core/storage.h),
// with the tensor ops of lessons 01–06 and lesson 10's send/recv.
// Each exercise bans the library's own answer, and the tests check it: they run nm on your
// compiled student.cpp, where a call to a banned function is an undefined symbol, and, since
// student.cpp is compiled with -ffunction-sections, follow the relocations of exercise 2's
// function (objdump -r, through your helpers and lambdas) to see it reach no collective,
// while exercise 3's allgather in the same file is allowed. No exercise may build a group of
// its own (make_threads_group, current_threads_rendezvous, init_process_group, new_group).
#pragma once

#include <glass/glass.h>

#include <cstdint>

#include "distributed/process_group.h"

namespace glass::lesson11 {

// Exercise 1 — cut a parameter into rank r's rows, with padding (FSDP's layout).
// full: (d0, ...) with d0 >= 1 and any trailing dimensions, float32 on the CPU, any strides.
// Returns rank `rank`'s block of a cut along dim 0 into `world_size` blocks of
// rows = ceil(d0 / world_size) rows each: shape (rows, ...), whose row i is full's row
// rank · rows + i where that is < d0, and zeros past the end (the last ranks' blocks end in
// padding; a rank may get nothing but padding). The result owns its memory: writing into it
// leaves `full` unchanged. 0 <= rank < world_size.
// Banned: distributed::fsdp_row_shard and fully_shard.
Tensor shard_rows(const Tensor& full, int world_size, int rank);

// Exercise 2 — reduce-scatter, on send and recv.
// input: contiguous, 1-dimensional, n · k elements (n = group.size(), k >= 1), float32 or
// int64, on the CPU; every rank of `group` calls it with the same size and dtype. Returns
// this rank's k elements: the element-wise sum over the ranks of chunk `group.rank()`,
// elements [rank · k, rank · k + k) of their inputs. `input` is left unchanged.
// Post each send and its step's recv before waiting for either: the tests' sends, like large
// ones on gloo or MPI, complete only once the receiver has posted its recv.
// Banned: the group's collectives (reduce_scatter, allreduce, allgather, broadcast, ...),
// torch.distributed's free functions (reduce_scatter_tensor, ...), distributed::ring_all_reduce.
// The tests count your messages: every rank sends exactly (n − 1) · k elements, the bytes of
// a ring's reduce-scatter (or of sending each chunk straight to its owner), and issues no
// collective.
Tensor my_reduce_scatter(distributed::ProcessGroup& group, const Tensor& input);

// Exercise 3 — gather before forward, free after: FSDP's pair of hooks around one unit.
// module: the same parameters on every rank of `group` (the caller made sure), each at least
// 1-dimensional, float32 on the CPU. Shards every parameter of `module` (its own and its
// submodules') with exercise 1's layout and makes each parameter tensor (Tensor::set_data;
// the tensors stay the same objects) this rank's real rows: rows [rank · rows, ...) up to d0,
// possibly none. Then registers on `module`:
//  - a forward pre-hook that all-gathers each parameter's padded blocks from every rank into
//    a buffer of world_size · rows rows and points the parameter at its first d0 rows, so the
//    forward sees the whole parameter;
//  - a forward hook that points each parameter back at this rank's rows and frees the
//    gathered buffer's bytes (Storage::drop_bytes) — also while autograd still holds the
//    tensors forward saved — restoring them (Storage::restore_bytes) for the next gather.
// Between forwards a rank holds its padded blocks only (1/N of the parameters, plus
// padding). Forward only: a backward through the sharded module is not part of it.
// `group` outlives the module (the hooks may keep a reference to it).
// Banned: distributed::fully_shard (and FSDPUnit, fsdp_row_shard). Allowed: group.allgather.
void shard_for_forward(nn::Module& module, distributed::ProcessGroup& group);

}  // namespace glass::lesson11
