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
int print_env(const Args& args);     // torchrun's variables, the pid, a last line with no '\n'
int fail_rank1(const Args& args);    // all ranks meet; rank 1 exits 3, the others wait
int wait_forever(const Args& args);  // all ranks meet, print "ready", wait for a signal
int store_meet(const Args& args);    // all ranks add to a counter in the store and meet

// collective_scenarios.cpp — ranks that meet through init_process_group("env://").
int all_reduce_sum(const Args& args);  // args: [backend] (default gloo); prints "sum=..."
int killed_rank1(const Args& args);    // all ranks meet; rank 1 is killed by SIGKILL

// Every rank of the job adds itself to a counter in glassrun's store and waits until all
// WORLD_SIZE have; `tag` keeps separate meetings apart.
void meet(const std::string& tag);

// A test that fails must not leave this program behind: SIGALRM ends it after `seconds`.
void exit_after(unsigned seconds);

}  // namespace glass::distributed::worker
