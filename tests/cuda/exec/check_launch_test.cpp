// tests/cuda/exec/check_launch_test.cpp — check_launch() refuses launches the device cannot run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "cuda/launch.h"

namespace {

using glass::cuda::check_launch;
using glass::cuda::DeviceProperties;
using glass::cuda::Dim3;

DeviceProperties h100_like() {
  DeviceProperties p;
  p.name = "test GPU";
  return p;  // 1024 threads, block (1024, 1024, 64), grid (2^31-1, 65535, 65535), 48 KiB
}

// The error check_launch throws, or "" if it accepts the launch.
std::string error_of(Dim3 grid, Dim3 block, size_t shmem) {
  try {
    check_launch(h100_like(), "my_kernel", grid, block, shmem);
  } catch (const glass::Error& e) {
    return e.what();
  }
  return "";
}

void expect_error(Dim3 grid, Dim3 block, size_t shmem, const std::vector<std::string>& parts) {
  const std::string msg = error_of(grid, block, shmem);
  ASSERT_FALSE(msg.empty()) << "launch accepted";
  EXPECT_NE(msg.find("launch of kernel 'my_kernel'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("on test GPU"), std::string::npos) << msg;
  for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
}

TEST(CheckLaunch, AcceptsLaunchesAtTheLimits) {
  EXPECT_EQ(error_of(Dim3(1), Dim3(1), 0), "");
  EXPECT_EQ(error_of(Dim3(2147483647u, 65535, 65535), Dim3(1024), 48 * 1024), "");
  EXPECT_EQ(error_of(Dim3(4), Dim3(16, 16, 4), 0), "");
  EXPECT_EQ(error_of(Dim3(4), Dim3(1, 1, 64), 0), "");
}

TEST(CheckLaunch, ZeroSizedGridOrBlock) {
  expect_error(Dim3(0), Dim3(128), 0, {"grid (0, 1, 1)", "at least 1"});
  expect_error(Dim3(8), Dim3(128, 0), 0, {"block (128, 0, 1)", "at least 1"});
}

TEST(CheckLaunch, TooManyThreadsPerBlock) {
  expect_error(Dim3(1), Dim3(32, 32, 2), 0,
               {"2048 threads", "limit of 1024 per block", "max_threads_per_block"});
}

TEST(CheckLaunch, BlockDimensionOverTheLimit) {
  expect_error(Dim3(1), Dim3(2048), 0, {"block.x = 2048", "limit of 1024"});
  expect_error(Dim3(1), Dim3(1, 1, 65), 0, {"block.z = 65", "limit of 64", "(1024, 1024, 64)"});
}

TEST(CheckLaunch, GridDimensionOverTheLimit) {
  expect_error(Dim3(1, 70000), Dim3(32), 0, {"grid.y = 70000", "limit of 65535", "grid.x"});
  expect_error(Dim3(1, 1, 65536), Dim3(32), 0, {"grid.z = 65536"});
}

TEST(CheckLaunch, TooMuchDynamicSharedMemory) {
  expect_error(
      Dim3(1), Dim3(256), 48 * 1024 + 1,
      {"49153 bytes of dynamic shared memory", "49152 bytes per block", "shared_mem_per_block"});
}

}  // namespace
