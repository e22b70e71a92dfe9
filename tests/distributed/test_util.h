// tests/distributed/test_util.h — what the distributed tests share: reading an error's
// message, ranks as threads of this process, the bound two float32 summation orders keep
// to, and a fixture that gives each test a clean rendezvous environment.
//
// Invariants: run_rank_threads joins every thread it started before it returns, whatever the
// ranks threw; RendezvousEnv restores every variable it touched, set or unset, whatever the
// test did, so tests that set RANK or MASTER_PORT cannot leak into the next one.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/tensor.h"
#include "distributed/hash_store.h"
#include "distributed/process_group.h"

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

// A backend's group for rank `rank` of `size` over `store` (make_gloo_group, for one).
using GroupFactory = std::function<std::shared_ptr<ProcessGroup>(
    std::shared_ptr<Store> store, int rank, int size, const ProcessGroup::Options& options)>;
using RankBody = std::function<void(ProcessGroup& group, int rank)>;

// Runs `body` on `world` ranks (threads), each with its own group from `factory` over one
// HashStore, every wait bounded by `timeout`; returns what each rank threw ("" for none).
inline std::vector<std::string> run_rank_threads(int world, const GroupFactory& factory,
                                                 const RankBody& body,
                                                 std::chrono::milliseconds timeout,
                                                 const std::string& group_name) {
  auto store = std::make_shared<HashStore>(timeout);
  std::vector<std::string> errors(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        ProcessGroup::Options options;
        options.timeout = timeout;
        options.group_name = group_name;
        std::shared_ptr<ProcessGroup> group = factory(store, r, world, options);
        body(*group, r);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

inline void expect_no_errors(const std::vector<std::string>& errors) {
  for (size_t r = 0; r < errors.size(); ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

// Two float32 sums of the same per-rank inputs, added in different orders (the ring's and a
// library's), agree within this bound: any order of adding n floats in round-to-nearest is
// within (n − 1)·u·Σ|x| of the exact sum (u = 2^-24; Jeannerod and Rump, 2013), so two
// orders differ by at most 2(n − 1)·u·Σ|x|, elementwise (n = world size). NaN fails it.
inline void expect_within_summation_bound(const Tensor& got, const Tensor& other,
                                          const std::vector<Tensor>& inputs,
                                          const std::string& what) {
  const int64_t n = got.numel();
  const double u = 0x1.0p-24, orders = 2.0 * (static_cast<double>(inputs.size()) - 1);
  const Tensor a = got.contiguous(), b = other.contiguous();
  int reported = 0;
  for (int64_t i = 0; i < n && reported < 3; ++i) {
    double abs_sum = 0;
    for (const Tensor& x : inputs) abs_sum += std::fabs(x.contiguous().data_ptr<float>()[i]);
    const double diff = std::fabs(double(a.data_ptr<float>()[i]) - b.data_ptr<float>()[i]);
    if (!(diff <= orders * u * abs_sum)) {
      ADD_FAILURE() << what << "[" << i << "]: " << a.data_ptr<float>()[i] << " vs "
                    << b.data_ptr<float>()[i]
                    << ", beyond 2(n-1)u*sum|x| = " << orders * u * abs_sum;
      ++reported;
    }
  }
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
