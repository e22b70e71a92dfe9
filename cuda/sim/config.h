// cuda/sim/config.h — the simulated GPU's shape, read once from the environment.
//
//   GLASS_SIM_DEVICES    number of devices (default 2, so multi-device paths get tested)
//   GLASS_SIM_MEMORY_MB  memory per device in MiB (default 4096), rounded up to 2 MiB
//   GLASS_SIM_SMS        SM worker threads per device (default: the machine's cores)
//   GLASS_SIM_CHECK      1 turns the stream-race checker on, and with it the kernel checks:
//                        global bounds and shared-memory races (default 0: off, for speed)
//   GLASS_SIM_STATS      1 counts every kernel's memory traffic (kernel_stats.h; read there)
//
// Invariant: a SimConfig that parse_config returned is valid (every count at least 1,
// memory a positive multiple of 2 MiB); a bad value is an error naming the variable,
// the value and the accepted range, never a silent default.
#pragma once

#include <cstddef>
#include <functional>

namespace glass::cuda::sim {

struct SimConfig {
  int devices = 2;
  size_t memory_bytes = size_t{4096} << 20;  // per device
  int sms = 1;                               // SM worker threads per device
  bool race_check = false;
};

// `lookup` returns the variable's value or null when unset (std::getenv in production;
// a map in the tests).
SimConfig parse_config(const std::function<const char*(const char*)>& lookup);
SimConfig config_from_env();

}  // namespace glass::cuda::sim
