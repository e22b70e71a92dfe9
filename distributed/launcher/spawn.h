// distributed/launcher/spawn.h — starting one rank as a child process.
//
// Each rank runs in its own process group (so glassrun can signal it and anything it
// started with one kill(-pgid)), with stdin from /dev/null and stdout/stderr on pipes that
// glassrun reads and prefixes. Invariants: a rank never outlives glassrun — the child sets
// PR_SET_PDEATHSIG(SIGKILL) before exec, so even a `kill -9 glassrun` takes its ranks with
// it; and a program that cannot be executed is reported by spawn_rank() itself (the child
// sends exec's errno back on a close-on-exec pipe), not discovered later as a mystery exit.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace glass::distributed::launcher {

struct SpawnedRank {
  pid_t pid = -1;      // also the rank's process group id
  int stdout_fd = -1;  // read ends, owned by the caller
  int stderr_fd = -1;
};

// Looks `program` up the way execvp would (a name with a '/' is taken as a path), before
// fork, so the child needs no allocation. Throws "glassrun: program 'x' not found in PATH".
std::string resolve_program(const std::string& program);

// argv[0] is the program as the user wrote it; env holds "NAME=value" strings.
SpawnedRank spawn_rank(const std::string& path, const std::vector<std::string>& argv,
                       const std::vector<std::string>& env);

}  // namespace glass::distributed::launcher
