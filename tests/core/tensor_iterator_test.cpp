// tests/core/tensor_iterator_test.cpp — broadcasting strides, dim reordering, coalescing,
// devices and CPU scalars (Note [CPU scalars in device iterations]).
#include "core/tensor_iterator.h"

#include <thread>

#include "fake_cuda.h"
#include "test_util.h"

namespace glass {
namespace {

TEST(TensorIterator, ContiguousOperandsCoalesceToOneFlatRun) {
  Tensor a = zeros({2, 3, 4}), b = zeros({2, 3, 4});
  TensorIterator it =
      TensorIteratorConfig("t").add_output(Tensor()).add_input(a).add_input(b).build();
  EXPECT_EQ(it.ndim(), 1);
  EXPECT_EQ(it.shape(), (std::vector<int64_t>{24}));
  EXPECT_TRUE(it.is_contiguous());
  EXPECT_EQ(it.output().sizes(), (Shape{2, 3, 4}));
}

TEST(TensorIterator, BroadcastOperandsGetStrideZero) {
  Tensor a = zeros({3, 4}), row = zeros({4}), col = zeros({3, 1});
  TensorIterator it = TensorIteratorConfig("t")
                          .add_output(Tensor())
                          .add_input(a)
                          .add_input(row)
                          .add_input(col)
                          .build();
  // Dim 0 of the iterator is the innermost (size 4), dim 1 the outer (size 3).
  EXPECT_EQ(it.shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(it.strides(1), (std::vector<int64_t>{4, 16}));  // a: bytes
  EXPECT_EQ(it.strides(2), (std::vector<int64_t>{4, 0}));   // row repeats along dim 0 of [3, 4]
  EXPECT_EQ(it.strides(3), (std::vector<int64_t>{0, 4}));   // col repeats along dim 1
  EXPECT_FALSE(it.is_contiguous());
}

TEST(TensorIterator, TransposedInputsAreWalkedInMemoryOrder) {
  Tensor a = zeros({4, 3}).t();  // sizes [3, 4], strides [1, 3]
  TensorIterator it = TensorIteratorConfig("t").add_output(Tensor()).add_input(a).build();
  // Memory order is a flat run; the output is allocated in the same layout (as PyTorch).
  EXPECT_EQ(it.ndim(), 1);
  EXPECT_EQ(it.output().strides(), (Shape{1, 3}));
}

TEST(TensorIterator, ForEachVisitsEveryElementOnceAcrossThreads) {
  Tensor out = zeros({300, 301}, kInt64);
  TensorIterator it = TensorIteratorConfig("t").add_output(out.t()).build();
  it.for_each(
      [](char** data, const int64_t* strides, int64_t n) {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<int64_t*>(data[0] + i * strides[0]) += 1;
      },
      1000);
  EXPECT_EQ(out.sum().item<int64_t>(), 300 * 301);
  EXPECT_EQ(out.max().item<int64_t>(), 1);
}

TEST(TensorIterator, OutputShapeAndDtypeAreChecked) {
  Tensor out = zeros({3});
  EXPECT_GLASS_ERROR(TensorIteratorConfig("add").add_output(out).add_input(zeros({2, 3})).build(),
                     "add()", "output with shape [3]", "broadcast shape [2, 3]");
  Tensor iout = zeros({3}, kInt64);
  EXPECT_GLASS_ERROR(TensorIteratorConfig("mul").add_output(iout).add_input(zeros({3})).build(),
                     "result type Float can't be cast to the desired output type Long");
}

TEST(TensorIterator, ZeroDimAndEmptyTensors) {
  TensorIterator s =
      TensorIteratorConfig("t").add_output(Tensor()).add_input(scalar_tensor(2.0)).build();
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.output().dim(), 0);
  TensorIterator e =
      TensorIteratorConfig("t").add_output(Tensor()).add_input(zeros({0, 3})).build();
  EXPECT_EQ(e.numel(), 0);
  int runs = 0;
  e.for_each([&](char**, const int64_t*, int64_t) { ++runs; });
  EXPECT_EQ(runs, 0);
}

}  // namespace
}  // namespace glass

namespace glass {
namespace {

// Note [Tiling]: shapes large enough that for_each walks tiles, with ragged edges.
TEST(TensorIterator, TiledWalksMatchTheOracle) {
  Tensor a = testing::random_tensor({150, 130}, kFloat64, 1);
  Tensor b = testing::random_tensor({130, 150}, kFloat64, 2);
  TensorIterator it =
      TensorIteratorConfig("t").add_output(Tensor()).add_input(a).add_input(b.t()).build();
  EXPECT_TRUE(it.needs_tiling());
  Tensor sum = a + b.t();
  std::vector<double> want;
  testing::for_each_index({150, 130}, [&](const std::vector<int64_t>& i) {
    want.push_back(testing::ref_at(a, i) + testing::ref_at(b, {i[1], i[0]}));
  });
  EXPECT_TRUE(testing::close(sum, want));
  // A batched transpose-copy (outer dim 3) and a reduction over a transposed operand.
  Tensor c = testing::random_tensor({3, 131, 70}, kFloat32, 3);
  Tensor ct = c.transpose(1, 2).contiguous();
  EXPECT_TRUE(
      TensorIteratorConfig("t").add_output(ct).add_input(c.transpose(1, 2)).build().needs_tiling());
  EXPECT_TRUE(testing::close(ct, c.transpose(1, 2)));
  EXPECT_TRUE(testing::close(b.t().sum(0), testing::values(b.sum(1)), 1e-12, 1e-12));
  set_num_threads(1);
  EXPECT_TRUE(testing::close(a + b.t(), want));
  set_num_threads(static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace glass

namespace glass {
namespace {

using testing::FakeCuda;

TEST(TensorIterator, CpuScalarsJoinADeviceIterationWithoutACopy) {
  FakeCuda cuda;
  Tensor x = tensor({1.f, 2.f, 3.f}).to(kCUDA);
  size_t copies = cuda.log().copies.size();
  TensorIterator it = TensorIteratorConfig("mul")
                          .add_output(Tensor())
                          .add_input(x)
                          .add_input(wrapped_scalar_tensor(2))  // a Long 0-dim CPU tensor
                          .build();
  EXPECT_EQ(it.device(), Device(kCUDA, 0));  // the non-CPU operands decide
  EXPECT_EQ(it.output().device(), Device(kCUDA, 0));
  EXPECT_FALSE(it.is_cpu_scalar(0));
  EXPECT_FALSE(it.is_cpu_scalar(1));
  ASSERT_TRUE(it.is_cpu_scalar(2));
  EXPECT_TRUE(it.operand(2).is_cpu());
  EXPECT_EQ(it.dtype(2), kFloat);  // converted to the common dtype, on the CPU
  EXPECT_TRUE(it.scalar_value(2).is_floating_point());
  EXPECT_EQ(it.scalar_value(2).toDouble(), 2.0);
  EXPECT_TRUE(it.is_scalar(2));                 // stride 0 everywhere
  EXPECT_EQ(cuda.log().copies.size(), copies);  // no host->device copy for the scalar
  EXPECT_THROW(it.scalar_value(1), Error);      // not a CPU scalar: an internal error
}

TEST(TensorIterator, OpsOnADeviceTakeScalarsAsValues) {
  FakeCuda cuda;
  Tensor x = tensor({1.0, -2.0}, kFloat64).to(kCUDA);
  size_t copies = cuda.log().copies.size();
  Tensor y = x * 2.5;
  EXPECT_EQ(y.device(), Device(kCUDA, 0));
  EXPECT_EQ(cuda.log().copies.size(), copies);  // x * 2.5 copied nothing to the device
  const auto& seen = cuda.log().last_binary_cpu_scalars;
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_FALSE(seen[1].has_value());
  ASSERT_TRUE(seen[2].has_value());
  EXPECT_EQ(*seen[2], 2.5);
  EXPECT_TRUE(testing::close(y.cpu(), {2.5, -5.0}));
  // A user's 0-dim CPU tensor joins too (as in PyTorch), on either side.
  Tensor z = tensor(10.0, kFloat64) - x;
  EXPECT_EQ(z.device(), Device(kCUDA, 0));
  ASSERT_TRUE(cuda.log().last_binary_cpu_scalars[1].has_value());
  EXPECT_EQ(*cuda.log().last_binary_cpu_scalars[1], 10.0);
  EXPECT_TRUE(testing::close(z.cpu(), {9.0, 12.0}));
  EXPECT_TRUE(testing::close(where(x > 0, x, 0.0).cpu(), {1.0, 0.0}));
}

TEST(TensorIterator, CpuIterationsMarkNothing) {
  Tensor x = tensor({1.f, 2.f});
  TensorIterator it = TensorIteratorConfig("mul")
                          .add_output(Tensor())
                          .add_input(x)
                          .add_input(wrapped_scalar_tensor(2))
                          .build();
  EXPECT_EQ(it.device(), Device(kCPU));
  for (int k = 0; k < it.ntensors(); ++k) EXPECT_FALSE(it.is_cpu_scalar(k));
  TensorIterator all_scalars = TensorIteratorConfig("add")
                                   .add_output(Tensor())
                                   .add_input(wrapped_scalar_tensor(1))
                                   .add_input(scalar_tensor(2.0))
                                   .build();
  EXPECT_EQ(all_scalars.device(), Device(kCPU));
  EXPECT_FALSE(all_scalars.is_cpu_scalar(1));
}

TEST(TensorIterator, MixedDevicesOtherwiseNameBothDevices) {
  FakeCuda cuda;
  Tensor c = ones({2}).to(kCUDA);
  EXPECT_GLASS_ERROR(
      TensorIteratorConfig("add").add_output(Tensor()).add_input(c).add_input(ones({2})).build(),
      "add()", "same device", "cuda:0 and cpu");
  Tensor c1 = ones({2}).to(Device(kCUDA, 1));
  EXPECT_GLASS_ERROR(c + c1, "add()", "cuda:0 and cuda:1");
  // A 0-dim tensor on another device is no CPU scalar.
  EXPECT_GLASS_ERROR(c + tensor(1.f).to(Device(kCUDA, 1)), "cuda:0 and cuda:1");
  // Outputs are never CPU scalars: a 0-dim CPU output cannot take a device result.
  Tensor out = scalar_tensor(0.f);
  Tensor c0 = scalar_tensor(1.f).to(kCUDA);
  EXPECT_GLASS_ERROR(
      TensorIteratorConfig("add").add_output(out).add_input(c0).add_input(c0).build(), "add()",
      "cuda:0 and cpu (the output)");
  EXPECT_GLASS_ERROR(out.add_(c0), "cuda:0 and cpu (the output)");
  EXPECT_EQ(out.item<float>(), 0.0f);
}

}  // namespace
}  // namespace glass
