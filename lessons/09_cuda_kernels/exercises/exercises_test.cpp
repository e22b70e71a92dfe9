// lessons/09_cuda_kernels/exercises/exercises_test.cpp — grades lesson 09's exercises on the
// simulated GPU with checking on (bounds, shared-memory races, divergent barriers). Each
// test runs the launcher on tensors made beforehand, then reads three things: the values
// (against the CPU backend, in float64 where it sums), the timeline (exactly one launch, of
// the exercise's kernel: a library op would show its own kernels) and the counters (warp
// syncs for the shuffle reduction; shared loads, barriers and a fraction of the naive
// kernel's global loads for the tiled matmul). Built against solution.cu or student.cu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <glass/glass.h>

#include "cuda/sim/kernel_stats.h"
#include "cuda/sim/sim_runtime.h"
#include "cuda/sim/timeline.h"
#include "exercises.h"

namespace glass::lesson09 {
namespace {

namespace sim = cuda::sim;
sim::SimRuntime& simulator() { return sim::simulator(); }

class Lesson09 : public ::testing::Test {
 protected:
  void SetUp() override {
    cuda::use_simulator();
    was_checking_ = simulator().race_check();
    simulator().set_race_check(true);
  }
  void TearDown() override {
    try {
      cuda::synchronize();
    } catch (const Error&) {
      simulator().reset_sticky_error(0);
    }
    simulator().set_race_check(was_checking_);
  }

  // Runs the student's launcher and waits for the device, counting what ran. Returns the
  // error it (or its kernel) raised, or "".
  std::string run(const std::function<void()>& launcher) {
    cuda::synchronize();
    simulator().clear_timeline();
    sim::ScopedKernelStats counting;
    std::string error;
    try {
      launcher();
      cuda::synchronize();
    } catch (const Error& e) {
      error = e.what();
      simulator().reset_sticky_error(0);
    }
    stats_ = counting.total();
    kernels_.clear();
    for (const sim::TimelineRecord& r : simulator().timeline())
      if (r.kind == sim::OpKind::Kernel) kernels_.push_back(r.name);
    return error;
  }

  // Empty when exactly one kernel ran and it was `kernel` (GLASS_LAUNCH names a launch
  // by the kernel's spelling, qualified or not).
  std::string launches_other_than(const std::string& kernel) const {
    const bool one = kernels_.size() == 1 && kernels_[0].ends_with(kernel);
    if (one) return "";
    std::string names;
    for (const std::string& k : kernels_) names += " " + k;
    return "expected exactly one launch, of " + kernel + " (through GLASS_LAUNCH); the " +
           "timeline shows:" + (names.empty() ? std::string(" nothing") : names) +
           ". Library ops (sum, matmul, zeros, ...) launch kernels of their own.";
  }

  sim::KernelStats stats_;
  std::vector<std::string> kernels_;

 private:
  bool was_checking_ = false;
};

TensorOptions on_gpu() { return TensorOptions().device(kCUDA); }

// ---- exercise 1 ------------------------------------------------------------------------

// sums[b] of x (on the CPU, in float64).
std::vector<double> chunk_sums(const Tensor& x) {
  const Tensor c = x.cpu().to(kDouble).contiguous();
  std::vector<double> sums((c.size(0) + kBlock - 1) / kBlock, 0.0);
  for (int64_t i = 0; i < c.size(0); ++i) sums[i / kBlock] += c.data_ptr<double>()[i];
  return sums;
}

TEST_F(Lesson09, Exercise1SumsEveryChunkIncludingTheLastPartialOne) {
  manual_seed(1);
  for (const int64_t n : {int64_t{256}, int64_t{1000}, int64_t{77}, int64_t{4101}}) {
    const Tensor x = randn({n}).to(kCUDA);
    const Tensor sums = empty({(n + kBlock - 1) / kBlock}, on_gpu());
    const std::string error = run([&] { block_sums(x, sums); });
    ASSERT_EQ(error, "") << "n = " << n;
    EXPECT_EQ(launches_other_than("block_sum_kernel"), "") << "n = " << n;
    const std::vector<double> want = chunk_sums(x);
    const Tensor got = sums.cpu().to(kDouble).contiguous();
    for (size_t b = 0; b < want.size(); ++b)
      EXPECT_NEAR(got.data_ptr<double>()[b], want[b], 1e-4)
          << "sums[" << b << "] with n = " << n
          << (b + 1 == want.size() && n % kBlock ? " (the last, partial chunk: its threads "
                                                   "past the end must add 0)"
                                                 : "");
  }
}

TEST_F(Lesson09, Exercise1ReadsAStridedTensorThroughItsAccessor) {
  manual_seed(2);
  const Tensor base = randn({1200}).to(kCUDA);
  const Tensor x = base.slice(0, 0, 1200, 2);  // 600 elements, stride 2
  const Tensor sums = empty({3}, on_gpu());
  ASSERT_EQ(run([&] { block_sums(x, sums); }), "");
  EXPECT_EQ(launches_other_than("block_sum_kernel"), "");
  const std::vector<double> want = chunk_sums(x);
  for (size_t b = 0; b < want.size(); ++b)
    EXPECT_NEAR(sums.cpu().to(kDouble).select(0, b).item<double>(), want[b], 1e-4)
        << "sums[" << b << "] of a strided x: index it as x[i], not through a data pointer";
}

TEST_F(Lesson09, Exercise1FinishesWithWarpShuffles) {
  const Tensor x = ones({512}, on_gpu());
  const Tensor sums = empty({2}, on_gpu());
  ASSERT_EQ(run([&] { block_sums(x, sums); }), "");
  EXPECT_EQ(launches_other_than("block_sum_kernel"), "");
  EXPECT_GT(stats_.warp_syncs, 0u) << "no warp collective ran: finish with __shfl_down_sync";
  EXPECT_GT(stats_.shared_stores, 0u) << "stage the chunk in shared memory (GLASS_SHARED)";
}

// ---- exercise 2 ------------------------------------------------------------------------

// t on cuda:0, as the top-left corner of a tensor kTile larger each way, filled with NaN.
Tensor padded_with_nan(const Tensor& t) {
  Tensor big = full({t.size(0) + kTile, t.size(1) + kTile}, NAN);
  big.slice(0, 0, t.size(0)).slice(1, 0, t.size(1)).copy_(t);
  return big.to(kCUDA).slice(0, 0, t.size(0)).slice(1, 0, t.size(1));
}

TEST_F(Lesson09, Exercise2MatchesTheCpuOnAnySize) {
  manual_seed(3);
  struct Size {
    int64_t m, k, n;
  };
  for (const Size s : {Size{32, 48, 16}, Size{37, 29, 53}, Size{1, 1, 1}, Size{17, 16, 33}}) {
    const Tensor a = randn({s.m, s.k}), b = randn({s.k, s.n});
    const Tensor c = empty({s.m, s.n}, on_gpu());
    // a and b sit inside larger tensors padded with NaN, right and below: a kernel that
    // reads past a row or a column (a missing guard) turns the result into NaN.
    const Tensor a_gpu = padded_with_nan(a), b_gpu = padded_with_nan(b);
    ASSERT_EQ(run([&] { tiled_matmul(a_gpu, b_gpu, c); }), "")
        << s.m << " x " << s.k << " times " << s.k << " x " << s.n;
    EXPECT_EQ(launches_other_than("tiled_matmul_kernel"), "");
    EXPECT_TRUE(allclose(c.cpu(), matmul(a, b), 1e-4, 1e-4))
        << s.m << " x " << s.k << " times " << s.k << " x " << s.n
        << ": sizes that are not multiples of kTile need guarded loads (stage 0 outside) and a "
           "guarded store";
  }
}

TEST_F(Lesson09, Exercise2TakesTransposedOperands) {
  manual_seed(4);
  const Tensor a = randn({24, 40}), b = randn({20, 24});
  const Tensor a_t = a.to(kCUDA).t(), b_t = b.to(kCUDA).t();  // 40 x 24 and 24 x 20, strided
  const Tensor c = empty({40, 20}, on_gpu());
  ASSERT_EQ(run([&] { tiled_matmul(a_t, b_t, c); }), "");
  EXPECT_EQ(launches_other_than("tiled_matmul_kernel"), "");
  EXPECT_TRUE(allclose(c.cpu(), matmul(a.t(), b.t()), 1e-4, 1e-4));
}

TEST_F(Lesson09, Exercise2ReusesTilesFromSharedMemory) {
  const int64_t m = 64;
  const Tensor a = ones({m, m}, on_gpu()), b = ones({m, m}, on_gpu());
  const Tensor c = empty({m, m}, on_gpu());
  ASSERT_EQ(run([&] { tiled_matmul(a, b, c); }), "");
  EXPECT_EQ(launches_other_than("tiled_matmul_kernel"), "");
  EXPECT_GT(stats_.shared_loads, 0u) << "the products must read the tiles in shared memory";
  EXPECT_GT(stats_.barriers, 0u)
      << "no __syncthreads(): nothing orders the tiles' writes and reads";
  // The naive kernel reads a row of a and a column of b for every element of c.
  const uint64_t naive = static_cast<uint64_t>(m * m * m * 2) * sizeof(float);
  EXPECT_LT(stats_.global_load_bytes, naive / 4)
      << "the kernel loaded " << stats_.global_load_bytes << " bytes from global memory; the "
      << "naive kernel loads " << naive << ". Each element staged in a tile should serve kTile "
      << "products.";
}

// ---- exercise 3 ------------------------------------------------------------------------

std::vector<double> blurred(const Tensor& x) {
  const Tensor c = x.cpu().to(kDouble).contiguous();
  const double* v = c.data_ptr<double>();
  const int64_t n = c.size(0);
  std::vector<double> y(n);
  for (int64_t i = 0; i < n; ++i)
    y[i] = (i > 0 ? v[i - 1] : 0.0) + v[i] + (i + 1 < n ? v[i + 1] : 0.0);
  return y;
}

TEST_F(Lesson09, Exercise3IsRaceFreeAndRight) {
  manual_seed(5);
  // 1000: kBlurBlocks blocks sweep the input twice, the last tile partial; 5: one block,
  // most of its threads past the end.
  for (const int64_t n : {int64_t{1000}, int64_t{256}, int64_t{5}}) {
    const Tensor x = randn({n}).to(kCUDA);
    const Tensor y = empty({n}, on_gpu());
    const std::string error = run([&] { blur(x, y); });
    ASSERT_EQ(error, "") << "n = " << n << ": the simulator stopped your kernel. A shared-memory "
                         << "race needs a __syncthreads() between the two accesses it names; a "
                         << "barrier that only some threads reach (inside if (i < n)) is an "
                         << "error of its own.\n"
                         << error;
    EXPECT_EQ(launches_other_than("blur_kernel"), "");
    const std::vector<double> want = blurred(x);
    const Tensor got = y.cpu().to(kDouble).contiguous();
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(got.data_ptr<double>()[i], want[i], 1e-5) << "y[" << i << "], n = " << n;
    EXPECT_GT(stats_.barriers, 0u);
  }
}

}  // namespace
}  // namespace glass::lesson09
