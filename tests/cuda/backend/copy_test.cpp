// Tests for host <-> device copies on the simulated GPU: which calls return at once and
// which wait (Note [When a copy makes the host wait] in cuda/copy.cpp), pinned memory,
// and values through every path (dtype change, strides, broadcast sources).
#include <gtest/gtest.h>

#include <glass/glass.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "cuda/host_allocator.h"
#include "cuda/sim/sim_runtime.h"

namespace {

using glass::Tensor;
namespace cuda = glass::cuda;

class CudaCopies : public ::testing::Test {
 protected:
  void SetUp() override {
    cuda::use_simulator();
    stream_ = cuda::getStreamFromPool();
    guard_.emplace(stream_);
  }
  void TearDown() override { guard_.reset(); }
  cuda::sim::SimRuntime& sim() { return cuda::sim::simulator(); }

  cuda::CUDAStream stream_{0, 0, nullptr};  // set in SetUp, once the simulator is chosen
  std::optional<cuda::CUDAStreamGuard> guard_;
};

// Runs f on another thread and reports whether it finished within a short wait.
bool finishes_while_held(const std::function<void()>& f, std::thread& t) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  t = std::thread([f, done] {
    f();
    *done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return done->load();
}

TEST_F(CudaCopies, PinnedMemory) {
  Tensor p = glass::arange(8).to(glass::kFloat).pin_memory();
  EXPECT_TRUE(p.is_pinned());
  EXPECT_TRUE(p.is_cpu());
  EXPECT_FALSE(glass::arange(8).is_pinned());
  EXPECT_TRUE(glass::equal(p, glass::arange(8).to(glass::kFloat)));
  Tensor e = glass::empty({4}, glass::TensorOptions().pinned_memory(true));
  EXPECT_TRUE(e.is_pinned());
}

TEST_F(CudaCopies, NonBlockingFromPinnedMemoryReturnsAtOnce) {
  Tensor src = glass::arange(1024).to(glass::kFloat).pin_memory();
  Tensor dst = glass::empty({1024}, glass::kCUDA);
  sim().hold(stream_);
  dst.copy_(src, /*non_blocking=*/true);  // returns with the stream held: only queued
  EXPECT_FALSE(stream_.query());
  sim().release(stream_);
  stream_.synchronize();
  EXPECT_TRUE(glass::equal(dst.cpu(), glass::arange(1024).to(glass::kFloat)));
}

TEST_F(CudaCopies, BlockingCopyToTheDeviceWaits) {
  Tensor src = glass::arange(16).to(glass::kFloat);
  Tensor dst = glass::empty({16}, glass::kCUDA);
  sim().hold(stream_);
  std::thread t;
  cuda::CUDAStream s = stream_;
  EXPECT_FALSE(finishes_while_held(
      [&] {
        cuda::CUDAStreamGuard g(s);
        dst.copy_(src);
      },
      t));
  sim().release(stream_);
  t.join();
  EXPECT_TRUE(stream_.query());
}

TEST_F(CudaCopies, CopyToPageableHostMemoryAlwaysWaits) {
  Tensor src = glass::ones({32}).cuda();
  sim().hold(stream_);
  Tensor host = glass::empty({32});
  std::thread t;
  cuda::CUDAStream s = stream_;
  EXPECT_FALSE(finishes_while_held(
      [&] {
        cuda::CUDAStreamGuard g(s);
        host.copy_(src, /*non_blocking=*/true);  // pageable: non_blocking cannot apply
      },
      t));
  sim().release(stream_);
  t.join();
  EXPECT_TRUE(glass::equal(host, glass::ones({32})));
}

TEST_F(CudaCopies, NonBlockingToPinnedHostMemoryIsQueued) {
  Tensor src = (glass::ones({32}).cuda() * 7);
  Tensor host = glass::empty({32}, glass::TensorOptions().pinned_memory(true));
  sim().hold(stream_);
  host.copy_(src, /*non_blocking=*/true);
  EXPECT_FALSE(stream_.query());
  sim().release(stream_);
  stream_.synchronize();
  EXPECT_TRUE(glass::equal(host, glass::full({32}, 7.0)));
}

TEST_F(CudaCopies, PinnedBlockIsNotReusedWhileACopyReadsIt) {
  Tensor dst = glass::empty({256}, glass::kCUDA);
  void* first = nullptr;
  sim().hold(stream_);
  {
    Tensor src = glass::full({256}, 3.0, glass::TensorOptions().pinned_memory(true));
    first = src.data_ptr();
    dst.copy_(src, true);
  }  // src freed while its copy is still queued
  Tensor again = glass::empty({256}, glass::TensorOptions().pinned_memory(true));
  EXPECT_NE(again.data_ptr(), first);  // the pending block is not handed out
  sim().release(stream_);
  stream_.synchronize();
  EXPECT_TRUE(glass::equal(dst.cpu(), glass::full({256}, 3.0)));
}

TEST_F(CudaCopies, ConversionsStridesAndBroadcastSources) {
  Tensor x = glass::arange(12).view({3, 4});  // Long
  // Long host -> Float device, transposed destination.
  Tensor d = glass::empty({4, 3}, glass::TensorOptions().device(glass::kCUDA)).t();
  d.copy_(x);
  EXPECT_TRUE(glass::equal(d.cpu(), x.to(glass::kFloat)));
  // A broadcast host source (stride 0).
  Tensor row = glass::tensor({1.0f, 2.0f, 3.0f, 4.0f});
  Tensor b = glass::empty({3, 4}, glass::kCUDA);
  b.copy_(row);
  EXPECT_TRUE(glass::equal(b.cpu(), row.expand({3, 4}).contiguous()));
  // Device -> strided host destination of another dtype.
  Tensor host = glass::zeros({4, 3}, glass::kDouble).t();
  host.copy_(d);
  EXPECT_TRUE(glass::equal(host, x.to(glass::kDouble)));
}

TEST_F(CudaCopies, ToWithCopyAndNonBlockingFlags) {
  Tensor x = glass::arange(4).to(glass::kFloat).cuda();
  EXPECT_TRUE(x.to(glass::kCUDA).is_same(x));                               // no-op
  EXPECT_FALSE(x.to(glass::kCUDA, glass::kFloat, false, true).is_same(x));  // copy=true
  Tensor p = glass::arange(4).to(glass::kFloat).pin_memory();
  Tensor y = p.to(glass::kCUDA, glass::kFloat, /*non_blocking=*/true);
  stream_.synchronize();
  EXPECT_TRUE(glass::equal(y.cpu(), glass::arange(4).to(glass::kFloat)));
}

}  // namespace
