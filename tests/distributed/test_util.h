// tests/distributed/test_util.h — what the distributed tests share: reading an error's
// message, and a fixture that gives each test a clean rendezvous environment.
//
// Invariant: RendezvousEnv restores every variable it touched, set or unset, whatever the
// test did, so tests that set RANK or MASTER_PORT cannot leak into the next one.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <vector>

namespace glass::distributed::testing {

// The message of what `fn` throws ("" when it throws nothing).
template <class F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline std::vector<uint8_t> bytes(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

// Unsets torchrun's variables (and glasstorch's agent-store switch) for one test, and puts
// back whatever was there before.
class RendezvousEnv : public ::testing::Test {
 protected:
  static constexpr const char* kNames[] = {
      "MASTER_ADDR",      "MASTER_PORT",          "RANK", "WORLD_SIZE", "LOCAL_RANK",
      "LOCAL_WORLD_SIZE", "GLASS_USE_AGENT_STORE"};

  void SetUp() override {
    for (const char* name : kNames) {
      if (const char* value = std::getenv(name)) saved_[name] = value;
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const char* name : kNames) {
      auto it = saved_.find(name);
      if (it == saved_.end())
        ::unsetenv(name);
      else
        ::setenv(name, it->second.c_str(), 1);
    }
  }
  static void set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

 private:
  std::map<std::string, std::string> saved_;
};

}  // namespace glass::distributed::testing
