// distributed/env.cpp — reading torchrun's variables, each checked with a one-line error.
//
// Every message starts with "init_process_group(env://)" (or the tcp:// form) and names the
// variable, its value and the range it must be in, because the person reading it is usually
// looking at a batch script, not at this code.
#include "distributed/env.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "core/error.h"

namespace glass::distributed {
namespace {

constexpr const char* kWhere = "init_process_group(env://): ";

std::optional<std::string> getenv_string(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// A required integer variable; `hint` says who normally sets it.
int require_int(const char* name, const char* hint) {
  const auto text = getenv_string(name);
  GLASS_CHECK(text.has_value(), kWhere, name, " is not set (", hint, ")");
  const auto value = parse_int(*text);
  GLASS_CHECK(value.has_value() && *value >= 0 && *value <= 1'000'000, kWhere, name, "='", *text,
              "' is not a non-negative integer");
  return static_cast<int>(*value);
}

// An optional integer variable: `fallback` when unset.
int optional_int(const char* name, int fallback) {
  if (!getenv_string(name).has_value()) return fallback;
  return require_int(name, "");
}

std::optional<uint16_t> parse_port(const std::string& text) {
  const auto value = parse_int(text);
  if (!value.has_value() || *value < 1 || *value > 65535) return std::nullopt;
  return static_cast<uint16_t>(*value);
}

}  // namespace

std::optional<long long> parse_int(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

EnvRendezvous read_env(int rank, int world_size) {
  EnvRendezvous env;

  const auto addr = getenv_string("MASTER_ADDR");
  GLASS_CHECK(addr.has_value() && !addr->empty(), kWhere,
              "MASTER_ADDR is not set (glassrun and torchrun set it; or use "
              "init_method=\"tcp://host:port\")");
  env.master_addr = *addr;

  const auto port_text = getenv_string("MASTER_PORT");
  GLASS_CHECK(port_text.has_value(), kWhere,
              "MASTER_PORT is not set (glassrun and torchrun set it; or use "
              "init_method=\"tcp://host:port\")");
  const auto port = parse_port(*port_text);
  GLASS_CHECK(port.has_value(), kWhere, "MASTER_PORT='", *port_text,
              "' is not a port number (1-65535)");
  env.master_port = *port;

  env.rank = rank >= 0 ? rank : require_int("RANK", "glassrun and torchrun set it; or pass rank=");
  env.world_size =
      world_size >= 0
          ? world_size
          : require_int("WORLD_SIZE", "glassrun and torchrun set it; or pass world_size=");
  GLASS_CHECK(env.world_size >= 1, kWhere, "WORLD_SIZE=", env.world_size, " must be at least 1");
  GLASS_CHECK(env.rank < env.world_size, kWhere, "RANK=", env.rank,
              " is not less than WORLD_SIZE=", env.world_size);

  env.local_rank = optional_int("LOCAL_RANK", env.rank);
  env.local_world_size = optional_int("LOCAL_WORLD_SIZE", env.world_size);
  GLASS_CHECK(env.local_world_size >= 1, kWhere, "LOCAL_WORLD_SIZE=", env.local_world_size,
              " must be at least 1");
  GLASS_CHECK(env.local_rank < env.local_world_size, kWhere, "LOCAL_RANK=", env.local_rank,
              " is not less than LOCAL_WORLD_SIZE=", env.local_world_size);

  const auto agent = getenv_string("GLASS_USE_AGENT_STORE");
  env.agent_store = agent.has_value() && (*agent == "1" || *agent == "true");
  return env;
}

void parse_tcp_init_method(const std::string& url, std::string& host, uint16_t& port) {
  const std::string scheme = "tcp://";
  GLASS_CHECK(url.rfind(scheme, 0) == 0, "init_process_group: init_method='", url,
              "' is not \"env://\" or \"tcp://host:port\"");
  const std::string rest = url.substr(scheme.size());
  // The last colon splits host from port, so "tcp://[::1]:29500" keeps its brackets' colons.
  const auto colon = rest.rfind(':');
  GLASS_CHECK(colon != std::string::npos && colon > 0, "init_process_group: init_method='", url,
              "' has no host:port (expected \"tcp://host:port\")");
  std::string parsed_host = rest.substr(0, colon);
  if (parsed_host.size() >= 2 && parsed_host.front() == '[' && parsed_host.back() == ']')
    parsed_host = parsed_host.substr(1, parsed_host.size() - 2);
  const std::string port_text = rest.substr(colon + 1);
  const auto parsed_port = parse_port(port_text);
  GLASS_CHECK(parsed_port.has_value(), "init_process_group: init_method='", url, "': port '",
              port_text, "' is not a port number (1-65535)");
  host = parsed_host;
  port = *parsed_port;
}

}  // namespace glass::distributed
