// tests/distributed/glassrun_test.cpp — glassrun, run as a real process on
// distributed_worker (tests/distributed/worker/): the variables each rank gets, the
// "[rank R] " prefixes, a failing rank ending the job, Ctrl-C, and two glassrun processes
// as two nodes over loopback (meeting, and a failure on one node ending the other's ranks). Every
// wait is bounded; a glassrun that is still running when a test ends is killed (its ranks die with
// it: PR_SET_PDEATHSIG) and reaped.
#include <gtest/gtest.h>

#if defined(GLASS_GLASSRUN_PATH) && defined(GLASS_WORKER_PATH)

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// One glassrun process with its stdout and stderr captured together.
class Glassrun {
 public:
  explicit Glassrun(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {GLASS_GLASSRUN_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (std::string& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      // If this test binary dies (a crash, ctest's timeout), glassrun is killed too, and it
      // takes its ranks with it (KilledGlassrunTakesItsRanksWithIt).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the test died before prctl took hold
      ::dup2(fds[1], STDOUT_FILENO);
      ::dup2(fds[1], STDERR_FILENO);
      ::execv(c_argv[0], c_argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  ~Glassrun() {
    if (!status_.has_value() && pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  Glassrun(const Glassrun&) = delete;
  Glassrun& operator=(const Glassrun&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& output() const { return output_; }

  // Reads until the output matches `pattern` (true) or `limit` passes or EOF (false).
  bool read_until(const std::regex& pattern, milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    while (!std::regex_search(output_, pattern)) {
      if (!read_some(deadline)) return false;
    }
    return true;
  }

  // Reads to EOF and reaps glassrun; its exit code, or nullopt when `limit` passed first.
  std::optional<int> finish(milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    while (read_some(deadline)) {
    }
    while (Clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return status_;
      }
      std::this_thread::sleep_for(milliseconds(5));
    }
    return std::nullopt;
  }

 private:
  // One read; false at EOF or the deadline.
  bool read_some(Clock::time_point deadline) {
    if (eof_) return false;
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd pfd{fd_, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left)) <= 0) return false;
    char buffer[4096];
    const ssize_t n = ::read(fd_, buffer, sizeof(buffer));
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    output_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  bool eof_ = false;
  std::string output_;
  std::optional<int> status_;
};

// Gone: no such process, or a zombie that nothing will run again.
bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, name, state;
  stat >> pid_field >> name >> state;
  return !stat || state == "Z";
}

bool all_gone_within(const std::vector<pid_t>& pids, milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  for (;;) {
    if (std::all_of(pids.begin(), pids.end(), process_gone)) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
}

// The "[rank R] pid=N" lines, in the order printed.
std::vector<pid_t> worker_pids(const std::string& output) {
  std::vector<pid_t> pids;
  const std::regex line(R"(\[rank \d+\] pid=(\d+))");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
       it != std::sregex_iterator(); ++it)
    pids.push_back(static_cast<pid_t>(std::stol((*it)[1])));
  return pids;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int usable_cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

const std::string kWorker = GLASS_WORKER_PATH;

bool is_backend_available_in_worker() {
#ifdef GLASS_HAVE_GLOO
  return true;
#else
  return false;
#endif
}

TEST(Glassrun, GivesEachRankTorchrunVariablesAndPrefixesItsLines) {
  Glassrun run({"--nproc-per-node", "3", kWorker, "print_env"});
  ASSERT_EQ(run.finish(seconds(10)), 0) << run.output();
  const std::string& out = run.output();
  const char* user_threads = std::getenv("GLASS_NUM_THREADS");
  const std::string threads =
      user_threads != nullptr ? user_threads : std::to_string(std::max(1, usable_cores() / 3));
  std::smatch port;
  ASSERT_TRUE(std::regex_search(out, port, std::regex(R"(\[rank 0\] MASTER_PORT=(\d+))"))) << out;
  EXPECT_NE(port[1], "0");
  for (int r = 0; r < 3; ++r) {
    const std::string p = "[rank " + std::to_string(r) + "] ";
    EXPECT_TRUE(contains(out, p + "RANK=" + std::to_string(r) + "\n")) << out;
    EXPECT_TRUE(contains(out, p + "WORLD_SIZE=3\n")) << out;
    EXPECT_TRUE(contains(out, p + "LOCAL_RANK=" + std::to_string(r) + "\n")) << out;
    EXPECT_TRUE(contains(out, p + "LOCAL_WORLD_SIZE=3\n")) << out;
    EXPECT_TRUE(contains(out, p + "GROUP_RANK=0\n")) << out;
    EXPECT_TRUE(contains(out, p + "MASTER_ADDR=127.0.0.1\n")) << out;
    EXPECT_TRUE(contains(out, p + "MASTER_PORT=" + port[1].str() + "\n")) << out;
    EXPECT_TRUE(contains(out, p + "GLASS_USE_AGENT_STORE=1\n")) << out;
    EXPECT_TRUE(contains(out, p + "GLASS_NUM_THREADS=" + threads + "\n")) << out;
    EXPECT_TRUE(contains(out, p + "to stderr from " + std::to_string(r) + "\n")) << out;
    // The last line had no newline: glassrun wrote it, prefixed, when the rank's pipe closed.
    EXPECT_TRUE(contains(out, p + "last line without newline\n")) << out;
  }
  // Every line is some rank's, whole: 12 lines from each of 3 ranks.
  size_t lines = 0;
  for (size_t start = 0; start < out.size();) {
    const size_t end = out.find('\n', start);
    ASSERT_NE(end, std::string::npos) << "unterminated output: " << out;
    EXPECT_TRUE(
        std::regex_match(out.substr(start, end - start), std::regex(R"(\[rank [0-2]\] .*)")))
        << out.substr(start, end - start);
    ++lines;
    start = end + 1;
  }
  EXPECT_EQ(lines, 3u * 12u) << out;
}

TEST(Glassrun, FailingRankStopsTheOthersAndGivesItsStatus) {
  const auto start = Clock::now();
  Glassrun run({"--nproc-per-node", "3", kWorker, "fail_rank1"});
  const std::optional<int> status = run.finish(seconds(10));
  const std::string& out = run.output();
  ASSERT_EQ(status, 3) << out;
  EXPECT_LT(Clock::now() - start, seconds(8)) << out;
  EXPECT_FALSE(contains(out, "sending SIGKILL")) << "the waiting ranks should end at SIGTERM";
  const std::vector<pid_t> pids = worker_pids(out);
  ASSERT_EQ(pids.size(), 3u) << out;
  std::smatch pid1;
  ASSERT_TRUE(std::regex_search(out, pid1, std::regex(R"(\[rank 1\] pid=(\d+))"))) << out;
  EXPECT_TRUE(contains(out, "glassrun: rank 1 (pid " + pid1[1].str() +
                                ") exited with status 3; stopped the other ranks\n"))
      << out;
  // glassrun reaps every rank before it exits.
  for (pid_t pid : pids) EXPECT_TRUE(process_gone(pid)) << "pid " << pid << " left behind";
}

TEST(Glassrun, CtrlCIsPassedOnToEveryRank) {
  Glassrun run({"--nproc-per-node", "2", kWorker, "wait_forever"});
  ASSERT_TRUE(run.read_until(std::regex(R"(\[rank 0\] ready[^]*\[rank 1\] ready|)"
                                        R"(\[rank 1\] ready[^]*\[rank 0\] ready)"),
                             seconds(10)))
      << run.output();
  const std::vector<pid_t> pids = worker_pids(run.output());
  ASSERT_EQ(pids.size(), 2u) << run.output();
  ASSERT_EQ(::kill(run.pid(), SIGINT), 0);
  ASSERT_EQ(run.finish(seconds(10)), 128 + SIGINT) << run.output();
  EXPECT_TRUE(contains(run.output(), "glassrun: got SIGINT; passing it on to every rank\n"))
      << run.output();
  for (pid_t pid : pids) EXPECT_TRUE(process_gone(pid)) << "pid " << pid << " left behind";
}

// The SIGKILL after the grace period names the signal that was really sent first.
TEST(Glassrun, RanksThatIgnoreCtrlCAreKilledAfterTheGrace) {
  Glassrun run({"--grace", "1", "--nproc-per-node", "2", kWorker, "ignore_sigint"});
  ASSERT_TRUE(run.read_until(std::regex(R"(ready[^]*ready)"), seconds(10))) << run.output();
  const std::vector<pid_t> pids = worker_pids(run.output());
  ASSERT_EQ(pids.size(), 2u) << run.output();
  ASSERT_EQ(::kill(run.pid(), SIGINT), 0);
  ASSERT_EQ(run.finish(seconds(10)), 128 + SIGINT) << run.output();
  EXPECT_TRUE(
      contains(run.output(), "glassrun: ranks still running 1 s after SIGINT; sending SIGKILL\n"))
      << run.output();
  for (pid_t pid : pids) EXPECT_TRUE(process_gone(pid)) << "pid " << pid << " left behind";
}

TEST(Glassrun, KilledGlassrunTakesItsRanksWithIt) {
  Glassrun run({"--nproc-per-node", "2", kWorker, "wait_forever"});
  ASSERT_TRUE(run.read_until(std::regex(R"(ready[^]*ready)"), seconds(10))) << run.output();
  const std::vector<pid_t> pids = worker_pids(run.output());
  ASSERT_EQ(pids.size(), 2u) << run.output();
  ASSERT_EQ(::kill(run.pid(), SIGKILL), 0);
  run.finish(seconds(5));
  // PR_SET_PDEATHSIG: the kernel kills the ranks when glassrun dies.
  EXPECT_TRUE(all_gone_within(pids, seconds(5))) << run.output();
}

TEST(Glassrun, TwoNodesOverLoopbackMeetThroughNodeZerosStore) {
  Glassrun node0({"--nnodes", "2", "--node-rank", "0", "--master-port", "0", "--nproc-per-node",
                  "2", kWorker, "store_meet"});
  std::smatch port;
  const std::regex store_line(R"(glassrun: store at 127\.0\.0\.1:(\d+)\n)");
  ASSERT_TRUE(node0.read_until(store_line, seconds(10))) << node0.output();
  const std::string out0_so_far = node0.output();
  ASSERT_TRUE(std::regex_search(out0_so_far, port, store_line));
  Glassrun node1({"--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1",
                  "--master-port", port[1].str(), "--nproc-per-node", "2", kWorker, "store_meet"});
  ASSERT_EQ(node1.finish(seconds(15)), 0) << node1.output();
  ASSERT_EQ(node0.finish(seconds(15)), 0) << node0.output();
  // A store on loopback is out of reach of other machines: node 0 says so, once.
  EXPECT_TRUE(contains(out0_so_far,
                       "glassrun: warning: --master-addr 127.0.0.1 is a loopback "
                       "address; nodes on other machines cannot reach the store"))
      << out0_so_far;
  for (int r = 0; r < 4; ++r) {
    const std::string line = "[rank " + std::to_string(r) + "] met rank " + std::to_string(r) +
                             " of 4 local " + std::to_string(r % 2) + " of 2\n";
    EXPECT_TRUE(contains(r < 2 ? node0.output() : node1.output(), line))
        << node0.output() << node1.output();
  }
}

// Node 1's rank fails; node 0's rank only waits. Node 1 writes the failure into the store,
// node 0 sees it on its next tick and stops its rank, and both exit with the failed rank's
// status, naming it; node 0 also reports node 1's status.
TEST(Glassrun, FailingRankOnOneNodeStopsTheOtherNodes) {
  Glassrun node0(
      {"--nnodes", "2", "--node-rank", "0", "--master-port", "0", kWorker, "fail_rank1"});
  const std::regex store_line(R"(glassrun: store at 127\.0\.0\.1:(\d+)\n)");
  ASSERT_TRUE(node0.read_until(store_line, seconds(10))) << node0.output();
  const std::string out0_so_far = node0.output();
  std::smatch port;
  ASSERT_TRUE(std::regex_search(out0_so_far, port, store_line));
  Glassrun node1(
      {"--nnodes", "2", "--node-rank", "1", "--master-port", port[1].str(), kWorker, "fail_rank1"});
  ASSERT_EQ(node1.finish(seconds(15)), 3) << node1.output();
  const auto node1_done = Clock::now();
  ASSERT_EQ(node0.finish(seconds(10)), 3) << node0.output();
  EXPECT_LT(Clock::now() - node1_done, seconds(3)) << node0.output();

  EXPECT_TRUE(std::regex_search(
      node1.output(), std::regex(R"(glassrun: rank 1 \(pid \d+\) exited with status 3\n)")))
      << node1.output();
  const std::string& out0 = node0.output();
  EXPECT_TRUE(contains(out0,
                       "glassrun: rank 1 on node 1 failed with status 3; stopped this "
                       "node's ranks\n"))
      << out0;
  EXPECT_TRUE(contains(out0, "glassrun: node 1 exited with status 3\n")) << out0;
  EXPECT_FALSE(contains(out0, "sending SIGKILL")) << "rank 0 should end at SIGTERM";
  const std::vector<pid_t> pids = worker_pids(out0);
  ASSERT_EQ(pids.size(), 1u) << out0;
  EXPECT_TRUE(process_gone(pids[0])) << "rank 0 (pid " << pids[0] << ") left behind";
}

TEST(Glassrun, KilledRankIsNamedWithItsSignal) {
  Glassrun run({"--nproc-per-node", "2", kWorker, "killed_rank1"});
  ASSERT_EQ(run.finish(seconds(10)), 128 + SIGKILL) << run.output();
  EXPECT_TRUE(std::regex_search(
      run.output(),
      std::regex(
          R"(glassrun: rank 1 \(pid \d+\) was killed by SIGKILL; stopped the other ranks\n)")))
      << run.output();
}

TEST(Glassrun, RanksFormADefaultGroupFromItsEnvironment) {
  // The threads transport cannot cross processes; gloo can.
  if (!is_backend_available_in_worker()) GTEST_SKIP() << "built without Gloo";
  Glassrun run({"--nproc-per-node", "3", kWorker, "all_reduce_sum", "gloo"});
  ASSERT_EQ(run.finish(seconds(20)), 0) << run.output();
  // [r + 1, 10 (r + 1)] summed over r = 0, 1, 2: [6, 60], on every rank.
  for (int r = 0; r < 3; ++r)
    EXPECT_TRUE(contains(run.output(), "[rank " + std::to_string(r) + "] sum=6,60\n"))
        << run.output();
}

TEST(Glassrun, BadOptionsAreOneClearLine) {
  struct Case {
    std::vector<std::string> args;
    std::string line;
  };
  const std::vector<Case> cases = {
      {{"--nproc-per-node", "x", kWorker},
       "glassrun: --nproc-per-node 'x' is not an integer in 1..4096\n"},
      {{"--nnodes", "2", "--node-rank", "1", kWorker},
       "glassrun: node 1 needs --master-port (the port node 0 printed as \"glassrun: store at "
       "A:P\")\n"},
      {{"--node-rank", "2", "--nnodes", "2", kWorker},
       "glassrun: --node-rank 2 is not less than --nnodes 2\n"},
      {{"--frobnicate", kWorker}, "glassrun: unknown option --frobnicate (see glassrun --help)\n"},
      {{"--nproc-per-node"}, "glassrun: --nproc-per-node needs a value\n"},
      {{}, "glassrun: no program to run (see glassrun --help)\n"},
  };
  for (const Case& c : cases) {
    Glassrun run(c.args);
    EXPECT_EQ(run.finish(seconds(5)), 2) << run.output();
    EXPECT_EQ(run.output(), c.line);
  }
}

TEST(Glassrun, HelpAndAMissingProgram) {
  Glassrun help({"--help"});
  EXPECT_EQ(help.finish(seconds(5)), 0);
  EXPECT_TRUE(contains(help.output(), "usage: glassrun [--nproc-per-node N]")) << help.output();

  Glassrun missing({"--nproc-per-node", "2", "/nonexistent/train"});
  EXPECT_EQ(missing.finish(seconds(5)), 1);
  EXPECT_EQ(missing.output(), "glassrun: program '/nonexistent/train' is not an executable file\n");

  Glassrun not_in_path({"no-such-program-glassrun-test"});
  EXPECT_EQ(not_in_path.finish(seconds(5)), 1);
  EXPECT_EQ(not_in_path.output(),
            "glassrun: program 'no-such-program-glassrun-test' not found in PATH\n");
}

TEST(Glassrun, UnreachableMasterIsOneLine) {
  // Port 1 on loopback: nothing listens there (it is privileged), so every connect is refused.
  Glassrun run({"--nnodes", "2", "--node-rank", "1", "--master-port", "1", "--timeout", "1",
                kWorker, "store_meet"});
  EXPECT_EQ(run.finish(seconds(10)), 1) << run.output();
  EXPECT_TRUE(contains(run.output(), "glassrun: cannot reach the store: ")) << run.output();
  EXPECT_EQ(std::count(run.output().begin(), run.output().end(), '\n'), 1) << run.output();
}

}  // namespace

#endif  // GLASS_GLASSRUN_PATH && GLASS_WORKER_PATH
