// tests/distributed/faults_test.cpp — what ranks see when a job goes wrong, with real
// processes over loopback: a rank killed mid-all-reduce, a rank that skips a collective,
// ranks that disagree on a shape (GLASS_DISTRIBUTED_DEBUG=DETAIL), a bad environment.
//
// The ranks are started here, not by glassrun, whose stop-the-others would end the job
// before the library had to notice anything: this test hosts the store on port 0 (as
// glassrun does) and gives each rank torchrun's variables itself. Every wait is bounded;
// ChildProcess kills and reaps whatever is left (child_process.h).
#include <gtest/gtest.h>

#if defined(GLASS_WORKER_PATH) && defined(GLASS_HAVE_GLOO)

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "distributed/backends/gloo.h"
#include "distributed/child_process.h"
#include "distributed/hash_store.h"
#include "distributed/tcp_store.h"

namespace glass::distributed {
namespace {

using glass::test::ChildProcess;
using glass::test::lines_of;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kWorker = GLASS_WORKER_PATH;

// A job of `world` distributed_worker ranks that meet through a store this test hosts.
class Job {
 public:
  Job(int world, const std::vector<std::string>& scenario, const ChildProcess::Env& extra = {}) {
    TCPStoreOptions opts;
    opts.is_server = true;  // port 0: any free port, read back and passed on
    opts.wait_for_workers = false;
    opts.timeout = seconds(20);
    store_ = std::make_unique<TCPStore>("127.0.0.1", opts);
    for (int r = 0; r < world; ++r) {
      ChildProcess::Env env = {
          {"MASTER_ADDR", "127.0.0.1"},      {"MASTER_PORT", std::to_string(store_->port())},
          {"RANK", std::to_string(r)},       {"WORLD_SIZE", std::to_string(world)},
          {"LOCAL_RANK", std::to_string(r)}, {"LOCAL_WORLD_SIZE", std::to_string(world)},
          {"GLASS_USE_AGENT_STORE", "1"},    {"GLASS_NUM_THREADS", "1"}};
      env.insert(extra.begin(), extra.end());
      std::vector<std::string> argv = {kWorker};
      argv.insert(argv.end(), scenario.begin(), scenario.end());
      ranks_.push_back(std::make_unique<ChildProcess>(argv, env));
    }
  }

  ChildProcess& rank(int r) { return *ranks_[static_cast<size_t>(r)]; }
  int world() const { return static_cast<int>(ranks_.size()); }

  // Every rank's output, for failure messages.
  std::string output() const {
    std::string all;
    for (size_t r = 0; r < ranks_.size(); ++r)
      all += "--- rank " + std::to_string(r) + " " + ranks_[r]->output();
    return all;
  }

 private:
  std::unique_ptr<TCPStore> store_;  // outlives the ranks: destroyed after them
  std::vector<std::unique_ptr<ChildProcess>> ranks_;
};

// One rank alone with the given environment (no store; none of the test's own variables).
std::unique_ptr<ChildProcess> lone_rank(const ChildProcess::Env& env,
                                        const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kWorker, "init_only"};
  argv.insert(argv.end(), args.begin(), args.end());
  return std::make_unique<ChildProcess>(argv, env);
}

TEST(Faults, AKilledRankIsNamedByEveryOtherRankWithinTenSeconds) {
  Job job(3, {"all_reduce_loop"});
  const auto under_way = Clock::now() + seconds(20);
  for (int r = 0; r < job.world(); ++r)
    ASSERT_TRUE(job.rank(r).read_out_until(std::regex("looping\n"), under_way)) << job.output();

  ASSERT_EQ(::kill(job.rank(1).pid(), SIGKILL), 0);
  const auto killed = Clock::now();
  EXPECT_EQ(job.rank(1).finish(seconds(5)), 128 + SIGKILL);
  // The survivors learn of it from the closed connection (their timeout is 25 s), name the
  // collective they were in and rank 1, and exit.
  const std::regex names_rank1(
      R"(^distributed_worker all_reduce_loop: allreduce #\d+: connection to ranks? )"
      R"((\d+, )*1(, \d+)* closed)");
  for (int r : {0, 2}) {
    EXPECT_EQ(job.rank(r).finish(killed + seconds(10)), 1) << job.output();
    EXPECT_LT(Clock::now() - killed, seconds(10)) << "rank " << r << " took too long";
    EXPECT_TRUE(std::regex_search(job.rank(r).err(), names_rank1)) << job.output();
  }
}

// FSDP's collectives, the all-gathers around each unit and the reduce-scatters of its
// gradients, fail like DDP's all-reduce: rank 1 kills itself at a known point of a step
// (fault_scenarios.cpp's fsdp_loop), and the others name it and exit.
void expect_fsdp_survivors_name_rank1(const std::string& where, const std::string& collectives) {
  Job job(3, {"fsdp_loop", where});
  EXPECT_EQ(job.rank(1).finish(seconds(20)), 128 + SIGKILL) << job.output();
  const auto killed = Clock::now();
  const std::regex names_rank1("^distributed_worker fsdp_loop: (" + collectives +
                               R"() #\d+: connection to ranks? (\d+, )*1(, \d+)* closed)");
  for (int r : {0, 2}) {
    EXPECT_EQ(job.rank(r).finish(killed + seconds(10)), 1) << job.output();
    EXPECT_LT(Clock::now() - killed, seconds(10)) << "rank " << r << " took too long";
    EXPECT_EQ(job.rank(r).out(), "looping\n") << job.output();
    EXPECT_TRUE(std::regex_search(job.rank(r).err(), names_rank1)) << job.output();
  }
}

TEST(Faults, ARankKilledDuringFSDPsForwardIsNamedByTheOthersWithinTenSeconds) {
  expect_fsdp_survivors_name_rank1("forward", "allgather");
}

TEST(Faults, ARankKilledBeforeAReduceScatterIsNamedByTheOthersWithinTenSeconds) {
  expect_fsdp_survivors_name_rank1("backward", "reduce_scatter");
}

// Gloo writes to a dead peer's socket; SIGPIPE's default action would end the writing rank
// silently (status 141) instead of letting it report the death. The test above caught it
// now and then; this checks the cause directly.
TEST(Faults, AGlooGroupLeavesSigpipeUnableToEndTheProcess) {
  ProcessGroup::Options options;
  options.timeout = seconds(5);
  GlooProcessGroup group(std::make_shared<HashStore>(seconds(5)), 0, 1, options);
  struct sigaction current {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &current), 0);
  EXPECT_NE(current.sa_handler, SIG_DFL);
}

TEST(Faults, ASkippedCollectiveFailsTheOthersAtTheTimeoutNamingTheOpAndTheRank) {
  const auto start = Clock::now();
  Job job(3, {"skip_collective", "1500"});
  for (int r : {0, 2}) {
    EXPECT_EQ(job.rank(r).finish(seconds(15)), 1) << job.output();
    const std::string& err = job.rank(r).err();
    EXPECT_NE(err.find("distributed_worker skip_collective: allreduce #1"), std::string::npos)
        << job.output();
    EXPECT_NE(err.find("ranks that did not join allreduce #1: 1 (rank 1: silent)"),
              std::string::npos)
        << job.output();
  }
  EXPECT_GE(Clock::now() - start, milliseconds(1500)) << "failed before the timeout";
  // The first to give up says it timed out (a later one may instead see the connections the
  // first closed; its message still names the op and the silent rank).
  EXPECT_TRUE(job.rank(0).err().find("timed out after 1500 ms") != std::string::npos ||
              job.rank(2).err().find("timed out after 1500 ms") != std::string::npos)
      << job.output();
  // Rank 1 waited, connected and silent, until both had failed; then it exits normally.
  EXPECT_EQ(job.rank(1).finish(seconds(10)), 0) << job.output();
  EXPECT_EQ(job.rank(1).out(), "skipped allreduce #1\n") << job.output();
}

TEST(Faults, DetailDebugNamesTheRanksAndTheShapesThatDiffer) {
  Job job(3, {"mismatched_shapes"}, {{"GLASS_DISTRIBUTED_DEBUG", "DETAIL"}});
  const std::string expected =
      "distributed_worker mismatched_shapes: allreduce #0: ranks disagree — rank 0: float32 [2]; "
      "rank 1: float32 [3]; rank 2: float32 [4]\n";
  for (int r = 0; r < job.world(); ++r) {
    EXPECT_EQ(job.rank(r).finish(seconds(15)), 1) << job.output();
    EXPECT_EQ(job.rank(r).err(), expected) << "rank " << r << "\n" << job.output();
  }
}

// Each case: exit status 1, nothing on stdout, and on stderr exactly `line` and its '\n'.
struct EnvCase {
  std::string what;
  ChildProcess::Env env;
  std::vector<std::string> args;
  std::string line;
};

void expect_one_clear_line(const EnvCase& c) {
  auto rank = lone_rank(c.env, c.args);
  EXPECT_EQ(rank->finish(seconds(10)), 1) << c.what << "\n" << rank->output();
  EXPECT_EQ(rank->out(), "") << c.what;
  const auto lines = lines_of(rank->err());
  ASSERT_EQ(lines.size(), 1u) << c.what << "\n" << rank->output();
  EXPECT_EQ(lines[0], c.line) << c.what;
}

TEST(Faults, ABadEnvironmentIsOneClearLine) {
  const std::string prefix = "distributed_worker init_only: init_process_group(env://): ";
  const ChildProcess::Env good = {
      {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}, {"RANK", "1"}, {"WORLD_SIZE", "2"}};
  ChildProcess::Env no_rank = good;
  no_rank.erase("RANK");
  ChildProcess::Env rank_too_big = good;
  rank_too_big["RANK"] = "2";
  ChildProcess::Env bad_port = good;
  bad_port["MASTER_PORT"] = "http";
  const std::vector<EnvCase> cases = {
      {"RANK unset",
       no_rank,
       {},
       prefix + "RANK is not set (glassrun and torchrun set it; or pass rank=)"},
      {"RANK >= WORLD_SIZE", rank_too_big, {}, prefix + "RANK=2 is not less than WORLD_SIZE=2"},
      {"MASTER_PORT not a number",
       bad_port,
       {},
       prefix + "MASTER_PORT='http' is not a port number (1-65535)"},
  };
  for (const EnvCase& c : cases) expect_one_clear_line(c);
}

TEST(Faults, AMasterPortInUseIsOneClearLine) {
  // Something else listens on the port rank 0 is told to serve the store on.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  const std::unique_ptr<const int, void (*)(const int*)> closer(&fd,
                                                                [](const int* f) { ::close(*f); });
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(address);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &len), 0);
  const std::string port = std::to_string(ntohs(address.sin_port));
  // Rank 0 without GLASS_USE_AGENT_STORE hosts the store itself, as torchrun's rank 0 does.
  expect_one_clear_line(
      {"port in use",
       {{"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", port}, {"RANK", "0"}, {"WORLD_SIZE", "2"}},
       {},
       "distributed_worker init_only: init_process_group: rank 0 could not host the store at "
       "the master address 127.0.0.1:" +
           port +
           " (MASTER_ADDR:MASTER_PORT, or the tcp:// init_method): TCPStore: cannot "
           "listen on 127.0.0.1:" +
           port + ": port in use"});
}

TEST(Faults, AnUnreachableMasterIsOneClearLineAtTheTimeout) {
  // Port 1 on loopback: nothing listens there (it is privileged), so every connect is refused.
  const auto start = Clock::now();
  expect_one_clear_line(
      {"unreachable master",
       {{"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "1"}, {"RANK", "1"}, {"WORLD_SIZE", "2"}},
       {"500"},
       "distributed_worker init_only: init_process_group: rank 1 could not reach the store at "
       "the master address 127.0.0.1:1 (MASTER_ADDR:MASTER_PORT, or the tcp:// init_method): "
       "TCPStore: could not connect to 127.0.0.1:1 within 500 ms (connection refused)"});
  EXPECT_LT(Clock::now() - start, seconds(10));  // the 500 ms timeout, not a hang
}

}  // namespace
}  // namespace glass::distributed

#endif  // GLASS_WORKER_PATH && GLASS_HAVE_GLOO
