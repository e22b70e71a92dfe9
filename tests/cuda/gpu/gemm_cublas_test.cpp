// tests/cuda/gpu/gemm_cublas_test.cpp — the gemm ladder (cuda/kernels/gemm.h) against cuBLAS
// on a real GPU.
//
// GPU-only, in cuda_gpu_tests, whose main() (gpu_runtime_test.cpp) exits 77 without a GPU
// and otherwise makes the GPU serve kCUDA. The reference is cublasSgemm in pedantic fp32
// on the same device buffers, loaded at run time (cublas_loader.h says why): where the
// machine has no cuBLAS the tests skip and say so. Inputs are N(0, 1), so every sum has
// size about sqrt(K), and two correct fp32 gemms differ by a few ulps of that.
#include <gtest/gtest.h>

#include <glass/glass.h>

#include <cmath>
#include <string>
#include <tuple>

#include "cuda/gpu/cublas_loader.h"
#include "cuda/kernels/gemm.h"

namespace glass::cuda {
namespace {

using testing::CublasGemm;

class GpuGemmVsCublas : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    blas_ = testing::load_cublas(&why_not);
    if (blas_ == nullptr) GTEST_SKIP() << "no cuBLAS to compare with: " << why_not;
    manual_seed(7);
  }

  // The max |ours - cuBLAS| over C = a @ b, for a: M×K, b: K×N (any strides for ours;
  // cuBLAS gets contiguous copies).
  double max_diff_vs_cublas(const Tensor& a, const Tensor& b) {
    const Tensor ours = mm(a, b);
    const Tensor ac = a.contiguous(), bc = b.contiguous();
    const int M = int(a.size(0)), K = int(a.size(1)), N = int(b.size(1));
    Tensor ref = empty({M, N}, TensorOptions(kFloat).device(kCUDA));
    CublasGemm gemm(*blas_,
                    static_cast<cudaStream_t>(static_cast<StreamHandle>(getCurrentCUDAStream())));
    const std::string error = gemm.sgemm_row_major(
        M, N, K, ac.data_ptr<float>(), K, bc.data_ptr<float>(), N, ref.data_ptr<float>(), N);
    EXPECT_EQ(error, "");
    return (ours.cpu() - ref.cpu()).abs().max().item<double>();
  }

  const testing::Cublas* blas_ = nullptr;
};

// fp32 sums of K products of N(0, 1) values: a few ulps of sqrt(K), K ulps at worst.
double tolerance(int64_t K) { return 1e-6 * double(K) + 1e-5; }

TEST_F(GpuGemmVsCublas, BestRungAtSeveralSizes) {
  GemmVersionGuard best(GemmVersion::kVectorized);
  for (auto [M, K, N] : {std::tuple<int64_t, int64_t, int64_t>{128, 128, 128},
                         {1000, 777, 513},
                         {2048, 2048, 2048},
                         {4096, 4096, 4096}}) {
    const Tensor a = randn({M, K}).cuda(), b = randn({K, N}).cuda();
    EXPECT_LE(max_diff_vs_cublas(a, b), tolerance(K)) << M << "x" << K << "x" << N;
  }
}

TEST_F(GpuGemmVsCublas, EveryRungOnAnOddShape) {
  const Tensor a = randn({1000, 777}).cuda(), b = randn({777, 513}).cuda();
  for (int v = 1; v <= 5; ++v) {
    GemmVersionGuard guard(static_cast<GemmVersion>(v));
    EXPECT_LE(max_diff_vs_cublas(a, b), tolerance(777)) << "v" << v;
  }
}

TEST_F(GpuGemmVsCublas, BestRungOnTransposedAndSlicedOperands) {
  GemmVersionGuard best(GemmVersion::kVectorized);
  const Tensor w = randn({512, 1024}).cuda();  // linear's weight: x @ w.t()
  const Tensor x = randn({300, 1024}).cuda();
  EXPECT_LE(max_diff_vs_cublas(x, w.t()), tolerance(1024)) << "b transposed";
  const Tensor wide = randn({300, 1030}).cuda();  // rows off a 16-byte boundary
  EXPECT_LE(max_diff_vs_cublas(wide.narrow(1, 3, 1024), w.t()), tolerance(1024)) << "a sliced";
}

}  // namespace
}  // namespace glass::cuda
