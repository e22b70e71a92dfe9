// tests/cuda/exec/errors_test.cpp — broken barriers and collectives are errors, never hangs.
//
// Each error must name the kernel, the block and both call sites; afterwards the runner
// must be usable (the failed block's fibers unwound, their stacks back in the pool).
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "cuda/sim/block_runner.h"
#include "exec_kernels.h"
#include "exec_test_util.h"

namespace exec_test {
namespace {

using glass::cuda::sim::block_runner_stats;
using glass::cuda::sim::reset_block_runner_stats;

// Runs block `block_idx` of a 1-D grid and returns the glass::Error it must throw. (A
// block index spells out its zeros: Dim3(b) would be (b, 1, 1), as CUDA's dim3.)
std::string error_of(const char* kernel, unsigned block_idx, unsigned threads,
                     const std::function<void()>& body) {
  try {
    glass::cuda::sim::run_block({kernel, Dim3(4), Dim3(threads), Dim3(block_idx, 0, 0), 0}, body);
  } catch (const glass::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << kernel << " ran without an error";
  return "";
}

std::string site(int line) { return "error_kernels.cu:" + std::to_string(line); }

// Runs a 256-thread block with barriers: 255 fibers.
float run_block_sum() {
  std::vector<float> in(256);
  std::iota(in.begin(), in.end(), 0.0f);
  std::vector<float> out(1);
  run_grid("block_sum_static", Dim3(1), Dim3(256), 0,
           [&] { block_sum_static(cdev(in), dev(out), 256); });
  return out[0];
}

// Each test starts with 255 stacks in this thread's pool, so a stack that a failed block
// does not give back shows up as a new allocation in expect_runner_still_works().
class Errors : public ::testing::Test {
 protected:
  void SetUp() override { run_block_sum(); }
};

// After an error, a kernel with barriers still runs correctly, on pooled stacks.
void expect_runner_still_works() {
  reset_block_runner_stats();
  EXPECT_EQ(run_block_sum(), 255.0f * 256 / 2);
  EXPECT_EQ(block_runner_stats().stacks_allocated, 0u) << "the failed block's stacks leaked";
}

TEST_F(Errors, DivergentBarriersNameKernelBlockAndBothSites) {
  std::vector<int> out(32);
  // Thread 16 (a fiber) reaches the second barrier while threads 0-15 wait at the first.
  const std::string msg =
      error_of("divergent_barriers", 2, 32, [&] { divergent_barriers(dev(out)); });
  EXPECT_NE(msg.find("kernel 'divergent_barriers', block (2, 0, 0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("thread (16, 0, 0) reached __syncthreads() at"), std::string::npos) << msg;
  EXPECT_NE(msg.find(site(kDivergentLine + 2)), std::string::npos) << msg;
  EXPECT_NE(msg.find("thread (0, 0, 0) waits at __syncthreads() at"), std::string::npos) << msg;
  EXPECT_NE(msg.find(site(kDivergentLine)), std::string::npos) << msg;
  expect_runner_still_works();
}

TEST_F(Errors, DivergenceSeenByTheThreadOnTheWorkersStack) {
  // After a common barrier the last thread goes first and waits at one barrier; thread 0,
  // which runs on the worker's own stack, then reaches the other.
  std::vector<int> out(32);
  const std::string msg =
      error_of("divergent_after_barrier", 1, 32, [&] { divergent_after_barrier(dev(out)); });
  EXPECT_NE(msg.find("kernel 'divergent_after_barrier', block (1, 0, 0)"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("thread (0, 0, 0) reached __syncthreads() at"), std::string::npos) << msg;
  EXPECT_NE(msg.find(site(kDivergentAfterLine + 2)), std::string::npos) << msg;
  EXPECT_NE(msg.find("thread (31, 0, 0) waits at __syncthreads()"), std::string::npos) << msg;
  EXPECT_NE(msg.find(site(kDivergentAfterLine)), std::string::npos) << msg;
  expect_runner_still_works();
}

TEST_F(Errors, WarpCollectiveThatCanNeverCompleteIsADeadlockError) {
  std::vector<int> out(32);
  const std::string msg = error_of("warp_vs_barrier", 0, 32, [&] { warp_vs_barrier(dev(out)); });
  EXPECT_NE(msg.find("kernel 'warp_vs_barrier', block (0, 0, 0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("waits at __syncthreads() at "), std::string::npos) << msg;
  EXPECT_NE(msg.find(site(kWarpDeadlockLine + 2)), std::string::npos) << msg;
  EXPECT_NE(msg.find("waits at __shfl_xor_sync() at"), std::string::npos) << msg;
  EXPECT_NE(msg.find(site(kWarpDeadlockLine)), std::string::npos) << msg;
  expect_runner_still_works();
}

TEST_F(Errors, DeadlockFoundWhenTheLastRunnableThreadReturns) {
  std::vector<int> out(32);
  const std::string msg =
      error_of("warp_deadlock_at_exit", 0, 32, [&] { warp_deadlock_at_exit(dev(out)); });
  EXPECT_NE(msg.find("thread (16, 0, 0) waits at __syncthreads() at "), std::string::npos) << msg;
  EXPECT_NE(msg.find(site(kExitDeadlockLine + 2)), std::string::npos) << msg;
  EXPECT_NE(msg.find("thread (0, 0, 0) waits at __shfl_xor_sync() at"), std::string::npos) << msg;
  EXPECT_NE(msg.find(site(kExitDeadlockLine)), std::string::npos) << msg;
  expect_runner_still_works();
}

TEST_F(Errors, MaskWithoutTheCallersLane) {
  std::vector<int> out(32);
  const std::string msg =
      error_of("shuffle_without_own_lane", 0, 32, [&] { shuffle_without_own_lane(dev(out)); });
  EXPECT_NE(msg.find("thread (0, 0, 0) (lane 0) calls __shfl_sync()"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mask 0x00000020, which does not name its own lane"), std::string::npos)
      << msg;
}

TEST_F(Errors, KernelExceptionInAFiberOrOnTheWorkersStack) {
  for (int who : {7, 0}) {
    std::vector<int> out(32);
    const std::string msg =
        error_of("null_read_after_barrier", 3, 32, [&] { null_read_after_barrier(dev(out), who); });
    EXPECT_NE(msg.find("kernel 'null_read_after_barrier', block (3, 0, 0): thread (" +
                       std::to_string(who) + ", 0, 0) dereferenced a null gptr"),
              std::string::npos)
        << msg;
    expect_runner_still_works();
  }
}

TEST_F(Errors, EveryThreadsStackIsUnwound) {
  // 31 threads wait at one barrier (thread 0 on the worker's stack, 30 as fibers) when
  // the last reaches another: all 32 Trackers must be destroyed.
  std::vector<int> out(32);
  g_trackers_destroyed = 0;
  const std::string msg =
      error_of("divergent_with_locals", 0, 32, [&] { divergent_with_locals(dev(out)); });
  EXPECT_NE(msg.find("thread (31, 0, 0) reached __syncthreads()"), std::string::npos) << msg;
  EXPECT_EQ(g_trackers_destroyed.load(), 32);
  expect_runner_still_works();
}

TEST_F(Errors, BarrierOutsideAKernel) {
  try {
    __syncthreads();
    FAIL() << "no error";
  } catch (const glass::Error& e) {
    EXPECT_NE(std::string(e.what()).find("__syncthreads() was called outside a kernel"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace exec_test
