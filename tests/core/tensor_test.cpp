// tests/core/tensor_test.cpp — the Tensor handle: item, requires_grad, undefined tensors,
// conversions between dtypes and devices (to, cpu, cuda, copy_), pinned memory, accessors
// and set_data. Device paths run on the fake CUDA backend (fake_cuda.h).
#include "core/tensor.h"

#include <type_traits>

#include "fake_cuda.h"
#include "test_util.h"

namespace glass {
namespace {

TEST(Tensor, CopiesShareTheImpl) {
  Tensor a = zeros({2});
  Tensor b = a;
  b.fill_(3);
  EXPECT_TRUE(a.is_same(b));
  EXPECT_EQ(a.sum().item<float>(), 6.0f);
}

TEST(Tensor, ItemReadsOneElement) {
  EXPECT_EQ(tensor({7}).item<int64_t>(), 7);
  EXPECT_EQ(tensor(2.5).item<double>(), 2.5);
  EXPECT_TRUE(tensor(true).item().is_boolean());
  EXPECT_GLASS_ERROR(zeros({2}).item(), "item()", "2 elements");
}

TEST(Tensor, RequiresGradOnlyForFloatingPoint) {
  Tensor x = zeros({2});
  x.requires_grad_();
  EXPECT_TRUE(x.requires_grad());
  EXPECT_GLASS_ERROR(zeros({2}, kInt64).requires_grad_(), "floating point", "Long");
  EXPECT_TRUE(ones({2}, TensorOptions().requires_grad(true)).requires_grad());
}

TEST(Tensor, UndefinedTensorsFailCleanly) {
  Tensor u;
  EXPECT_FALSE(u.defined());
  EXPECT_GLASS_ERROR(u.sizes(), "undefined Tensor");
  EXPECT_GLASS_ERROR(u + ones({1}), "undefined");
  EXPECT_EQ(u.toString(), "UndefinedType");
  EXPECT_EQ(zeros({2, 3}, kFloat64).toString(), "CPUDoubleType{2,3}");
}

using testing::FakeCuda;
using testing::WithoutCuda;

// libtorch's overload set: each spelling below must name exactly one overload (today's
// t.to(kCPU) was ambiguous between to(Device) and to(TensorOptions)).
template <class... A>
concept ToCompiles = requires(const Tensor& t, A... a) {
  t.to(a...);
};
static_assert(ToCompiles<DeviceType>);              // t.to(glass::kCPU), t.to(glass::kCUDA)
static_assert(ToCompiles<Device>);                  // t.to(Device(kCUDA, 1))
static_assert(ToCompiles<ScalarType>);              // t.to(kFloat64)
static_assert(ToCompiles<TensorOptions>);           // t.to(options)
static_assert(ToCompiles<Device, ScalarType>);      // t.to(device, dtype)
static_assert(ToCompiles<Tensor>);                  // t.to(other)
static_assert(ToCompiles<ScalarType, bool, bool>);  // non_blocking, copy
static_assert(ToCompiles<DeviceType, bool, bool>);
static_assert(ToCompiles<Device, ScalarType, bool, bool>);
static_assert(std::is_same_v<decltype(std::declval<Tensor>().to(kCPU)), Tensor>);
// accessor() on a temporary would dangle: deleted, as in libtorch.
template <class T>
concept HasAccessor = requires(T&& t) {
  std::forward<T>(t).template accessor<float, 1>();
};
static_assert(HasAccessor<Tensor&>);
static_assert(!HasAccessor<Tensor>);  // a temporary

TEST(TensorTo, DtypeConversionsKeepTheDeviceAndCopyOnlyWhenNeeded) {
  Tensor x = tensor({1.5, -2.5});
  EXPECT_TRUE(x.to(kFloat).is_same(x));  // nothing changes: the same tensor
  EXPECT_TRUE(x.to(kCPU).is_same(x));
  EXPECT_TRUE(x.to(Device(kCPU)).is_same(x));
  EXPECT_TRUE(x.to(x).is_same(x));
  EXPECT_FALSE(x.to(kFloat, false, /*copy=*/true).is_same(x));
  EXPECT_FALSE(x.to(kFloat, false, true).is_alias_of(x));
  Tensor d = x.to(kFloat64);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_TRUE(testing::close(d, {1.5, -2.5}));
  Tensor l = x.to(kCPU, kInt64);  // (Device, ScalarType)
  EXPECT_EQ(l.dtype(), kInt64);
  EXPECT_TRUE(testing::close(l, {1, -2}));               // truncation, as a C++ cast
  EXPECT_EQ(x.to(tensor({1}, kInt32)).dtype(), kInt32);  // to(other): other's dtype
  EXPECT_EQ(x.to(TensorOptions().requires_grad(false)).dtype(), kFloat);  // unset: kept
}

TEST(TensorTo, MovesBetweenDevicesAndKeepsTheDtype) {
  FakeCuda cuda;
  Tensor x = tensor({1.0, 2.0, 3.0}, kFloat64);
  Tensor c = x.to(kCUDA);
  EXPECT_EQ(c.device(), Device(kCUDA, 0));  // the current device, with its index
  EXPECT_EQ(c.dtype(), kFloat64);
  EXPECT_TRUE(c.to(kCUDA).is_same(c));  // already there: no copy
  EXPECT_TRUE(c.to(Device(kCUDA, 0)).is_same(c));
  EXPECT_TRUE(c.to(kFloat64).is_same(c));
  EXPECT_EQ(c.to(kFloat32).device(), Device(kCUDA, 0));  // a cast stays on the device
  Tensor one = x.to(Device(kCUDA, 1));
  EXPECT_EQ(one.device(), Device(kCUDA, 1));
  Tensor back = one.cpu();
  EXPECT_TRUE(back.is_cpu());
  EXPECT_TRUE(testing::close(back, {1.0, 2.0, 3.0}));
  EXPECT_EQ(x.cuda().device(), Device(kCUDA, 0));
  {
    DeviceGuard g(Device(kCUDA, 1));
    EXPECT_EQ(x.cuda().device(), Device(kCUDA, 1));  // cuda(): the current device
    EXPECT_TRUE(one.cuda().is_same(one));
  }
  EXPECT_EQ(x.to(c).device(), Device(kCUDA, 0));  // to(other): other's device
  Tensor both = x.to(Device(kCUDA, 1), kInt32);
  EXPECT_EQ(both.device(), Device(kCUDA, 1));
  EXPECT_EQ(both.dtype(), kInt32);
  EXPECT_TRUE(testing::close(both.cpu(), {1, 2, 3}));
}

TEST(TensorTo, NonBlockingReachesTheCopyAndIsNeverTheCopyFlag) {
  FakeCuda cuda;
  Tensor x = tensor({1.f, 2.f});
  x.to(kCUDA);
  x.to(kCUDA, /*non_blocking=*/true);
  x.to(Device(kCUDA, 0), kFloat, true);
  x.to(TensorOptions(kCUDA), true);
  const auto& copies = cuda.log().copies;
  ASSERT_EQ(copies.size(), 4u);
  EXPECT_FALSE(copies[0].non_blocking);
  EXPECT_TRUE(copies[1].non_blocking);
  EXPECT_TRUE(copies[2].non_blocking);
  EXPECT_TRUE(copies[3].non_blocking);
  EXPECT_EQ(copies[1].src, Device(kCPU));
  EXPECT_EQ(copies[1].dst, Device(kCUDA, 0));
  // The second argument of to(dtype, ...) is non_blocking: it must not force a copy.
  EXPECT_TRUE(x.to(kFloat, true).is_same(x));
}

TEST(TensorTo, CopyAcrossDevicesWithCopyUnderscore) {
  FakeCuda cuda;
  Tensor dst = zeros({2, 2}, TensorOptions(kFloat64).device(kCUDA));
  Tensor src = tensor({{1., 2.}, {3., 4.}}).t();  // strided, and Float into Double
  dst.copy_(src, /*non_blocking=*/true);
  EXPECT_EQ(dst._version(), 1u);
  EXPECT_TRUE(testing::close(dst.cpu(), {1, 3, 2, 4}));
  EXPECT_TRUE(cuda.log().copies.front().non_blocking);
  Tensor host = zeros({2, 2}, kFloat64);
  host.copy_(dst);  // device -> host
  EXPECT_TRUE(testing::close(host, {1, 3, 2, 4}));
  EXPECT_FALSE(cuda.log().copies.back().non_blocking);
  EXPECT_EQ(cuda.log().copies.back().src, Device(kCUDA, 0));
}

TEST(TensorTo, WithoutACudaRuntimeCudaIsTheClearError) {
  WithoutCuda none;
  Tensor x = ones({2});
  EXPECT_GLASS_ERROR(x.to(kCUDA), "no allocator registered for device type cuda");
  EXPECT_GLASS_ERROR(x.cuda(), "no allocator registered for device type cuda");
  EXPECT_GLASS_ERROR(x.to(Device(kCUDA, 1)), "cuda");
}

TEST(TensorTo, ItemAndPrintingReadDeviceTensorsThroughTheCpu) {
  FakeCuda cuda;
  Tensor c = tensor({2.5}).to(kCUDA);
  EXPECT_EQ(c.item<float>(), 2.5f);
  ASSERT_EQ(cuda.log().copies.size(), 2u);  // to(kCUDA), then item()'s copy back
  EXPECT_EQ(cuda.log().copies[1].dst, Device(kCPU));
  EXPECT_FALSE(cuda.log().copies[1].non_blocking);  // the sync point blocks
  std::ostringstream os;
  os << c;
  EXPECT_EQ(os.str(), "tensor([2.5000], device='cuda:0')");
}

TEST(PinMemory, PinnedTensorsAreCpuTensorsFromThePinnedAllocator) {
  FakeCuda cuda;
  Tensor x = tensor({{1., 2.}, {3., 4.}}).t();
  EXPECT_FALSE(x.is_pinned());
  Tensor p = x.pin_memory();
  EXPECT_TRUE(p.is_pinned());
  EXPECT_TRUE(p.is_cpu());
  EXPECT_FALSE(p.is_alias_of(x));
  EXPECT_TRUE(testing::close(p, {1, 3, 2, 4}));
  EXPECT_EQ(cuda.log().pinned_allocations, 1);
  EXPECT_TRUE(p.pin_memory().is_same(p));      // already pinned: itself
  EXPECT_TRUE(p.narrow(0, 1, 1).is_pinned());  // a view of pinned storage is pinned
  EXPECT_TRUE(p.to(kCUDA, true).is_cuda());
  EXPECT_TRUE(empty({3}, TensorOptions().pinned_memory(true)).is_pinned());
  EXPECT_TRUE(zeros({3}, TensorOptions(kInt64).pinned_memory(true)).is_pinned());
  Tensor z = zeros({3}, TensorOptions(kInt64).pinned_memory(true));
  EXPECT_TRUE(testing::close(z, {0, 0, 0}));
  EXPECT_TRUE(x.to(TensorOptions().pinned_memory(true)).is_pinned());
  EXPECT_TRUE(tensor({1, 2}, TensorOptions().pinned_memory(true)).is_pinned());
}

TEST(PinMemory, OnlyCpuTensorsAndOnlyWithARuntime) {
  {
    FakeCuda cuda;
    Tensor c = ones({2}).to(kCUDA);
    EXPECT_GLASS_ERROR(c.pin_memory(),
                       "pin_memory(): the tensor is already on cuda:0; only CPU tensors can be "
                       "pinned");
    EXPECT_FALSE(c.is_pinned());
    EXPECT_GLASS_ERROR(empty({2}, TensorOptions(kCUDA).pinned_memory(true)), "empty()",
                       "the device is cuda", "only CPU tensors can be pinned");
  }
  WithoutCuda none;
  EXPECT_FALSE(ones({2}).is_pinned());
  EXPECT_GLASS_ERROR(ones({2}).pin_memory(),
                     "pin_memory(): no CUDA runtime is available to page-lock memory "
                     "(GLASS_CUDA=sim or glass::cuda::use_simulator() gives the simulated GPU)");
  EXPECT_GLASS_ERROR(empty({2}, TensorOptions().pinned_memory(true)), "empty()",
                     "no CUDA runtime is available to page-lock memory");
}

TEST(Accessor, ReadsAndWritesThroughTheStrides) {
  Tensor x = arange(6, kFloat).view({2, 3});
  auto a = x.accessor<float, 2>();
  EXPECT_EQ(a.size(0), 2);
  EXPECT_EQ(a.stride(0), 3);
  EXPECT_EQ(a[1][2], 5.0f);
  Tensor t = x.t();  // (3, 2), strides (1, 3)
  auto at = t.accessor<float, 2>();
  EXPECT_EQ(at[2][1], 5.0f);
  EXPECT_EQ(at[0][1], 3.0f);
  at[0][1] = 30.0f;  // writes through to x[1][0]
  EXPECT_EQ(x.select(0, 1).select(0, 0).item<float>(), 30.0f);
  Tensor row = x.select(0, 1);
  EXPECT_EQ((row.accessor<float, 1>()[0]), 30.0f);
  EXPECT_EQ(at.sizes(), IntArrayRef({3, 2}));
  EXPECT_GLASS_ERROR((x.accessor<float, 3>()), "accessor<Float, 3>()", "3 dims", "got 2");
  EXPECT_GLASS_ERROR((x.accessor<double, 2>()), "expected scalar type Double", "Float");
}

TEST(Accessor, DeviceTensorsAreRefused) {
  FakeCuda cuda;
  Tensor c = zeros({2, 2}).to(kCUDA);
  EXPECT_GLASS_ERROR((c.accessor<float, 2>()),
                     "accessor(): the tensor is on cuda:0; host code cannot read device memory; "
                     "use .cpu() first");
  Tensor h = c.cpu();
  EXPECT_EQ((h.accessor<float, 2>()[1][1]), 0.0f);
}

TEST(SetData, KeepsIdentityAndTakesTheNewData) {
  Tensor p = zeros({2}).requires_grad_();
  Tensor alias = p;
  p.set_data(tensor({1.0, 2.0, 3.0}, kFloat64));
  EXPECT_EQ(alias.dtype(), kFloat64);  // every handle sees it
  EXPECT_EQ(alias.sizes(), IntArrayRef({3}));
  EXPECT_TRUE(alias.requires_grad());
  EXPECT_TRUE(testing::close(alias.detach(), {1, 2, 3}));
  EXPECT_GLASS_ERROR(p.set_data(tensor({1, 2})), "set_data()", "requires grad", "Long");
  EXPECT_GLASS_ERROR(p.set_data(Tensor()), "set_data()", "undefined");
}

}  // namespace
}  // namespace glass
