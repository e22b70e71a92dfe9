// tests/distributed/mpi_test.cpp — the mpi backend, run the way its users run it: ranks
// started by mpirun (OpenMPI), each the distributed_worker's "mpi_collectives" scenario
// (tests/distributed/worker/mpi_scenarios.cpp: every collective against hand-worked
// integers, a send/recv ring, new_group, and ring_all_reduce against MPI_Allreduce).
//
// MPI ranks cannot be threads of this test, and MPI cannot be started twice in one process,
// so every job is a child process. Each is bounded: at its deadline the whole process group
// (mpirun and its ranks) is killed and reaped, so a failing test never leaves ranks behind.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "distributed/distributed.h"

#ifdef GLASS_WORKER_PATH

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The first executable called `name` on PATH, or "".
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end == std::string::npos ? end : end - start);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

struct Outcome {
  std::optional<int> status;  // the exit code; nullopt when the deadline passed
  std::string output;         // stdout and stderr together
};

// Runs argv in its own process group with output captured; at `limit`, the group gets
// SIGTERM (mpirun then ends its ranks), a moment later SIGKILL.
Outcome run_bounded(std::vector<std::string> argv, milliseconds limit) {
  std::vector<char*> c_argv;
  for (std::string& a : argv) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {std::nullopt, "pipe2 failed"};
  // A session directory of its own: two mpiruns starting at once (ctest -j2) race to create
  // OpenMPI's shared /tmp/ompi.<host>.<uid>, and the loser fails in orte_init.
  char session[] = "/tmp/glass-mpi-XXXXXX";
  if (::mkdtemp(session) == nullptr) return {std::nullopt, "mkdtemp failed"};
  struct RemoveAfter {
    std::string dir;
    ~RemoveAfter() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } remove_after{session};
  // The child's environment, made here: after fork() in this threaded process only
  // async-signal-safe calls are allowed, and setenv() is not one. OpenMPI refuses root
  // without the first two (CI containers run as root); shared memory without ptrace-based
  // single copy (often forbidden in containers); one intra-op thread per rank, since ranks
  // share the machine's cores; no WORLD_SIZE (a torchrun variable left by another test
  // would contradict MPI).
  const std::map<std::string, std::string> set = {
      {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
      {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
      {"OMPI_MCA_btl_vader_single_copy_mechanism", "none"},
      {"OMPI_MCA_orte_tmpdir_base", session},
      {"GLASS_NUM_THREADS", "1"}};
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (set.count(name) == 0 && name != "WORLD_SIZE") env_strings.push_back(entry);
  }
  for (const auto& [name, value] : set) env_strings.push_back(name + "=" + value);
  std::vector<char*> c_env;
  for (std::string& e : env_strings) c_env.push_back(e.data());
  c_env.push_back(nullptr);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    // If this test binary dies (a crash, ctest's timeout), mpirun gets SIGTERM and ends its
    // ranks, rather than running on.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the test died before prctl took hold
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::execve(c_argv[0], c_argv.data(), c_env.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  Outcome out;
  const auto deadline = Clock::now() + limit;
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    pollfd pfd{fds[0], POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left)) <= 0) break;
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;  // EOF: every writer (mpirun and its ranks) is gone
    out.output.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  // Reap within what is left of the limit (EOF comes just before the exit).
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return out;
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(5));
  }
  ::kill(-pid, SIGTERM);
  std::this_thread::sleep_for(milliseconds(500));  // mpirun's grace to end its ranks
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return out;
}

class MpiBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!glass::distributed::is_backend_available("mpi"))
      GTEST_SKIP() << "the mpi backend was not built (needs libopenmpi-dev at build time)";
    mpirun_ = find_on_path("mpirun");
    if (mpirun_.empty()) GTEST_SKIP() << "mpirun is not on PATH (apt install openmpi-bin)";
  }

  // `ranks` ranks of mpi_collectives under mpirun; each must print its "ok" line.
  void run_job(int ranks) {
    const std::string n = std::to_string(ranks);
    const Outcome out = run_bounded({mpirun_, "-np", n, "--oversubscribe", "--bind-to", "none",
                                     GLASS_WORKER_PATH, "mpi_collectives", n},
                                    milliseconds(15000));
    ASSERT_TRUE(out.status.has_value()) << "mpirun -np " << n << " did not end in 15 s:\n"
                                        << out.output;
    EXPECT_EQ(*out.status, 0) << out.output;
    for (int r = 0; r < ranks; ++r) {
      const std::string line = "ok rank " + std::to_string(r) + " of " + n;
      EXPECT_NE(out.output.find(line), std::string::npos) << "no '" << line << "' in:\n"
                                                          << out.output;
    }
  }

  std::string mpirun_;
};

TEST_F(MpiBackend, EveryCollectiveSendRecvAndTheRingOnTwoRanks) { run_job(2); }

TEST_F(MpiBackend, EveryCollectiveSendRecvAndTheRingOnFourRanks) { run_job(4); }

// The progress thread: a recv completes with nobody waiting, and an unmatched recv fails at
// the group's timeout (MPI has none of its own), leaving the group usable; a group destroyed
// while a timed-out recv's cancel is not yet confirmed does not cancel it twice.
TEST_F(MpiBackend, ProgressThreadCompletesUnwaitedRecvAndTimesOutUnmatchedOne) {
  const Outcome out = run_bounded({mpirun_, "-np", "2", "--oversubscribe", "--bind-to", "none",
                                   GLASS_WORKER_PATH, "mpi_progress"},
                                  milliseconds(15000));
  ASSERT_TRUE(out.status.has_value()) << out.output;
  EXPECT_EQ(*out.status, 0) << out.output;
  EXPECT_NE(out.output.find("ok rank 0 of 2"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("ok rank 1 of 2"), std::string::npos) << out.output;
}

// MPI has no timeouts: a rank that skips a collective leaves the others inside MPI for
// good. Their Work still fails at the group's timeout, naming the op and its number, and at
// exit the backend aborts the job (MPI cannot be finalised under a stuck call), so mpirun
// ends every rank instead of hanging.
TEST_F(MpiBackend, SkippedCollectiveTimesOutAndEndsTheJob) {
  const Outcome out = run_bounded(
      {mpirun_, "-np", "2", "--oversubscribe", "--bind-to", "none", GLASS_WORKER_PATH, "mpi_skip"},
      milliseconds(15000));
  ASSERT_TRUE(out.status.has_value()) << "the job did not end:\n" << out.output;
  EXPECT_NE(*out.status, 0) << out.output;
  EXPECT_NE(out.output.find("allreduce #0 timed out after 300 ms"), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("MPI_Abort"), std::string::npos) << out.output;
}

// A program that never calls destroy_process_group: the exit handler stops every live
// group's threads (one is inside MPI_Testsome for an unmatched recv) before MPI_Finalize,
// so the job ends cleanly with status 0 instead of crashing, hanging or aborting.
TEST_F(MpiBackend, ExitWithGroupsStillAliveFinalizesCleanly) {
  const Outcome out = run_bounded({mpirun_, "-np", "2", "--oversubscribe", "--bind-to", "none",
                                   GLASS_WORKER_PATH, "mpi_exit_live"},
                                  milliseconds(15000));
  ASSERT_TRUE(out.status.has_value()) << "the job did not end:\n" << out.output;
  EXPECT_EQ(*out.status, 0) << out.output;
  for (const char* line : {"ok rank 0 of 2, exiting with its groups alive",
                           "ok rank 1 of 2, exiting with its groups alive"})
    EXPECT_NE(out.output.find(line), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find("MPI_Abort"), std::string::npos) << out.output;
}

// Started without mpirun, an MPI program is a job of one (MPI's "singleton"), and
// init_process_group("mpi") takes that from MPI with no environment at all.
TEST_F(MpiBackend, WithoutMpirunAProcessIsAJobOfOne) {
  const Outcome out = run_bounded({GLASS_WORKER_PATH, "mpi_collectives", "1"}, milliseconds(10000));
  ASSERT_TRUE(out.status.has_value()) << out.output;
  EXPECT_EQ(*out.status, 0) << out.output;
  EXPECT_NE(out.output.find("ok rank 0 of 1"), std::string::npos) << out.output;
}

}  // namespace

#endif  // GLASS_WORKER_PATH
