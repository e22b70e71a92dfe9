// tests/distributed/worker/scenarios.h — what the test worker can be asked to do.
//
// distributed_worker is the program the launcher tests start under glassrun:
// `distributed_worker <scenario> [args...]`. Each scenario is one function here, listed in
// main.cpp's table; add a scenario by writing a function and one table line. Scenarios
// print what the test checks, one fact per line ("RANK=2"), and flush as they go, since
// their stdout is a pipe.
#pragma once

#include <string>
#include <vector>

namespace glass::distributed::worker {

using Args = std::vector<std::string>;  // the arguments after the scenario name

// launcher_scenarios.cpp — what glassrun_test.cpp checks.
int print_env(const Args& args);      // torchrun's variables, the pid, a last line with no '\n'
int fail_rank1(const Args& args);     // all ranks meet; rank 1 exits 3, the others wait
int wait_forever(const Args& args);   // all ranks meet, print "ready", wait for a signal
int ignore_sigint(const Args& args);  // like wait_forever, but SIGINT is ignored
int store_meet(const Args& args);     // all ranks add to a counter in the store and meet
// args: port; a TCPStore client on 127.0.0.1:port that registers ON_DISCONNECT
// ("glass/exited/1" = "rank 1 died"), prints "ready" and waits to be killed.
int store_client_until_killed(const Args& args);

// collective_scenarios.cpp — ranks that meet through init_process_group("env://").
int all_reduce_sum(const Args& args);  // args: [backend] (default gloo); prints "sum=..."
int killed_rank1(const Args& args);    // all ranks meet; rank 1 is killed by SIGKILL

// ddp_scenarios.cpp — what ddp_process_test.cpp checks.
int ddp_mlp(const Args& args);  // args: out_dir; lesson 06's MLP under DDP over gloo, 5 steps

// sharding_scenarios.cpp — what ddp_process_test.cpp checks of ZeRO and FSDP.
int sharded_mlp(const Args& args);  // args: zero1|zero2|fsdp, out_dir; the same MLP, 5 steps

// fault_scenarios.cpp — what faults_test.cpp checks (ranks it starts itself, not glassrun).
int all_reduce_loop(const Args& args);  // all_reduce forever; prints "looping" once under way
int fsdp_loop(const Args& args);  // args: forward|backward; FSDP steps until rank 1 kills itself
int skip_collective(const Args& args);    // args: [timeout ms]; rank 1 skips allreduce #1
int mismatched_shapes(const Args& args);  // rank r all-reduces r + 2 elements
int init_only(const Args& args);          // args: [timeout ms]; init_process_group("gloo") only

// mpi_scenarios.cpp — what mpi_test.cpp checks (ranks started by mpirun).
int mpi_collectives(const Args& args);  // args: [world size]; every collective; "ok rank R of N"
int mpi_progress(const Args& args);     // 2 ranks: p2p completes unwaited; a recv times out
int mpi_skip(const Args& args);         // 2 ranks: rank 1 skips allreduce #0; the job aborts
int mpi_exit_live(const Args& args);    // 2 ranks: exit with groups and a recv still live

// Every rank of the job adds itself to a counter in glassrun's store and waits until all
// WORLD_SIZE have; `tag` keeps separate meetings apart.
void meet(const std::string& tag);

// A test that fails must not leave this program behind: SIGALRM ends it after `seconds`.
void exit_after(unsigned seconds);

}  // namespace glass::distributed::worker
