// tests/distributed/worker/launcher_scenarios.cpp — the scenarios glassrun_test.cpp runs:
// what glassrun hands each rank, and how ranks end; and the TCPStore client that
// tcp_store_test.cpp kills.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "distributed/env.h"
#include "distributed/tcp_store.h"
#include "scenarios.h"

namespace glass::distributed::worker {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : fallback;
}

void print_line(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

void exit_after(unsigned seconds) { ::alarm(seconds); }

void meet(const std::string& tag) {
  const EnvRendezvous env = read_env();
  TCPStoreOptions opts;
  opts.port = env.master_port;
  opts.timeout = std::chrono::seconds(20);
  TCPStore store(env.master_addr, opts);
  const std::string key = "worker/meet/" + tag;
  // The rank that completes the count opens the door for everyone.
  if (store.add(key, 1) == env.world_size) store.set(key + "/all", "1");
  store.wait({key + "/all"});
}

int print_env(const Args&) {
  for (const char* name :
       {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
        "MASTER_PORT", "GLASS_NUM_THREADS", "GLASS_USE_AGENT_STORE"})
    print_line(std::string(name) + "=" + env_or(name, "(unset)"));
  print_line("pid=" + std::to_string(::getpid()));
  std::fprintf(stderr, "to stderr from %s\n", env_or("RANK", "?").c_str());
  // No newline: glassrun must still write this line, prefixed, when the pipe closes.
  std::printf("last line without newline");
  std::fflush(stdout);
  return 0;
}

int fail_rank1(const Args&) {
  exit_after(30);
  print_line("pid=" + std::to_string(::getpid()));
  meet("fail_rank1");  // every rank has printed its pid before rank 1 fails
  if (read_env().rank == 1) {
    print_line("rank 1 fails now");
    return 3;
  }
  for (;;) ::pause();  // until glassrun stops us
}

int wait_forever(const Args&) {
  exit_after(30);
  print_line("pid=" + std::to_string(::getpid()));
  meet("wait_forever");
  print_line("ready");
  for (;;) ::pause();
}

int ignore_sigint(const Args&) {
  exit_after(30);
  ::signal(SIGINT, SIG_IGN);  // only glassrun's SIGKILL after the grace period ends us
  print_line("pid=" + std::to_string(::getpid()));
  meet("ignore_sigint");
  print_line("ready");
  for (;;) ::pause();
}

int store_meet(const Args&) {
  exit_after(30);
  meet("store_meet");
  const EnvRendezvous env = read_env();
  print_line("met rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
             " local " + std::to_string(env.local_rank) + " of " +
             std::to_string(env.local_world_size));
  return 0;
}

int store_client_until_killed(const Args& args) {
  exit_after(30);
  if (args.size() != 1) {
    std::fprintf(stderr, "store_client_until_killed: expected the server's port\n");
    return 2;
  }
  TCPStoreOptions opts;
  opts.port = static_cast<uint16_t>(std::stoi(args[0]));
  opts.timeout = std::chrono::seconds(5);
  TCPStore store("127.0.0.1", opts);
  store.set_on_disconnect("glass/exited/1", "rank 1 died");
  print_line("ready");
  for (;;) ::pause();  // until killed
}

}  // namespace glass::distributed::worker
