// Tests for the CUDA backend's ops on the simulated GPU: every result is compared with
// the CPU backend on the same inputs (the CPU is the reference), and bad input gets the
// errors the contract promises.
#include <gtest/gtest.h>

#include <glass/glass.h>

#include "cuda/backend/backend_test_util.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace {

using glass::cuda::testing::error_of;

using glass::Device;
using glass::Tensor;

// These tests hold no simulator hooks, so they also run on a real GPU: the simulator
// serves them unless GLASS_CUDA=gpu asks for the GPU (scripts/gpu_check.sh does).
class CudaOps : public ::testing::Test {
 protected:
  void SetUp() override { glass::cuda::testing::use_simulator_unless_gpu(); }
};

Tensor cpu_arange(int64_t n, glass::ScalarType t = glass::kFloat) { return glass::arange(n).to(t); }

// Values with every sign, zero, and magnitudes where exp/log/tanh differ in their tails.
Tensor mixed_values() { return glass::tensor({-3.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.0, 7.25}); }

TEST_F(CudaOps, RoundTripKeepsValuesDtypeAndShape) {
  for (glass::ScalarType t :
       {glass::kBool, glass::kInt, glass::kLong, glass::kFloat, glass::kDouble}) {
    Tensor x = cpu_arange(12, t).view({3, 4});
    Tensor d = x.to(glass::kCUDA);
    EXPECT_TRUE(d.is_cuda());
    EXPECT_EQ(d.device(), Device(glass::kCUDA, 0));
    EXPECT_EQ(d.dtype(), t);
    EXPECT_EQ(d.sizes(), x.sizes());
    Tensor back = d.cpu();
    EXPECT_TRUE(back.is_cpu());
    EXPECT_TRUE(glass::equal(back, x)) << glass::to_string(t);
  }
}

TEST_F(CudaOps, DeviceIndexAndCurrentDevice) {
  if (glass::cuda::device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  Tensor x = cpu_arange(4);
  EXPECT_EQ(x.to(Device(glass::kCUDA, 1)).device(), Device(glass::kCUDA, 1));
  {
    glass::cuda::CUDAGuard guard(1);
    EXPECT_EQ(x.cuda().device(), Device(glass::kCUDA, 1));
    EXPECT_EQ(glass::empty({2}, glass::kCUDA).device(), Device(glass::kCUDA, 1));
  }
  EXPECT_EQ(glass::cuda::current_device(), 0);
  EXPECT_EQ(x.cuda().device(), Device(glass::kCUDA, 0));
}

TEST_F(CudaOps, BinaryOpsMatchTheCpuForEveryDtype) {
  using glass::BinaryOp;
  Tensor a = glass::tensor({-3.0, -1.0, 0.0, 2.0, 5.0, 6.0}).view({2, 3});
  Tensor b = glass::tensor({2.0, -1.0, 3.0, 2.0, 1.5, -4.0}).view({2, 3});
  for (glass::ScalarType t : {glass::kInt, glass::kLong, glass::kFloat, glass::kDouble}) {
    Tensor at = a.to(t), bt = b.to(t);
    Tensor ad = at.cuda(), bd = bt.cuda();
    EXPECT_TRUE(glass::equal((ad + bd).cpu(), at + bt));
    EXPECT_TRUE(glass::equal((ad - bd).cpu(), at - bt));
    EXPECT_TRUE(glass::equal((ad * bd).cpu(), at * bt));
    EXPECT_TRUE(glass::allclose((ad / bd).cpu(), at / bt));
    EXPECT_TRUE(glass::equal(glass::maximum(ad, bd).cpu(), glass::maximum(at, bt)));
    EXPECT_TRUE(glass::equal(glass::minimum(ad, bd).cpu(), glass::minimum(at, bt)));
    EXPECT_TRUE(glass::equal((ad < bd).cpu(), at < bt));
    EXPECT_TRUE(glass::equal((ad == bd).cpu(), at == bt));
    EXPECT_TRUE(glass::equal((ad >= bd).cpu(), at >= bt));
    EXPECT_EQ((ad < bd).dtype(), glass::kBool);
  }
  Tensor ai = glass::tensor({2, -1, 3, 0}, glass::kLong),
         bi = glass::tensor({3, -3, 0, 2}, glass::kLong);
  EXPECT_TRUE(glass::equal(ai.cuda().pow(bi.cuda()).cpu(), ai.pow(bi)));  // by squaring
}

TEST_F(CudaOps, BroadcastingAndStridedOperands) {
  Tensor x = cpu_arange(12).view({3, 4});
  Tensor row = glass::tensor({10.0f, 20.0f, 30.0f, 40.0f});
  Tensor col = glass::tensor({1.0f, 2.0f, 3.0f}).view({3, 1});
  Tensor xd = x.cuda();
  EXPECT_TRUE(glass::equal((xd + row.cuda()).cpu(), x + row));
  EXPECT_TRUE(glass::equal((xd * col.cuda()).cpu(), x * col));
  // A transposed operand next to a contiguous one, and a stepped slice.
  Tensor y = cpu_arange(12).view({4, 3});
  EXPECT_TRUE(glass::equal((xd + y.cuda().t()).cpu(), x + y.t()));
  Tensor s = x.slice(1, 0, 4, 2);
  EXPECT_TRUE(glass::equal((xd.slice(1, 0, 4, 2) * 3).cpu(), s * 3));
  // contiguous() of a transposed device tensor is a strided copy kernel on the device.
  Tensor t = xd.t().contiguous();
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(glass::equal(t.cpu(), x.t().contiguous()));
}

// The flat kernels move 4 neighbours at a time: whole blocks, a partial last block, a
// partial last group, and views that start mid-group (which take the general kernel).
TEST_F(CudaOps, FlatKernelsHandleTailsAndMisalignedViews) {
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{2048}, int64_t{2048 * 3 + 5}}) {
    Tensor a = glass::arange(n).to(glass::kFloat);
    Tensor b = glass::arange(n).to(glass::kFloat) * 0.5;
    Tensor ad = a.cuda(), bd = b.cuda();
    EXPECT_TRUE(glass::equal((ad + bd).cpu(), a + b)) << n;
    EXPECT_TRUE(glass::equal((ad < bd + 1).cpu(), a < b + 1)) << n;  // Bool output
    EXPECT_TRUE(glass::equal(ad.neg().cpu(), a.neg())) << n;
    Tensor f = glass::empty({n}, glass::kCUDA);
    f.fill_(2);
    EXPECT_TRUE(glass::equal(f.cpu(), glass::full({n}, 2.0))) << n;
  }
  Tensor a = glass::arange(4099).to(glass::kFloat);
  Tensor ad = a.cuda();
  for (int64_t offset : {1, 2, 3}) {
    Tensor v = ad.slice(0, offset, 4099), w = a.slice(0, offset, 4099);
    EXPECT_TRUE(glass::equal((v * 3).cpu(), w * 3)) << offset;
    EXPECT_TRUE(glass::allclose(v.exp().cpu(), w.exp(), 1e-6, 0)) << offset;
    Tensor out = ad.slice(0, 0, 4099 - offset).clone();
    out.copy_(v);  // a device-to-device copy from a view that starts mid-group
    EXPECT_TRUE(glass::equal(out.cpu(), w)) << offset;
  }
}

TEST_F(CudaOps, UnaryOpsMatchTheCpu) {
  Tensor x = mixed_values();
  Tensor pos = x.abs() + 0.5;
  Tensor xd = x.cuda(), posd = pos.cuda();
  EXPECT_TRUE(glass::equal(xd.neg().cpu(), x.neg()));
  EXPECT_TRUE(glass::equal(xd.abs().cpu(), x.abs()));
  EXPECT_TRUE(glass::equal(xd.relu().cpu(), x.relu()));
  EXPECT_TRUE(glass::equal(xd.sign().cpu(), x.sign()));
  EXPECT_TRUE(glass::allclose(xd.exp().cpu(), x.exp(), 1e-6, 1e-6));
  EXPECT_TRUE(glass::allclose(posd.log().cpu(), pos.log(), 1e-6, 1e-6));
  EXPECT_TRUE(glass::allclose(posd.sqrt().cpu(), pos.sqrt(), 1e-6, 1e-6));
  EXPECT_TRUE(glass::allclose(posd.rsqrt().cpu(), pos.rsqrt(), 1e-6, 1e-6));
  EXPECT_TRUE(glass::allclose(xd.sin().cpu(), x.sin(), 1e-6, 1e-6));
  EXPECT_TRUE(glass::allclose(xd.cos().cpu(), x.cos(), 1e-6, 1e-6));
  EXPECT_TRUE(glass::allclose(xd.tanh().cpu(), x.tanh(), 1e-6, 1e-6));
  EXPECT_TRUE(glass::allclose(xd.sigmoid().cpu(), x.sigmoid(), 1e-6, 1e-6));
  EXPECT_TRUE(glass::allclose(posd.log1p().cpu(), pos.log1p(), 1e-6, 1e-6));
  EXPECT_TRUE(glass::allclose(glass::gelu(xd).cpu(), glass::gelu(x), 1e-6, 1e-6));
  // Integer inputs of float functions compute in the default float dtype, as on the CPU.
  Tensor i = glass::tensor({1, 2, 3}, glass::kLong);
  EXPECT_EQ(i.cuda().exp().dtype(), glass::kFloat);
  EXPECT_TRUE(glass::allclose(i.cuda().exp().cpu(), i.exp()));
}

TEST_F(CudaOps, NanPropagatesLikeOnTheCpu) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = glass::tensor({nan, 1.0, -2.0});
  Tensor y = glass::tensor({0.0, nan, -3.0});
  Tensor xd = x.cuda(), yd = y.cuda();
  EXPECT_TRUE(glass::allclose(glass::maximum(xd, yd).cpu(), glass::maximum(x, y), 0, 0, true));
  EXPECT_TRUE(glass::allclose(glass::minimum(xd, yd).cpu(), glass::minimum(x, y), 0, 0, true));
  EXPECT_TRUE(std::isnan(xd.relu().cpu().select(0, 0).item<float>()));
  EXPECT_TRUE(glass::allclose(xd.relu().cpu(), x.relu(), 1e-5, 1e-8, /*equal_nan=*/true));
}

TEST_F(CudaOps, ScalarsAreKernelArgumentsNotDeviceCopies) {
  Tensor x = cpu_arange(6);
  Tensor xd = x.cuda();
  const int64_t allocs_before = glass::cuda::memory_stats().num_allocs;
  Tensor y = xd * 2;
  // One allocation: the output. The scalar 2 never becomes a device tensor.
  EXPECT_EQ(glass::cuda::memory_stats().num_allocs, allocs_before + 1);
  EXPECT_TRUE(glass::equal(y.cpu(), x * 2));
  EXPECT_TRUE(glass::equal((2 - xd).cpu(), 2 - x));
  EXPECT_TRUE(glass::equal((xd / 4).cpu(), x / 4));
  // A 0-dim CPU tensor works the same way (PyTorch allows it for CUDA ops).
  Tensor s = glass::tensor(3.0f);
  EXPECT_TRUE(glass::equal((xd + s).cpu(), x + s));
}

TEST_F(CudaOps, FillAndFactoriesOnTheDevice) {
  Tensor z = glass::zeros({2, 3}, glass::TensorOptions().device(glass::kCUDA));
  EXPECT_TRUE(z.is_cuda());
  EXPECT_TRUE(glass::equal(z.cpu(), glass::zeros({2, 3})));
  Tensor f =
      glass::full({4}, 2.5, glass::TensorOptions().dtype(glass::kDouble).device(glass::kCUDA));
  EXPECT_TRUE(glass::equal(f.cpu(), glass::full({4}, 2.5, glass::kDouble)));
  Tensor o = glass::ones_like(z);
  EXPECT_TRUE(o.is_cuda());
  Tensor t = z.t();
  t.fill_(7);  // a strided fill
  EXPECT_TRUE(glass::equal(z.cpu(), glass::full({2, 3}, 7.0)));
}

TEST_F(CudaOps, InPlaceOpsAndDtypeConversionOnTheDevice) {
  Tensor x = cpu_arange(5);
  Tensor xd = x.cuda();
  xd.add_(1).mul_(2);
  EXPECT_TRUE(glass::equal(xd.cpu(), (x + 1) * 2));
  Tensor d = xd.to(glass::kDouble);
  EXPECT_TRUE(d.is_cuda());
  EXPECT_EQ(d.dtype(), glass::kDouble);
  EXPECT_TRUE(glass::equal(d.cpu(), ((x + 1) * 2).to(glass::kDouble)));
  // A host tensor of another dtype copied into a device tensor (converted on the way).
  Tensor target =
      glass::zeros({5}, glass::TensorOptions().dtype(glass::kLong).device(glass::kCUDA));
  target.copy_(x);
  EXPECT_TRUE(glass::equal(target.cpu(), x.to(glass::kLong)));
}

TEST_F(CudaOps, ItemAndPrintingReadTheDevice) {
  Tensor x = glass::tensor({1.5f, 2.5f}).cuda();
  EXPECT_FLOAT_EQ((x * 2).select(0, 1).item<float>(), 5.0f);
  std::ostringstream os;
  os << x;
  EXPECT_NE(os.str().find("1.5000"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("cuda:0"), std::string::npos) << os.str();
}

TEST_F(CudaOps, CopiesBetweenTwoDevices) {
  if (glass::cuda::device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  Tensor x = cpu_arange(8).view({2, 4});
  Tensor d0 = x.cuda();
  Tensor d1 = d0.to(Device(glass::kCUDA, 1));
  EXPECT_EQ(d1.device(), Device(glass::kCUDA, 1));
  EXPECT_TRUE(glass::equal(d1.cpu(), x));
  // Strided, with a dtype change, across devices.
  Tensor back =
      glass::zeros({4, 2}, glass::TensorOptions().dtype(glass::kDouble).device(glass::kCUDA));
  back.copy_(d1.t());
  EXPECT_TRUE(glass::equal(back.cpu(), x.t().to(glass::kDouble)));
}

// ---- bad input: clear errors, nothing changed ---------------------------------------------

TEST_F(CudaOps, MixingDevicesNamesBoth) {
  if (glass::cuda::device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  Tensor c = cpu_arange(3);
  Tensor d = c.cuda();
  std::string msg = error_of([&] { (void)(c + d); });
  EXPECT_NE(msg.find("cpu"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cuda:0"), std::string::npos) << msg;
  Tensor d1 = c.to(Device(glass::kCUDA, 1));
  msg = error_of([&] { (void)(d + d1); });
  EXPECT_NE(msg.find("cuda:0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cuda:1"), std::string::npos) << msg;
}

TEST_F(CudaOps, DeviceThatDoesNotExist) {
  std::string msg = error_of([] { (void)glass::empty({2}, Device(glass::kCUDA, 5)); });
  EXPECT_NE(msg.find("cuda:5 does not exist"), std::string::npos) << msg;
}

TEST_F(CudaOps, HostAccessorOfADeviceTensorIsAnError) {
  Tensor d = cpu_arange(4).cuda();
  std::string msg = error_of([&] { (void)d.accessor<float, 1>(); });
  EXPECT_NE(msg.find("cuda:0"), std::string::npos) << msg;
  EXPECT_NE(msg.find(".cpu()"), std::string::npos) << msg;
}

TEST_F(CudaOps, PinMemoryOfADeviceTensorIsAnError) {
  Tensor d = cpu_arange(4).cuda();
  std::string msg = error_of([&] { (void)d.pin_memory(); });
  EXPECT_NE(msg.find("cuda:0"), std::string::npos) << msg;
}

// The simulator keeps device memory unreadable from the host, as a GPU does: a missing
// copy crashes here, in CI, rather than on a student's first real GPU.
TEST_F(CudaOps, HostDereferenceOfDeviceMemoryFaults) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Tensor d = cpu_arange(4).cuda();
  const float* p = static_cast<const float*>(d.data_ptr());
  EXPECT_DEATH(
      {
        volatile float v = p[0];
        (void)v;
      },
      "");
}

}  // namespace
