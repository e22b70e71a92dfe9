// lessons/10_data_parallel/exercises/exercises.h — the functions you write in lesson 10.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_10
// Use what lesson 10 teaches: ProcessGroup's send/recv (and, in exercise 2 only, its
// allreduce), Work::wait(), autograd::register_post_accumulate_grad_hook
// (autograd/variable.h), distributed::ring_chunk (distributed/ring.h) and
// data::shuffled_order (nn/data/sampler.h), with the tensor ops of lessons 01–06.
// Each exercise bans the library's own answer, and the tests check it: they run nm on
// your compiled student.cpp, and a call to a banned function is an undefined symbol there.
// No exercise may build a group of its own (make_threads_group, current_threads_rendezvous,
// init_process_group, new_group): the tests could not see what it does. student.cpp is
// compiled with -ffunction-sections, so the tests also follow the relocations of exercise
// 1's function (objdump -r, through your helpers and lambdas) to see it reach no collective,
// while exercise 2's allreduce in the same file is allowed.
#pragma once

#include <glass/glass.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "distributed/process_group.h"

namespace glass::lesson10 {

// Exercise 1 — the ring all-reduce, on send and recv.
// tensor: contiguous, any shape and size (also fewer elements than ranks), float32 or int64,
// on the CPU. Every rank of `group` calls it with a tensor of the same shape and dtype; when
// it returns, every rank's tensor holds the element-wise sum over the ranks.
// Cut the tensor into group.size() chunks (distributed::ring_chunk says where each one is)
// and run the ring: n − 1 reduce-scatter steps, then n − 1 all-gather steps, in each of
// which a rank sends one chunk to its right neighbour, (rank + 1) mod n, and receives one
// from its left, (rank − 1) mod n. Post each step's send and recv before waiting for either:
// the tests' sends, like large ones on gloo or MPI, complete only once the receiver has
// posted its recv, so a ring that waits on its send first fails (within a second).
// Banned: the group's collectives (allreduce, reduce_scatter, allgather, broadcast, ...),
// torch.distributed's free functions, and distributed::ring_all_reduce. The tests wrap the
// group to count your messages: every rank must send exactly 2(n−1)/n of the tensor's bytes
// (when n divides its size), only to its right neighbour, and issue no collective.
void my_ring_all_reduce(distributed::ProcessGroup& group, Tensor& tensor);

// Exercise 2 — data parallelism with hooks, DDP's idea without its buckets.
// module: the same parameters on every rank of `group` (the caller made sure). Registers,
// on every parameter that requires grad, a post-accumulate-grad hook that all-reduces the
// parameter's .grad() across the group and divides it by the group's size, in place, so
// that after every backward() each rank's gradients are the average over the ranks — the
// same that DistributedDataParallel gives. The hooks stay registered for the module's life;
// `group` outlives the module.
// Banned: DistributedDataParallel and distributed::Reducer.
void average_gradients_with_hooks(nn::Module& module, distributed::ProcessGroup& group);

// Exercise 3 — a distributed sampler, index for index.
// The dataset indices rank `rank` of `num_replicas` visits in `epoch`, exactly as
// data::DistributedSampler(num_replicas, rank, shuffle, seed) after set_epoch(epoch), with
// drop_last off, returns them: the order 0..n−1, or data::shuffled_order(n, seed + epoch)
// when shuffling; padded, by repeating its start (more than once if n is small), to a
// multiple of num_replicas; then positions rank, rank + num_replicas, rank + 2·num_replicas…
// n >= 1; rank < num_replicas.
// Banned: data::DistributedSampler. Allowed: data::shuffled_order.
std::vector<size_t> my_distributed_indices(size_t n, size_t num_replicas, size_t rank, bool shuffle,
                                           uint64_t seed, size_t epoch);

}  // namespace glass::lesson10
