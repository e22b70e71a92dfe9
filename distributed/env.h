// distributed/env.h — torchrun's environment, read and checked in one place.
//
// glassrun (and torchrun, mpirun with a wrapper, a batch script) tell each rank who it is
// through environment variables. Invariant: read_env() either returns a consistent
// rendezvous (0 <= RANK < WORLD_SIZE, 0 <= LOCAL_RANK < LOCAL_WORLD_SIZE, a port in
// 1..65535) or throws one line naming the variable and what is wrong with it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace glass::distributed {

struct EnvRendezvous {
  std::string master_addr;   // MASTER_ADDR
  uint16_t master_port = 0;  // MASTER_PORT
  int rank = 0;              // RANK
  int world_size = 1;        // WORLD_SIZE
  int local_rank = 0;        // LOCAL_RANK (default: RANK)
  int local_world_size = 1;  // LOCAL_WORLD_SIZE (default: WORLD_SIZE)
  // GLASS_USE_AGENT_STORE=1: the launcher hosts the TCPStore, so rank 0 connects as a
  // client instead of serving it (torchrun's TORCHELASTIC_USE_AGENT_STORE).
  bool agent_store = false;
};

// Reads the variables; `rank`/`world_size` >= 0 override RANK/WORLD_SIZE.
EnvRendezvous read_env(int rank = -1, int world_size = -1);

// Parses all of `text` as a base-10 integer; nullopt on junk, a lone sign, or overflow.
// (env:// and glassrun's options read their numbers with it.)
std::optional<long long> parse_int(const std::string& text);

// Parses "tcp://host:port" (init_method) into addr and port; throws naming the string.
void parse_tcp_init_method(const std::string& url, std::string& host, uint16_t& port);

}  // namespace glass::distributed
