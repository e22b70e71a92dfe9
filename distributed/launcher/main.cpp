// distributed/launcher/main.cpp — glassrun: torchrun's job for glasstorch programs.
//
//   glassrun --nproc-per-node 4 ./train --epochs 3
//
// The steps: parse the options; host the rendezvous store (node 0) or check that it can be
// reached (other nodes); start the ranks with torchrun's variables; supervise them
// (supervisor.h), which in a multi-node job also shares the first failed rank through the
// store so every node stops; and keep node 0's store up until every node is done with it,
// then report the other nodes' statuses. Invariant: glassrun hosts the store itself and tells the
// ranks so (GLASS_USE_AGENT_STORE=1), so every rank is a client and no rank has to outlive the
// others to keep the store alive.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "distributed/launcher/options.h"
#include "distributed/launcher/signals.h"
#include "distributed/launcher/spawn.h"
#include "distributed/launcher/supervisor.h"
#include "distributed/socket.h"
#include "distributed/tcp_store.h"

extern char** environ;

namespace glass::distributed::launcher {
namespace {

void say(const std::string& line) { std::fprintf(stderr, "glassrun: %s\n", line.c_str()); }

// How often each node of a multi-node job asks the store whether another node's rank
// failed: one small request per tick, and a failure stops every node within about this.
constexpr std::chrono::milliseconds kFailureCheckInterval{250};

int usable_cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
}

// glassrun's environment, with torchrun's variables for one rank put in.
std::vector<std::string> rank_environment(const LaunchOptions& opts, uint16_t port,
                                          int local_rank) {
  const std::vector<std::pair<std::string, std::string>> ours = {
      {"MASTER_ADDR", opts.master_addr},
      {"MASTER_PORT", std::to_string(port)},
      {"RANK", std::to_string(opts.node_rank * opts.nproc_per_node + local_rank)},
      {"WORLD_SIZE", std::to_string(opts.nnodes * opts.nproc_per_node)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(opts.nproc_per_node)},
      {"GROUP_RANK", std::to_string(opts.node_rank)},
      {"GLASS_USE_AGENT_STORE", "1"},
  };
  std::vector<std::string> env;
  bool user_set_threads = false;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "GLASS_NUM_THREADS") user_set_threads = true;
    if (std::none_of(ours.begin(), ours.end(), [&](const auto& kv) { return kv.first == name; }))
      env.push_back(entry);
  }
  for (const auto& [name, value] : ours) env.push_back(name + "=" + value);
  // Ranks share the node's cores: without this, N ranks each start a pool of all cores.
  if (!user_set_threads)
    env.push_back("GLASS_NUM_THREADS=" +
                  std::to_string(std::max(1, usable_cores() / opts.nproc_per_node)));
  return env;
}

std::string node_done_key(int node) { return "glassrun/node_done/" + std::to_string(node); }
// A node's exit status, set before its node_done key (which the store overwrites with
// "lost" when the node's connection closes, so it cannot carry the status itself).
std::string node_status_key(int node) { return "glassrun/node_status/" + std::to_string(node); }
// The first rank of the job to fail, as "node rank status": every node watches it.
constexpr const char* kJobFailedKey = "glassrun/job_failed";

// The failure rule across nodes (Supervisor::share_failures): the first node whose rank
// fails writes the job-failed key (compare_set, so the first failure stays), and every
// node reads it on its loop's tick. If the store cannot be reached the node says so once
// and stops watching; its own ranks' failures still end its part of the job.
void share_failures_through(Store& store, int node_rank, Supervisor& supervisor) {
  auto watching = std::make_shared<bool>(true);
  auto lost = [watching](const Error& e) {
    if (*watching)
      say("lost the store (" + std::string(e.what()) +
          "); no longer watching the "
          "other nodes for failures");
    *watching = false;
  };
  auto report = [&store, node_rank, watching, lost](int rank, int status) {
    if (!*watching) return;
    const std::string failure =
        std::to_string(node_rank) + " " + std::to_string(rank) + " " + std::to_string(status);
    try {
      store.compare_set(kJobFailedKey, {}, std::vector<uint8_t>(failure.begin(), failure.end()));
    } catch (const Error& e) {
      lost(e);
    }
  };
  auto check = [&store, node_rank, watching, lost]() -> std::optional<Supervisor::RemoteFailure> {
    if (!*watching) return std::nullopt;
    try {
      if (!store.check({kJobFailedKey})) return std::nullopt;
      int node = -1, rank = -1, status = 1;
      std::istringstream(store.get_string(kJobFailedKey)) >> node >> rank >> status;
      if (node == node_rank) return std::nullopt;  // our own, already acted on
      return Supervisor::RemoteFailure{"rank " + std::to_string(rank) + " on node " +
                                           std::to_string(node) + " failed with status " +
                                           std::to_string(status),
                                       status};
    } catch (const Error& e) {
      lost(e);
      return std::nullopt;
    }
  };
  supervisor.share_failures(report, check, kFailureCheckInterval);
}

// Node 0's part of the job's status: each other node's, said when it was not 0. Returns
// node 0's own status if that failed, else the first other node's failure, else 0.
int combine_node_statuses(Store& store, int nnodes, int own_status) {
  int status = own_status;
  for (int node = 1; node < nnodes; ++node) {
    int theirs = 0;
    try {
      if (store.check({node_status_key(node)})) {
        theirs = std::stoi(store.get_string(node_status_key(node)));
        if (theirs != 0)
          say("node " + std::to_string(node) + " exited with status " + std::to_string(theirs));
      } else if (store.check({node_done_key(node)})) {
        theirs = 1;
        say("node " + std::to_string(node) + " lost its connection before it reported a status");
      } else {
        theirs = 1;  // wait_for_other_nodes already said it did not finish in time
      }
    } catch (const std::exception&) {
      theirs = 1;
    }
    if (status == 0) status = theirs;
  }
  return status;
}

// A store on a loopback address listens there only (TCPStoreServer), so a node on another
// machine can never connect: say so before the other nodes time out wondering why.
void warn_if_loopback(const LaunchOptions& opts) {
  try {
    if (!is_loopback(resolve_ipv4(opts.master_addr, 0))) return;
  } catch (const Error&) {
    return;  // hosting the store already failed with its own message
  }
  say("warning: --master-addr " + opts.master_addr +
      " is a loopback address; nodes on other machines cannot reach the store (give node 0's "
      "network address)");
}

// Node 0 keeps the store up until the other nodes say they are done (or their connection
// closes, which the store records in the same key). Waits in short slices so Ctrl-C still
// ends it.
void wait_for_other_nodes(Store& store, int nnodes, std::chrono::seconds limit) {
  std::vector<std::string> keys;
  for (int node = 1; node < nnodes; ++node) keys.push_back(node_done_key(node));
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!store.check(keys)) {
    for (int sig : drain_signals())
      if (sig != SIGCHLD) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      say("the other nodes did not finish within " + std::to_string(limit.count()) +
          " s; taking the store down");
      return;
    }
    try {
      store.wait(keys, std::chrono::milliseconds(200));
    } catch (const Error&) {
      // A slice ran out; check the signals and the deadline again.
    }
  }
}

int run(const LaunchOptions& opts) {
  const std::string program = resolve_program(opts.command[0]);
  install_signal_pipe();

  const auto timeout = std::chrono::seconds(opts.timeout_s);
  std::unique_ptr<TCPStore> store;
  TCPStoreOptions store_opts;
  store_opts.port = opts.master_port;
  store_opts.is_server = opts.node_rank == 0;
  store_opts.wait_for_workers = false;
  store_opts.timeout = timeout;
  try {
    store = std::make_unique<TCPStore>(opts.master_addr, store_opts);
  } catch (const Error& e) {
    GLASS_CHECK(
        false, "glassrun: ",
        opts.node_rank == 0 ? "cannot host the store: " : "cannot reach the store: ", e.what());
  }
  const uint16_t port = store->port() != 0 ? store->port() : opts.master_port;
  if (opts.nnodes > 1) {
    if (opts.node_rank == 0) {
      warn_if_loopback(opts);
      // Printed before any rank starts: the other nodes are told this port.
      say("store at " + opts.master_addr + ":" + std::to_string(port));
    } else {
      store->set_on_disconnect(node_done_key(opts.node_rank), "lost");
    }
  }

  int status = 0;
  {
    Supervisor supervisor(std::chrono::seconds(opts.grace_s));
    for (int local = 0; local < opts.nproc_per_node; ++local) {
      const int rank = opts.node_rank * opts.nproc_per_node + local;
      supervisor.add(rank, spawn_rank(program, opts.command, rank_environment(opts, port, local)));
    }
    if (opts.nnodes > 1) share_failures_through(*store, opts.node_rank, supervisor);
    status = supervisor.run();
  }

  if (opts.nnodes > 1) {
    if (opts.node_rank == 0) {
      // After a failure here, the others only need the store long enough to name it.
      wait_for_other_nodes(*store, opts.nnodes,
                           status == 0 ? timeout : std::chrono::seconds(opts.grace_s));
      status = combine_node_statuses(*store, opts.nnodes, status);
    } else {
      store->set(node_status_key(opts.node_rank), std::to_string(status));
      store->set(node_done_key(opts.node_rank), std::to_string(status));
    }
  }
  return status;
}

}  // namespace
}  // namespace glass::distributed::launcher

int main(int argc, char** argv) {
  using namespace glass::distributed::launcher;
  LaunchOptions opts;
  try {
    opts = parse_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const glass::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  if (opts.help) {
    std::fputs(usage_text(), stdout);
    return 0;
  }
  try {
    return run(opts);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
