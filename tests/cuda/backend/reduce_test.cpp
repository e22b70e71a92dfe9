// Tests for reductions on the CUDA backend (cuda/kernels/reduce.cu, arg_reduce.cu):
// sum, prod, amax, amin, mean, argmax/argmin and max/min(dim), compared with the CPU
// backend on the same inputs.
//
// Tolerances. Integer, Bool, max, min and arg results must be exact (integer sums wrap
// modulo 2^64 on both devices; max/min/arg pick an element). Float64 sums agree to
// rtol 1e-12. Float32 sums and products: the device adds in float within a block (at most
// 4096 elements, 16 per thread then a tree), the CPU in float blocks of 1024 then double,
// so both are within ~30 float roundings of the exact sum: rtol 1e-5, atol 1e-5 on values
// of magnitude ~10.
#include <gtest/gtest.h>

#include <glass/glass.h>

#include "cuda/backend/backend_test_util.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using glass::ReduceOp;
using glass::ScalarType;
using glass::Tensor;

class CudaReduce : public ::testing::Test {
 protected:
  void SetUp() override { glass::cuda::testing::use_simulator_unless_gpu(); }
};

const double kNan = std::numeric_limits<double>::quiet_NaN();

// Same dtype and shape, values within the tolerances above for the dtype (NaN == NaN).
::testing::AssertionResult matches(const Tensor& device, const Tensor& cpu) {
  Tensor d = device.cpu();
  if (d.dtype() != cpu.dtype())
    return ::testing::AssertionFailure()
           << "dtype " << glass::to_string(d.dtype()) << " vs " << glass::to_string(cpu.dtype());
  if (d.sizes() != cpu.sizes()) return ::testing::AssertionFailure() << "shapes differ";
  double rtol = 0, atol = 0;
  if (cpu.dtype() == glass::kFloat) rtol = atol = 1e-5;
  if (cpu.dtype() == glass::kDouble) rtol = 1e-12;
  if (glass::allclose(d, cpu, rtol, atol, /*equal_nan=*/true)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "device\n" << d << "\ncpu\n" << cpu;
}

// Deterministic values in [-10, 10] of the given shape and dtype (Bool: about half true).
Tensor values(glass::IntArrayRef shape, ScalarType t) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  Tensor x = (glass::arange(n).to(glass::kDouble) * 0.731).sin() * 10;
  if (t == glass::kBool) return (x > 0).view(shape);
  return x.to(t).view(shape);
}

Tensor reduce(ReduceOp op, const Tensor& x, glass::IntArrayRef dims, bool keepdim) {
  return glass::ops::reduce(op, x, dims, keepdim, std::nullopt);
}

const std::vector<std::vector<int64_t>> kDimSets = {{}, {0}, {1}, {0, 2}, {-1}};

TEST_F(CudaReduce, EveryOpOverEveryDimSetMatchesTheCpu) {
  for (ScalarType t : {glass::kBool, glass::kInt, glass::kLong, glass::kFloat, glass::kDouble}) {
    Tensor x = values({4, 5, 6}, t);
    Tensor xd = x.cuda();
    for (const auto& dims : kDimSets) {
      for (bool keepdim : {false, true}) {
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min}) {
          EXPECT_TRUE(matches(reduce(op, xd, dims, keepdim), reduce(op, x, dims, keepdim)))
              << glass::to_string(op) << " " << glass::to_string(t) << " dims "
              << glass::IntArrayRef(dims) << " keepdim " << keepdim;
        }
        if (glass::is_floating_type(t)) {
          EXPECT_TRUE(matches(xd.mean(dims, keepdim), x.mean(dims, keepdim)));
        }
      }
    }
  }
}

TEST_F(CudaReduce, NonContiguousInputs) {
  Tensor x = values({6, 5, 8}, glass::kFloat);
  Tensor xd = x.cuda();
  Tensor p = x.permute({2, 0, 1}), pd = xd.permute({2, 0, 1});  // transposed
  Tensor s = x.slice(2, 1, 8, 3), sd = xd.slice(2, 1, 8, 3);    // stepped slice
  Tensor st = x.slice(0, 0, 6, 2).transpose(0, 2);              // both at once
  Tensor std_ = xd.slice(0, 0, 6, 2).transpose(0, 2);
  for (const auto& dims : kDimSets) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
      EXPECT_TRUE(matches(reduce(op, pd, dims, false), reduce(op, p, dims, false)));
      EXPECT_TRUE(matches(reduce(op, sd, dims, true), reduce(op, s, dims, true)));
      EXPECT_TRUE(matches(reduce(op, std_, dims, false), reduce(op, st, dims, false)));
    }
  }
  Tensor flat = x.view({6, 40}).t().slice(0, 0, 40, 3);  // (14, 6), strides (3, 40)
  Tensor flatd = xd.view({6, 40}).t().slice(0, 0, 40, 3);
  EXPECT_TRUE(matches(flatd.sum(), flat.sum()));
  EXPECT_TRUE(matches(flatd.sum({0}), flat.sum({0})));
  EXPECT_TRUE(matches(std_.amax({1}), st.amax({1})));
  EXPECT_TRUE(matches(flatd.mean({1}, true), flat.mean({1}, true)));
}

// Long reductions take several blocks per output and a second pass; many short ones take a
// block, or a thread, each.
TEST_F(CudaReduce, ManyBlocksPerOutputAndManyOutputs) {
  Tensor big = values({10000}, glass::kFloat).abs() + 0.5;  // 3 blocks of 4096
  EXPECT_TRUE(matches(big.cuda().sum(), big.sum()));
  Tensor wide = values({3, 9000}, glass::kDouble);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
    EXPECT_TRUE(matches(reduce(op, wide.cuda(), {1}, false), reduce(op, wide, {1}, false)));
    // Along dim 0 of the transpose: the reduced dim is the innermost in memory.
    EXPECT_TRUE(matches(reduce(op, wide.cuda().t(), {0}, false), reduce(op, wide.t(), {0}, false)));
  }
  Tensor near_one = values({2, 6000}, glass::kFloat) * 1e-4 + 1;
  EXPECT_TRUE(matches(near_one.cuda().prod(1), near_one.prod(1)));
  Tensor ints = values({9000}, glass::kInt);
  EXPECT_TRUE(matches(ints.cuda().sum(), ints.sum()));
  Tensor flags = values({9000}, glass::kBool);
  EXPECT_TRUE(matches(flags.cuda().amax(), flags.amax()));
  EXPECT_TRUE(matches(flags.cuda().sum(), flags.sum()));
  // Many outputs: 600 rows of 50 (a block each), 3000 rows of 8 (a thread each), and
  // 200 columns of 300 (a strided reduction per output).
  Tensor rows = values({600, 50}, glass::kFloat);
  EXPECT_TRUE(matches(rows.cuda().sum({1}), rows.sum({1})));
  Tensor short_rows = values({3000, 8}, glass::kLong);
  EXPECT_TRUE(matches(short_rows.cuda().sum({1}), short_rows.sum({1})));
  Tensor cols = values({300, 200}, glass::kFloat);
  EXPECT_TRUE(matches(cols.cuda().amin({0}), cols.amin({0})));
  EXPECT_TRUE(matches(cols.cuda().mean({0}), cols.mean({0})));
}

TEST_F(CudaReduce, FloatSumOfManyOnesIsExact) {
  Tensor ones = glass::ones({40000});  // 10 blocks: float within blocks, double across
  EXPECT_EQ(ones.cuda().sum().item<float>(), 40000.0f);
}

TEST_F(CudaReduce, EmptyReductionsGiveTheIdentity) {
  Tensor e = glass::zeros({0, 3});
  Tensor ed = e.cuda();
  EXPECT_TRUE(matches(ed.sum(), e.sum()));
  EXPECT_EQ(ed.sum().item<float>(), 0.0f);
  EXPECT_EQ(ed.prod().item<float>(), 1.0f);
  EXPECT_TRUE(matches(ed.sum({0}), glass::zeros({3})));
  EXPECT_TRUE(matches(ed.prod(0), glass::ones({3})));
  EXPECT_EQ(ed.sum({1}).sizes(), (glass::Shape{0}));
  EXPECT_EQ(ed.amax({1}).sizes(), (glass::Shape{0}));
  EXPECT_TRUE(std::isnan(ed.mean().item<float>()));
  std::string msg = glass::cuda::testing::error_of([&] { (void)ed.amax({0}); });
  EXPECT_NE(msg.find("non-zero size"), std::string::npos) << msg;
}

TEST_F(CudaReduce, NanPropagatesThroughMaxAndMin) {
  Tensor x = values({3, 70}, glass::kFloat);
  x.select(0, 1).select(0, 45).fill_(kNan);  // row 1 (a block per row) has a NaN
  Tensor xd = x.cuda();
  EXPECT_TRUE(std::isnan(xd.amax().item<float>()));
  EXPECT_TRUE(std::isnan(xd.amin().item<float>()));
  EXPECT_TRUE(matches(xd.amax({1}), x.amax({1})));
  EXPECT_TRUE(matches(xd.amin({0}), x.amin({0})));
  EXPECT_TRUE(matches(xd.sum({1}), x.sum({1})));
}

TEST_F(CudaReduce, IntegerSumsAndProductsWrapModulo2To64) {
  auto longs = [](std::vector<int64_t> v) { return glass::tensor(v).cuda(); };
  EXPECT_EQ(longs({INT64_MAX, 1}).sum().item<int64_t>(), INT64_MIN);
  EXPECT_EQ(longs({INT64_MIN, -1}).sum().item<int64_t>(), INT64_MAX);
  const int64_t p32 = int64_t{1} << 32, p62 = int64_t{1} << 62;
  EXPECT_EQ(longs({p32, p32}).prod().item<int64_t>(), 0);
  EXPECT_EQ(longs({p62, 3}).prod().item<int64_t>(), INT64_MIN + p62);
  // 5000 * (2^63 - 1) = -5000 (mod 2^64), through a block tree and the second pass.
  Tensor many = glass::full({5000}, INT64_MAX, glass::kLong);
  EXPECT_EQ(many.cuda().sum().item<int64_t>(), -5000);
  EXPECT_EQ(many.sum().item<int64_t>(), -5000);
}

TEST_F(CudaReduce, ArgMaxArgMinTiesAndNanMatchTheCpu) {
  // Ties: the first index wins. NaN: it wins, the first NaN among several.
  Tensor x = glass::tensor({{3.0, 1.0, 3.0, 2.0, 1.0},
                            {kNan, 5.0, kNan, 9.0, -1.0},
                            {2.0, 2.0, 2.0, 2.0, 2.0},
                            {-4.0, 7.0, 7.0, kNan, -4.0}});
  Tensor xd = x.cuda();
  for (int64_t dim : {0, 1, -1}) {
    for (bool keepdim : {false, true}) {
      EXPECT_TRUE(matches(xd.argmax(dim, keepdim), x.argmax(dim, keepdim))) << dim;
      EXPECT_TRUE(matches(xd.argmin(dim, keepdim), x.argmin(dim, keepdim))) << dim;
      auto [v, i] = xd.max(dim, keepdim);
      auto [cv, ci] = x.max(dim, keepdim);
      EXPECT_TRUE(matches(v, cv));
      EXPECT_TRUE(matches(i, ci));
      auto [mv, mi] = xd.min(dim, keepdim);
      auto [cmv, cmi] = x.min(dim, keepdim);
      EXPECT_TRUE(matches(mv, cmv));
      EXPECT_TRUE(matches(mi, cmi));
    }
  }
  EXPECT_EQ(xd.argmax().item<int64_t>(), 5);  // the first NaN of the flattened tensor
  EXPECT_EQ(glass::tensor({1.0, 4.0, 4.0}).cuda().argmax().item<int64_t>(), 1);
}

// Rows longer than a warp take the block kernel: ties and NaNs far apart in one row,
// inner > 1 (reducing a middle dim), and every dtype.
TEST_F(CudaReduce, ArgReduceOfLongRowsAndEveryDtype) {
  for (ScalarType t : {glass::kBool, glass::kInt, glass::kLong, glass::kFloat, glass::kDouble}) {
    // Whole numbers in [-10, 10]: every row has many ties.
    Tensor x = t == glass::kBool ? values({3, 300, 4}, t) : values({3, 300, 4}, glass::kLong).to(t);
    Tensor xd = x.cuda();
    for (int64_t dim : {0, 1, 2}) {
      EXPECT_TRUE(matches(xd.argmax(dim), x.argmax(dim))) << glass::to_string(t) << dim;
      EXPECT_TRUE(matches(xd.argmin(dim), x.argmin(dim))) << glass::to_string(t) << dim;
      EXPECT_TRUE(matches(std::get<0>(xd.max(dim)), std::get<0>(x.max(dim))));
    }
    EXPECT_TRUE(matches(xd.argmax(), x.argmax()));
  }
  Tensor y = values({2, 500}, glass::kDouble);
  y.select(0, 0).select(0, 400).fill_(kNan);
  y.select(0, 0).select(0, 77).fill_(kNan);
  y.select(0, 1).select(0, 450).fill_(100.0);
  y.select(0, 1).select(0, 20).fill_(100.0);
  Tensor yd = y.cuda();
  EXPECT_TRUE(matches(yd.argmax(1), y.argmax(1)));
  EXPECT_TRUE(matches(yd.argmin(1), y.argmin(1)));
  EXPECT_EQ(yd.argmax(1).cpu().select(0, 0).item<int64_t>(), 77);
  EXPECT_EQ(yd.argmax(1).cpu().select(0, 1).item<int64_t>(), 20);
  // Rows longer than one block (4096 elements): several blocks and a second pass. Ties
  // and NaNs in different blocks of one row.
  Tensor z = values({2, 9000, 2}, glass::kLong).to(glass::kFloat);
  z.select(0, 0).select(0, 8500).fill_(50.0);  // the same maximum in blocks 0 and 2
  z.select(0, 0).select(0, 100).fill_(50.0);
  z.select(0, 1).select(0, 7000).fill_(kNan);  // NaNs: the first, in block 1, wins
  z.select(0, 1).select(0, 5000).fill_(kNan);
  z.select(0, 1).select(0, 8999).fill_(kNan);
  Tensor zd = z.cuda();
  for (int64_t dim : {1, 2}) {
    EXPECT_TRUE(matches(zd.argmax(dim), z.argmax(dim))) << dim;
    EXPECT_TRUE(matches(zd.argmin(dim), z.argmin(dim))) << dim;
  }
  EXPECT_TRUE(matches(zd.argmax(), z.argmax()));
  EXPECT_TRUE(matches(zd.argmin(), z.argmin()));
  EXPECT_EQ(zd.argmax(1).cpu().select(0, 0).select(0, 0).item<int64_t>(), 100);
  EXPECT_EQ(zd.argmax(1).cpu().select(0, 1).select(0, 0).item<int64_t>(), 5000);
  // A non-contiguous input is made contiguous first, as on the CPU.
  EXPECT_TRUE(matches(yd.t().argmin(0), y.t().argmin(0)));
}

}  // namespace
