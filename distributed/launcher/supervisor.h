// distributed/launcher/supervisor.h — watching the ranks until the job ends.
//
// One poll() loop does everything, so there is no locking: it copies each rank's output
// to glassrun's stdout/stderr with the rank's prefix, reaps ranks as they exit, passes
// Ctrl-C and SIGTERM on, and applies the failure rule — when one rank exits non-zero or is
// killed, every other rank gets SIGTERM, then SIGKILL after the grace period. Invariants:
// run() returns only when every rank has been reaped (no zombie, no orphan), and its result
// is the first failed rank's status (128 + signal for a signal), or 128 + the signal that
// stopped the job, or the status of a rank on another node that failed first, or 0.
//
// In a multi-node job the failure rule spans the nodes (share_failures): this node reports
// its first failed rank, and on each tick of its loop asks whether another node reported
// one; if so, it stops its own ranks the same way and takes that rank's status.
//
// Limit: the ranks die with glassrun even on `kill -9 glassrun` only because each rank asks
// the kernel for it (PR_SET_PDEATHSIG, spawn.h), and that reaches glassrun's direct children
// only. A grandchild (a process a rank started) gets no signal when glassrun dies that way;
// it lives on unless the rank ends it. Every other way glassrun ends, it signals each rank's
// whole process group, grandchildren included.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
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

  // A failure on another node: one phrase naming it ("rank 1 on node 1 exited with status
  // 3") and the status this node then exits with.
  struct RemoteFailure {
    std::string what;
    int status;
  };
  using ReportFailure = std::function<void(int rank, int status)>;
  using CheckFailure = std::function<std::optional<RemoteFailure>()>;
  // For a multi-node job, before run(): `report` is called once, when this node's first rank
  // fails; `check` is called every `every` while ranks run (poll()'s timeout, so an idle
  // job wakes only that often).
  void share_failures(ReportFailure report, CheckFailure check, std::chrono::milliseconds every);

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
  // Sends `sig` to every rank still running and SIGKILL after the grace period.
  void stop_all_with_grace(int sig);
  void check_remote_failure();
  // Closes every output pipe still open (flushing its last partial line).
  void close_output();
  // After SIGKILL: waits for every rank still running (it cannot ignore that signal).
  void reap_killed();
  void read_output(Rank& rank, int which);
  bool all_exited() const;
  bool all_closed() const;

  std::chrono::seconds grace_;
  std::vector<Rank> ranks_;
  std::optional<int> result_;  // the job's status, fixed by the first failure or signal
  std::optional<std::chrono::steady_clock::time_point> kill_at_;  // SIGKILL the rest then
  int stop_signal_ = SIGTERM;  // what stop_all_with_grace sent, for the SIGKILL message

  ReportFailure report_failure_;
  CheckFailure check_failure_;
  std::chrono::milliseconds check_every_{0};
  std::optional<std::chrono::steady_clock::time_point> next_check_;
};

// 0..255 as a shell reports it: the exit code, or 128 + the signal.
int exit_code_of(int wait_status);

}  // namespace glass::distributed::launcher
