// lessons/11_sharding/exercises/wrong_answers.h — deliberately wrong answers to lesson 11's
// exercises, which exercises_test.cpp checks its graders reject.
//
// A grader that passes every answer proves nothing: each function here breaks one rule of
// its exercise's contract (named beside it), and a test asserts the grader says so. They
// are compiled into an object file of their own (wrong_answers.cpp), so the symbol checks
// that catch banned calls can be shown catching the banned ones here.
#pragma once

#include "exercises.h"

namespace glass::lesson11::wrong {

// Exercise 1.
Tensor shard_rows_floor(const Tensor& full, int world_size, int rank);  // floor(d0 / N) rows
Tensor shard_rows_padding_first(const Tensor& full, int world_size, int rank);  // zeros on top
Tensor shard_rows_a_view(const Tensor& full, int world_size, int rank);     // shares full's memory
Tensor shard_rows_from_fsdp(const Tensor& full, int world_size, int rank);  // banned symbol

// Exercise 2.
Tensor reduce_scatter_wrong_chunk(distributed::ProcessGroup& group, const Tensor& input);
Tensor reduce_scatter_averaged(distributed::ProcessGroup& group, const Tensor& input);
Tensor reduce_scatter_everything_to_everyone(distributed::ProcessGroup& group,
                                             const Tensor& input);  // bytes
Tensor reduce_scatter_by_allreduce(distributed::ProcessGroup& group, const Tensor& input);
Tensor reduce_scatter_collective(distributed::ProcessGroup& group, const Tensor& input);

// Exercise 3.
void shard_never_freed(nn::Module& module, distributed::ProcessGroup& group);  // no hook after
void shard_freed_by_set_data(nn::Module& module, distributed::ProcessGroup& group);  // bytes stay
void shard_left_whole(nn::Module& module, distributed::ProcessGroup& group);         // not put back
void shard_kept_whole(nn::Module& module, distributed::ProcessGroup& group);  // never sharded
void shard_keeps_gather_buffer(nn::Module& module, distributed::ProcessGroup& group);  // whole kept
void shard_by_fully_shard(nn::Module& module, distributed::ProcessGroup& group);  // banned symbol

}  // namespace glass::lesson11::wrong
