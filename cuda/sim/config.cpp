// cuda/sim/config.cpp — parsing GLASS_SIM_* (see config.h for the variables).
//
// Invariant: every value is parsed whole (no trailing characters, no overflow) and
// checked against its range before the config is returned.
#include "cuda/sim/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/error.h"

namespace glass::cuda::sim {
namespace {

constexpr size_t kGranularity = size_t{2} << 20;  // device memory comes in 2 MiB pages

// The value of `name` as an integer in [lo, hi], or `fallback` when unset.
int64_t parse_int(const std::function<const char*(const char*)>& lookup, const char* name,
                  int64_t fallback, int64_t lo, int64_t hi, const char* meaning) {
  const char* text = lookup(name);
  if (text == nullptr) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  const bool whole = end != text && *end == '\0' && errno == 0;
  GLASS_CHECK(whole && value >= lo && value <= hi, name, "=\"", text, "\" is not valid: expected ",
              meaning, ", an integer from ", lo, " to ", hi, ". Fix or unset it (default ",
              fallback, ").");
  return value;
}

}  // namespace

SimConfig parse_config(const std::function<const char*(const char*)>& lookup) {
  SimConfig config;
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  config.devices =
      static_cast<int>(parse_int(lookup, "GLASS_SIM_DEVICES", 2, 1, 16, "the number of devices"));
  // 1 TiB per device at most: the whole arena is one virtual reservation.
  const int64_t mb =
      parse_int(lookup, "GLASS_SIM_MEMORY_MB", 4096, 1, int64_t{1} << 20, "MiB per device");
  config.memory_bytes = (static_cast<size_t>(mb) << 20) + kGranularity - 1;
  config.memory_bytes -= config.memory_bytes % kGranularity;
  config.sms = static_cast<int>(
      parse_int(lookup, "GLASS_SIM_SMS", cores, 1, 1024, "SM worker threads per device"));
  config.race_check =
      parse_int(lookup, "GLASS_SIM_CHECK", 0, 0, 1, "1 (race checker on) or 0 (off)") == 1;
  return config;
}

SimConfig config_from_env() {
  return parse_config([](const char* name) { return std::getenv(name); });
}

}  // namespace glass::cuda::sim
