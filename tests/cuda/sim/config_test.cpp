// tests/cuda/sim/config_test.cpp — GLASS_SIM_* parsing (cuda/sim/config.h).
//
// Defaults when unset, exact values when set, and a clear error (naming the variable and
// the value) for anything else.
#include "cuda/sim/config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>

#include "core/error.h"

namespace glass::cuda::sim {
namespace {

SimConfig parse(const std::map<std::string, std::string>& env) {
  return parse_config([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(const std::map<std::string, std::string>& env) {
  try {
    parse(env);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SimConfig, DefaultsWhenUnset) {
  const SimConfig c = parse({});
  EXPECT_EQ(c.devices, 2);
  EXPECT_EQ(c.memory_bytes, size_t{4096} << 20);
  EXPECT_EQ(c.sms, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_FALSE(c.race_check);
}

TEST(SimConfig, ValuesAreTakenAndMemoryRoundsUpToTwoMiB) {
  const SimConfig c = parse({{"GLASS_SIM_DEVICES", "3"},
                             {"GLASS_SIM_MEMORY_MB", "5"},
                             {"GLASS_SIM_SMS", "7"},
                             {"GLASS_SIM_CHECK", "1"}});
  EXPECT_EQ(c.devices, 3);
  EXPECT_EQ(c.memory_bytes, size_t{6} << 20);
  EXPECT_EQ(c.sms, 7);
  EXPECT_TRUE(c.race_check);
  EXPECT_EQ(parse({{"GLASS_SIM_MEMORY_MB", "64"}}).memory_bytes, size_t{64} << 20);
  EXPECT_FALSE(parse({{"GLASS_SIM_CHECK", "0"}}).race_check);
}

TEST(SimConfig, BadValuesNameTheVariableAndTheValue) {
  for (const auto& [name, value] :
       std::map<std::string, std::string>{{"GLASS_SIM_DEVICES", "0"},
                                          {"GLASS_SIM_MEMORY_MB", "lots"},
                                          {"GLASS_SIM_SMS", "4x"},
                                          {"GLASS_SIM_CHECK", "yes"}}) {
    const std::string msg = error_of({{name, value}});
    EXPECT_NE(msg.find(name + "=\"" + value + "\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("expected"), std::string::npos) << msg;
  }
  EXPECT_NE(error_of({{"GLASS_SIM_SMS", "-1"}}), "");
  EXPECT_NE(error_of({{"GLASS_SIM_SMS", ""}}), "");
  EXPECT_NE(error_of({{"GLASS_SIM_MEMORY_MB", "99999999999999999999"}}), "");
  EXPECT_NE(error_of({{"GLASS_SIM_CHECK", "2"}}), "");
}

}  // namespace
}  // namespace glass::cuda::sim
