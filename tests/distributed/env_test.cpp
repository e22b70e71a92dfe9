// tests/distributed/env_test.cpp — read_env() and parse_tcp_init_method(): the values
// glassrun sets come back, and each missing or bad variable is one line naming it.
#include "distributed/env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "core/error.h"
#include "distributed/test_util.h"

namespace glass::distributed {
namespace {

using testing::error_of;

// A clean rendezvous environment per test (test_util.h), and a valid one to break.
class EnvTest : public testing::RendezvousEnv {
 protected:
  void set_valid() {
    set("MASTER_ADDR", "127.0.0.1");
    set("MASTER_PORT", "29500");
    set("RANK", "2");
    set("WORLD_SIZE", "4");
  }
  // The message read_env() throws.
  static std::string error_of_read_env() {
    const std::string message = testing::error_of([] { read_env(); });
    return message.empty() ? "(no error)" : message;
  }
};

TEST_F(EnvTest, ReadsTorchrunVariablesAndDefaultsLocalOnesToGlobal) {
  set_valid();
  const EnvRendezvous env = read_env();
  EXPECT_EQ(env.master_addr, "127.0.0.1");
  EXPECT_EQ(env.master_port, 29500);
  EXPECT_EQ(env.rank, 2);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_rank, 2);
  EXPECT_EQ(env.local_world_size, 4);
  EXPECT_FALSE(env.agent_store);
}

TEST_F(EnvTest, ReadsLocalRankAndAgentStore) {
  set_valid();
  set("LOCAL_RANK", "0");
  set("LOCAL_WORLD_SIZE", "2");
  set("GLASS_USE_AGENT_STORE", "1");
  const EnvRendezvous env = read_env();
  EXPECT_EQ(env.local_rank, 0);
  EXPECT_EQ(env.local_world_size, 2);
  EXPECT_TRUE(env.agent_store);
}

TEST_F(EnvTest, ArgumentsOverrideRankAndWorldSize) {
  set("MASTER_ADDR", "localhost");
  set("MASTER_PORT", "1234");
  const EnvRendezvous env = read_env(/*rank=*/1, /*world_size=*/3);
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.world_size, 3);
}

TEST_F(EnvTest, MissingRankIsOneLineSayingWhoSetsIt) {
  set_valid();
  ::unsetenv("RANK");
  EXPECT_EQ(error_of_read_env(),
            "init_process_group(env://): RANK is not set (glassrun and torchrun set it; or pass "
            "rank=)");
}

TEST_F(EnvTest, MissingMasterAddrAndPortAreNamed) {
  set_valid();
  ::unsetenv("MASTER_ADDR");
  EXPECT_NE(error_of_read_env().find("MASTER_ADDR is not set"), std::string::npos);
  set("MASTER_ADDR", "127.0.0.1");
  ::unsetenv("MASTER_PORT");
  EXPECT_NE(error_of_read_env().find("MASTER_PORT is not set"), std::string::npos);
}

TEST_F(EnvTest, RankNotLessThanWorldSize) {
  set_valid();
  set("RANK", "7");
  EXPECT_EQ(error_of_read_env(),
            "init_process_group(env://): RANK=7 is not less than WORLD_SIZE=4");
}

TEST_F(EnvTest, BadPortsAreNotPortNumbers) {
  set_valid();
  for (const std::string bad : {"abc", "0", "65536", "-1", "12ab", ""}) {
    set("MASTER_PORT", bad);
    EXPECT_EQ(error_of_read_env(), "init_process_group(env://): MASTER_PORT='" + bad +
                                       "' is not a port number (1-65535)");
  }
}

TEST_F(EnvTest, BadIntegersAndLocalRanks) {
  set_valid();
  set("WORLD_SIZE", "four");
  EXPECT_EQ(error_of_read_env(),
            "init_process_group(env://): WORLD_SIZE='four' is not a non-negative integer");
  set("WORLD_SIZE", "0");
  EXPECT_EQ(error_of_read_env(), "init_process_group(env://): WORLD_SIZE=0 must be at least 1");
  set("WORLD_SIZE", "4");
  set("LOCAL_RANK", "3");
  set("LOCAL_WORLD_SIZE", "2");
  EXPECT_EQ(error_of_read_env(),
            "init_process_group(env://): LOCAL_RANK=3 is not less than LOCAL_WORLD_SIZE=2");
}

TEST(ParseTcpInitMethod, SplitsHostAndPort) {
  std::string host;
  uint16_t port = 0;
  parse_tcp_init_method("tcp://10.0.0.5:23456", host, port);
  EXPECT_EQ(host, "10.0.0.5");
  EXPECT_EQ(port, 23456);
  parse_tcp_init_method("tcp://[::1]:80", host, port);
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 80);
}

TEST(ParseTcpInitMethod, BadUrlsNameTheString) {
  std::string host;
  uint16_t port = 0;
  for (const std::string bad : {"http://a:1", "tcp://nohost", "tcp://:12", "tcp://a:99999"}) {
    try {
      parse_tcp_init_method(bad, host, port);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace glass::distributed
