// Tests for the CUDA gemm ladder (cuda/kernels/gemm.h) and the kCUDA bmm entry built on it.
//
// Every rung runs on the same inputs as v1 (the oracle) and as the CPU backend's bmm, for
// shapes that are not multiples of any rung's tile, with transposed, sliced and expanded
// operands, a strided output, and alpha/beta combinations; then matmul, mm, bmm, addmm
// and linear go through the public API on kCUDA. Integer dtypes must match exactly; every
// rung sums in v1's order, so floating results match v1 up to fused multiply-adds.
#include <gtest/gtest.h>

#include <glass/glass.h>

#include "core/device_kernels.h"
#include "cuda/backend/backend_test_util.h"
#include "cuda/kernels/gemm.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using glass::Scalar;
using glass::ScalarType;
using glass::Tensor;
using glass::cuda::GemmVersion;
using glass::cuda::GemmVersionGuard;
using glass::cuda::testing::error_of;

constexpr GemmVersion kRungs[] = {GemmVersion::kNaive, GemmVersion::kCoalesced,
                                  GemmVersion::kSharedTiles, GemmVersion::kRegisterTiles,
                                  GemmVersion::kVectorized};

class CudaGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    glass::cuda::testing::use_simulator_unless_gpu();
    glass::manual_seed(1234);
  }
};

std::string rung_name(GemmVersion v) { return "v" + std::to_string(static_cast<int>(v)); }

// Values on the CPU: small integers for integer dtypes (so products cannot overflow),
// N(0, 1) for floating ones.
Tensor values(glass::IntArrayRef shape, ScalarType t) {
  if (glass::is_floating_type(t)) return glass::randn(shape, glass::TensorOptions(t));
  return glass::randint(-9, 10, shape, glass::TensorOptions(t));
}

// A copy of x on `device` with x's exact strides and storage offset: the bmm entry takes
// any strides, so the test must hand it the layouts it is testing, not contiguous copies.
Tensor same_layout_on(glass::DeviceType device, const Tensor& x) {
  int64_t extent = x.storage_offset() + 1;  // elements of storage the view reaches
  for (int64_t d = 0; d < x.dim(); ++d) extent += (x.size(d) - 1) * x.stride(d);
  Tensor base = glass::zeros({x.numel() == 0 ? 0 : extent}, glass::TensorOptions(x.dtype()));
  // An expanded dim (stride 0) holds one value: write it through a size-1 view.
  Tensor src = x;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (x.stride(d) == 0 && x.size(d) > 1) src = src.narrow(d, 0, 1);
  base.as_strided(src.sizes(), src.strides(), src.storage_offset()).copy_(src);
  return base.to(device).as_strided(x.sizes(), x.strides(), x.storage_offset());
}

// out = beta * out + alpha * a @ b through a backend's bmm entry, on copies of the inputs.
Tensor bmm_entry(glass::DeviceType device, const Tensor& a, const Tensor& b, const Tensor& out,
                 const Scalar& beta, const Scalar& alpha) {
  const Tensor da = same_layout_on(device, a), db = same_layout_on(device, b);
  const Tensor dout = same_layout_on(device, out);
  glass::kernels_for(glass::Device(device)).bmm(da, db, dout, beta, alpha);
  return dout.cpu();
}

// Tolerances against v1 (same order of products; FMA contraction may differ) and against
// the CPU (a different blocking, so a different order).
void expect_close(const Tensor& got, const Tensor& want, bool same_order, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  if (!glass::is_floating_type(got.dtype())) {
    EXPECT_TRUE(glass::equal(got, want)) << what;
    return;
  }
  const bool f32 = got.dtype() == glass::kFloat;
  const double rtol = f32 ? (same_order ? 1e-5 : 1e-4) : 1e-12;
  const double atol = f32 ? (same_order ? 1e-5 : 1e-4) : 1e-12;
  EXPECT_TRUE(glass::allclose(got, want, rtol, atol))
      << what << ": max |diff| = " << (got - want).abs().max().item<double>();
}

// Runs every rung on (a, b, out, beta, alpha) and checks it against v1 and the CPU.
void check_all_rungs(const Tensor& a, const Tensor& b, const Tensor& out, const Scalar& beta,
                     const Scalar& alpha, const std::string& what) {
  const Tensor cpu = bmm_entry(glass::kCPU, a, b, out, beta, alpha);
  Tensor v1;
  for (GemmVersion v : kRungs) {
    GemmVersionGuard guard(v);
    const Tensor got = bmm_entry(glass::kCUDA, a, b, out, beta, alpha);
    const std::string where = what + " " + rung_name(v) + " " + glass::to_string(a.dtype());
    if (v == GemmVersion::kNaive) v1 = got;
    expect_close(got, v1, /*same_order=*/true, where + " vs v1");
    expect_close(got, cpu, /*same_order=*/false, where + " vs cpu");
  }
}

struct Shape3 {
  int64_t batch, m, k, n;
};
// None is a multiple of every rung's tile (16, 64, 128 rows and columns; 8 or 16 of k).
constexpr Shape3 kShapes[] = {
    {1, 1, 1, 1}, {1, 17, 33, 9}, {1, 64, 64, 64}, {1, 65, 130, 31}, {3, 17, 33, 9},
};

TEST_F(CudaGemm, EveryRungMatchesV1AndTheCpuOnOddShapes) {
  for (ScalarType t : {glass::kFloat, glass::kDouble, glass::kInt, glass::kLong}) {
    for (const Shape3& s : kShapes) {
      const Tensor a = values({s.batch, s.m, s.k}, t), b = values({s.batch, s.k, s.n}, t);
      const Tensor out = glass::zeros({s.batch, s.m, s.n}, glass::TensorOptions(t));
      check_all_rungs(a, b, out, 0, 1,
                      std::to_string(s.batch) + "x" + std::to_string(s.m) + "x" +
                          std::to_string(s.k) + "x" + std::to_string(s.n));
    }
  }
}

TEST_F(CudaGemm, TransposedSlicedAndExpandedOperands) {
  for (ScalarType t : {glass::kFloat, glass::kDouble}) {
    const int64_t B = 2, M = 19, K = 36, N = 40;
    const Tensor out = glass::zeros({B, M, N}, glass::TensorOptions(t));
    // A transposed (column-major rows): rows are not contiguous, K % 4 == 0, so v5 copies it.
    const Tensor a_t = values({B, K, M}, t).transpose(1, 2);
    const Tensor b = values({B, K, N}, t);
    check_all_rungs(a_t, b, out, 0, 1, "a transposed");
    // B transposed: the x @ W.t() of linear.
    const Tensor b_t = values({B, N, K}, t).transpose(1, 2);
    check_all_rungs(values({B, M, K}, t), b_t, out, 0, 1, "b transposed");
    // Column slices: rows contiguous but starting off a 16-byte boundary (offset 1).
    const Tensor a_s = values({B, M, K + 3}, t).narrow(2, 1, K);
    const Tensor b_s = values({B, K, N + 5}, t).narrow(2, 3, N);
    check_all_rungs(a_s, b_s, out, 0, 1, "column slices");
    // Every other column: no unit stride anywhere; K odd, so no copy can align it either.
    const Tensor a_2 = values({B, M, 2 * 35}, t).slice(2, 0, std::nullopt, 2);
    check_all_rungs(a_2, values({B, 35, N}, t), out, 0, 1, "step-2 columns");
    // One B for every batch (batch stride 0), and a row-sliced A (batch 1 of 3).
    const Tensor b_e = values({1, K, N}, t).expand({B, K, N});
    const Tensor a_r = values({3 * B, M, K}, t).slice(0, 1, std::nullopt, 3);
    check_all_rungs(a_r, b_e, out, 0, 1, "expanded b, strided batch");
    // A transposed output (column-major C).
    const Tensor out_t = glass::zeros({B, N, M}, glass::TensorOptions(t)).transpose(1, 2);
    check_all_rungs(a_t, b_t, out_t, 0, 1, "transposed out");
  }
}

TEST_F(CudaGemm, AlphaAndBeta) {
  for (ScalarType t : {glass::kFloat, glass::kDouble, glass::kLong}) {
    const Tensor a = values({2, 21, 13}, t), b = values({2, 13, 70}, t);
    const Tensor c = values({2, 21, 70}, t);
    check_all_rungs(a, b, c, 1, 1, "beta 1 alpha 1");
    check_all_rungs(a, b, c, 2, -3, "beta 2 alpha -3");
    check_all_rungs(a, b, c, -1, 0, "beta -1 alpha 0");
    if (glass::is_floating_type(t)) check_all_rungs(a, b, c, 0.5, 0.25, "beta 0.5 alpha 0.25");
  }
}

TEST_F(CudaGemm, BetaZeroNeverReadsOut) {
  const Tensor a = values({1, 9, 5}, glass::kFloat), b = values({1, 5, 7}, glass::kFloat);
  const Tensor nan_out =
      glass::full({1, 9, 7}, std::numeric_limits<double>::quiet_NaN(), glass::kFloat);
  for (GemmVersion v : kRungs) {
    GemmVersionGuard guard(v);
    const Tensor got = bmm_entry(glass::kCUDA, a, b, nan_out, 0, 2);
    EXPECT_TRUE(glass::equal(got == got, glass::ones({1, 9, 7}, glass::kBool))) << rung_name(v);
    expect_close(got, glass::bmm(a, b) * 2, false, rung_name(v));
  }
}

TEST_F(CudaGemm, EmptyKGivesBetaTimesOut) {
  const Tensor a = glass::empty({2, 3, 0}), b = glass::empty({2, 0, 4});
  const Tensor c = values({2, 3, 4}, glass::kFloat);
  for (GemmVersion v : kRungs) {
    GemmVersionGuard guard(v);
    expect_close(bmm_entry(glass::kCUDA, a, b, c, 3, 1), c * 3, true, rung_name(v));
    expect_close(bmm_entry(glass::kCUDA, a, b, c, 0, 1), glass::zeros({2, 3, 4}), true,
                 rung_name(v));
  }
}

TEST_F(CudaGemm, PublicApiOnCuda) {
  for (GemmVersion v : {GemmVersion::kNaive, GemmVersion::kVectorized}) {
    GemmVersionGuard guard(v);
    const std::string r = rung_name(v);
    const Tensor x = values({5, 12}, glass::kFloat), w = values({7, 12}, glass::kFloat);
    const Tensor bias = values({7}, glass::kFloat), y = values({12, 3}, glass::kFloat);
    const Tensor xd = x.cuda(), wd = w.cuda(), biasd = bias.cuda(), yd = y.cuda();
    expect_close(glass::mm(xd, yd).cpu(), glass::mm(x, y), false, r + " mm");
    expect_close(glass::matmul(xd, yd).cpu(), glass::matmul(x, y), false, r + " matmul 2-D");
    expect_close(glass::matmul(xd, yd.select(1, 0)).cpu(), glass::matmul(x, y.select(1, 0)), false,
                 r + " matmul matrix-vector");
    expect_close(glass::matmul(xd.select(0, 1), yd.select(1, 2)).cpu(),
                 glass::matmul(x.select(0, 1), y.select(1, 2)), false, r + " matmul dot");
    const Tensor p = values({2, 3, 5, 4}, glass::kFloat), q = values({3, 4, 6}, glass::kFloat);
    expect_close(glass::matmul(p.cuda(), q.cuda()).cpu(), glass::matmul(p, q), false,
                 r + " matmul broadcast batch");
    const Tensor ba = values({4, 6, 5}, glass::kDouble), bb = values({4, 5, 3}, glass::kDouble);
    expect_close(glass::bmm(ba.cuda(), bb.cuda()).cpu(), glass::bmm(ba, bb), false, r + " bmm");
    const Tensor c = values({5, 3}, glass::kFloat);
    expect_close(glass::addmm(c.cuda(), xd, yd, 0.5, 2).cpu(), glass::addmm(c, x, y, 0.5, 2), false,
                 r + " addmm");
    namespace F = glass::nn::functional;
    expect_close(F::linear(xd, wd, biasd).cpu(), F::linear(x, w, bias), false, r + " linear");
    const Tensor li = values({4, 3, 5}, glass::kLong), lj = values({4, 5, 2}, glass::kLong);
    EXPECT_TRUE(glass::equal(glass::bmm(li.cuda(), lj.cuda()).cpu(), glass::bmm(li, lj))) << r;
  }
}

TEST_F(CudaGemm, ShapeAndDtypeErrorsAreCoresOwn) {
  const Tensor a = glass::zeros({2, 3}, glass::kCUDA), b = glass::zeros({4, 5}, glass::kCUDA);
  EXPECT_NE(error_of([&] {
              glass::mm(a, b);
            }).find("mm(): mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              glass::matmul(a, b);
            }).find("matmul(): shapes cannot be multiplied (2x3 and 4x5)"),
            std::string::npos);
  const Tensor p = glass::zeros({2, 3, 4}, glass::kCUDA), q = glass::zeros({3, 4, 5}, glass::kCUDA);
  EXPECT_NE(error_of([&] { glass::bmm(p, q); }).find("bmm(): batch sizes differ"),
            std::string::npos);
  const Tensor d = glass::zeros({3, 4}, glass::TensorOptions(glass::kDouble).device(glass::kCUDA));
  EXPECT_NE(error_of([&] { glass::mm(a, d); }).find("same dtype"), std::string::npos);
  EXPECT_NE(error_of([&] {
              glass::mm(a, glass::zeros({3, 4}));
            }).find("same device"),
            std::string::npos);
}

TEST_F(CudaGemm, VersionSwitch) {
  {
    GemmVersionGuard guard(GemmVersion::kSharedTiles);
    EXPECT_EQ(glass::cuda::get_gemm_version(), GemmVersion::kSharedTiles);
  }
  EXPECT_NE(error_of([] {
              glass::cuda::set_gemm_version(static_cast<GemmVersion>(6));
            }).find("unknown version 6; expected 1 (naive) to 5 (vectorized)"),
            std::string::npos);
}

}  // namespace
