// distributed/launcher/supervisor.h — watching the ranks until the job ends.
//
// One poll() loop does everything, so there is no locking: it copies each rank's output
// to glassrun's stdout/stderr with the rank's prefix, reaps ranks as they exit, passes
// Ctrl-C and SIGTERM on, and applies the failure rule — when one rank exits non-zero or is
// killed, every other rank gets SIGTERM, then SIGKILL after the grace period. Invariants:
// run() returns only when every rank has been reaped (no zombie, no orphan), and its result
// is the first failed rank's status (128 + signal for a signal), or 128 + the signal that
// stopped the job, or 0.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/launcher/line_prefixer.h"
#include "distributed/launcher/spawn.h"

namespace glass::distributed::launcher {

class Supervisor {
 public:
  explicit Supervisor(std::chrono::seconds grace) : grace_(grace) {}
  ~Supervisor();  // kills and reaps any rank still running (e.g. when spawning failed)

  void add(int rank, const SpawnedRank& spawned);
  // Call once every rank is added. Returns the job's exit status.
  int run();

 private:
  struct Rank {
    int rank;
    pid_t pid;
    int fds[2];  // stdout, stderr read ends; -1 once closed
    std::unique_ptr<LinePrefixer> out[2];
    bool exited = false;
  };

  void reap();
  void on_exit(Rank& rank, int wait_status);
  void on_signal(int sig);
  void stop_all(int sig);  // signals every rank still running
  void read_output(Rank& rank, int which);
  bool all_exited() const;
  bool all_closed() const;

  std::chrono::seconds grace_;
  std::vector<Rank> ranks_;
  std::optional<int> result_;  // the job's status, fixed by the first failure or signal
  std::optional<std::chrono::steady_clock::time_point> kill_at_;  // SIGKILL the rest then
};

// 0..255 as a shell reports it: the exit code, or 128 + the signal.
int exit_code_of(int wait_status);

}  // namespace glass::distributed::launcher
