// Tests for indexing on the CUDA backend (cuda/kernels/index.cu): index, index_put_,
// gather, scatter_add, index_select, embedding and cat on kCUDA, each compared with the
// CPU backend on the same inputs; bad indices found by the kernel and reported at the
// next sync point (cuda/device_error.h); deterministic accumulation.
#include <gtest/gtest.h>

#include <glass/glass.h>

#include "cuda/backend/backend_test_util.h"

#include <string>
#include <vector>

#include "cuda/sim/sim_runtime.h"
#include "nn/functional/embedding.h"
#include "nn/functional/loss.h"

namespace {

using glass::cuda::testing::error_of;

using glass::Tensor;

class CudaIndex : public ::testing::Test {
 protected:
  void SetUp() override { glass::cuda::testing::use_simulator_unless_gpu(); }
  void TearDown() override { glass::use_deterministic_algorithms(false); }
};

Tensor longs(std::vector<int64_t> v) { return glass::tensor(v).to(glass::kLong); }

Tensor x34() { return glass::arange(12).to(glass::kFloat).view({3, 4}); }

// The CUDA result brought back, equal to the CPU's bit for bit.
void expect_same(const Tensor& cuda, const Tensor& cpu) {
  ASSERT_TRUE(cuda.is_cuda());
  Tensor back = cuda.cpu();
  EXPECT_EQ(back.sizes(), cpu.sizes());
  EXPECT_EQ(back.dtype(), cpu.dtype());
  EXPECT_TRUE(glass::equal(back, cpu)) << "cuda:\n" << back << "\ncpu:\n" << cpu;
}

TEST_F(CudaIndex, IndexMatchesCpuWithNegativeAndBroadcastIndices) {
  Tensor x = x34();
  Tensor xc = x.cuda();
  // One index tensor, with negative values (wrapped by the kernel).
  expect_same(xc.index({longs({2, -1, 0, -3})}), x.index({longs({2, -1, 0, -3})}));
  // Two index tensors broadcast against each other: (2, 1) and (3,) -> (2, 3).
  Tensor rows = longs({0, -1}).view({2, 1}), cols = longs({3, 1, -4});
  expect_same(xc.index({rows.cuda(), cols.cuda()}), x.index({rows, cols}));
  // CPU indices of a CUDA tensor are copied over, as in PyTorch.
  expect_same(xc.index({Tensor(), cols}), x.index({Tensor(), cols}));
  // A non-contiguous source, and separated indices on 3-D (the result dims move first).
  expect_same(xc.t().index({longs({1, 3}).cuda()}), x.t().index({longs({1, 3})}));
  Tensor y = glass::arange(24).to(glass::kDouble).view({2, 3, 4});
  Tensor a = longs({0, 1, -1}), b = longs({3, -2, 0});
  expect_same(y.cuda().index({a.cuda(), Tensor(), b.cuda()}), y.index({a, Tensor(), b}));
  for (glass::ScalarType t : {glass::kBool, glass::kInt, glass::kLong, glass::kDouble}) {
    Tensor z = x.to(t);
    expect_same(z.cuda().index({longs({2, 0})}), z.index({longs({2, 0})}));
  }
}

TEST_F(CudaIndex, IndexPutStoresAndAccumulatesLikeTheCpu) {
  Tensor base = x34();
  // Plain store, broadcast values, negative indices, non-contiguous destination.
  Tensor cpu = base.clone(), dev = base.cuda();
  cpu.index_put_({longs({0, -1})}, glass::tensor({7.0f, 8.0f, 9.0f, 10.0f}));
  dev.index_put_({longs({0, -1}).cuda()}, glass::tensor({7.0f, 8.0f, 9.0f, 10.0f}).cuda());
  expect_same(dev, cpu);
  Tensor cpu_t = base.clone(), dev_t = base.cuda();
  cpu_t.t().index_put_({longs({1})}, glass::tensor({-1.0f, -2.0f, -3.0f}));
  dev_t.t().index_put_({longs({1}).cuda()}, glass::tensor({-1.0f, -2.0f, -3.0f}).cuda());
  expect_same(dev_t, cpu_t);
  // Accumulate with duplicates, every dtype that adds exactly.
  for (glass::ScalarType t : {glass::kInt, glass::kLong, glass::kBool}) {
    Tensor c = glass::zeros({5}, t), d = glass::zeros({5}, t).cuda();
    Tensor idx = longs({0, 3, 3, -2, 0, 0, 4});
    Tensor v = glass::arange(7).to(t);
    c.index_put_({idx}, v, true);
    d.index_put_({idx.cuda()}, v.cuda(), true);
    expect_same(d, c);
  }
}

TEST_F(CudaIndex, AccumulatedFloatSumsAreCloseAndBitwiseInDeterministicMode) {
  glass::manual_seed(7);
  // 3000 values into 3 slots: atomics add them in a scheduler-chosen order.
  Tensor idx = glass::randint(0, 3, {3000}, glass::TensorOptions(glass::kLong));
  Tensor v = glass::randn({3000});
  Tensor cpu = glass::zeros({3});
  cpu.index_put_({idx}, v, true);
  Tensor dev = glass::zeros({3}).cuda();
  dev.index_put_({idx.cuda()}, v.cuda(), true);
  EXPECT_TRUE(glass::allclose(dev.cpu(), cpu, 1e-4, 1e-4)) << dev.cpu() << cpu;

  glass::use_deterministic_algorithms(true);
  EXPECT_TRUE(glass::are_deterministic_algorithms_enabled());
  Tensor det = glass::zeros({3}).cuda();
  det.index_put_({idx.cuda()}, v.cuda(), true);
  expect_same(det, cpu);  // the CPU's serial order, bit for bit
  Tensor sc = glass::zeros({3}).cuda().scatter_add(0, idx.cuda(), v.cuda());
  expect_same(sc, glass::zeros({3}).scatter_add(0, idx, v));
  // Without accumulation the last of the duplicates wins, as in the CPU's loop.
  Tensor stored_cpu = glass::zeros({3}), stored = glass::zeros({3}).cuda();
  stored_cpu.index_put_({idx}, v, false);
  stored.index_put_({idx.cuda()}, v.cuda(), false);
  expect_same(stored, stored_cpu);
  glass::use_deterministic_algorithms(false);
}

TEST_F(CudaIndex, BoolAccumulationIsALogicalOr) {
  Tensor idx = longs({0, 2, 2, 2, 5, 0});
  Tensor v = glass::tensor({1, 0, 1, 1, 0, 0}).to(glass::kBool);
  Tensor cpu = glass::zeros({7}, glass::kBool);
  cpu.index_put_({idx}, v, true);
  Tensor dev = glass::zeros({7}, glass::kBool).cuda();
  dev.index_put_({idx.cuda()}, v.cuda(), true);
  expect_same(dev, cpu);  // [1, 0, 1, 0, 0, 0, 0]
}

TEST_F(CudaIndex, GatherScatterAddIndexSelectAndEmbedding) {
  Tensor x = x34();
  Tensor idx = longs({0, 0, 3, 1, 2, 2}).view({3, 2});
  expect_same(x.cuda().gather(1, idx.cuda()), x.gather(1, idx));
  Tensor idx0 = longs({2, 1, 0, 0}).view({1, 4});
  expect_same(x.cuda().gather(0, idx0.cuda()), x.gather(0, idx0));
  expect_same(x.t().cuda().gather(0, idx.t().contiguous().cuda()),
              x.t().gather(0, idx.t().contiguous()));
  Tensor src = glass::ones({2, 2});
  Tensor sidx = longs({0, 0, 2, 1}).view({2, 2});
  expect_same(glass::zeros({2, 3}).cuda().scatter_add(1, sidx.cuda(), src.cuda()),
              glass::zeros({2, 3}).scatter_add(1, sidx, src));
  expect_same(x.cuda().index_select(1, longs({3, 0, 3}).cuda()),
              x.index_select(1, longs({3, 0, 3})));
  Tensor w = glass::randn({5, 3});
  Tensor tokens = longs({4, 0, 2, 2}).view({2, 2});
  namespace F = glass::nn::functional;
  expect_same(F::embedding(tokens.cuda(), w.cuda()), F::embedding(tokens, w));
}

TEST_F(CudaIndex, CatWorksOnCuda) {
  Tensor a = x34(), b = glass::arange(8).to(glass::kFloat).view({2, 4});
  expect_same(glass::cat({a.cuda(), b.cuda()}, 0), glass::cat({a, b}, 0));
  Tensor c = glass::arange(6).to(glass::kFloat).view({3, 2});
  expect_same(glass::cat({a.cuda(), c.cuda(), a.t().t().cuda()}, 1), glass::cat({a, c, a}, 1));
  expect_same(glass::cat({a.t().cuda(), a.t().cuda()}, -1), glass::cat({a.t(), a.t()}, -1));
}

// The op returns; the error comes at the next sync point, names op, index, dim and size,
// and the device keeps working.
TEST_F(CudaIndex, OutOfRangeIndexIsReportedAtTheNextSyncPoint) {
  Tensor xc = x34().cuda();
  Tensor bad;
  EXPECT_EQ(error_of([&] { bad = xc.index({longs({1, 5}).cuda()}); }), "(no error)");
  std::string e = error_of([] { glass::cuda::synchronize(); });
  EXPECT_NE(e.find("index(): index 5 is out of bounds for dimension 0 with size 3"),
            std::string::npos)
      << e;
  EXPECT_EQ(error_of([] { glass::cuda::synchronize(); }), "(no error)");  // cleared
  // A following op gives the right result.
  expect_same(xc.index({longs({2, -3}).cuda()}), x34().index({longs({2, -3})}));

  // Through a blocking copy to the host (.cpu(), item()).
  e = error_of([&] { xc.gather(1, longs({0, 4, 1}).view({3, 1}).cuda()).cpu(); });
  EXPECT_NE(e.find("gather(): index 4 is out of bounds for dimension 1 with size 4"),
            std::string::npos)
      << e;
  e = error_of([&] { xc.index_select(0, longs({-1}).cuda()).sum().cpu(); });
  EXPECT_NE(e.find("index_select(): index -1 is out of bounds"), std::string::npos) << e;
  Tensor w = glass::zeros({5, 2}).cuda();
  e = error_of([&] { glass::nn::functional::embedding(longs({1, 7}).cuda(), w).cpu(); });
  EXPECT_NE(e.find("embedding(): index 7 is out of range for a table of 5 embeddings"),
            std::string::npos)
      << e;
  Tensor acc = glass::zeros({3}).cuda();
  acc.index_put_({longs({0, -4}).cuda()}, glass::ones({2}).cuda(), true);
  e = error_of([&] { acc.cpu(); });
  EXPECT_NE(e.find("index_put_(): index -4 is out of bounds for dimension 0 with size 3"),
            std::string::npos)
      << e;
  // Through an event and a stream synchronize.
  bad = xc.index({Tensor(), longs({9}).cuda()});
  glass::cuda::CUDAEvent ev;
  ev.record();
  e = error_of([&] { ev.synchronize(); });
  EXPECT_NE(e.find("index 9 is out of bounds for dimension 1 with size 4"), std::string::npos) << e;
  bad = xc.index({longs({-9}).cuda()});
  e = error_of([] { glass::cuda::getCurrentCUDAStream().synchronize(); });
  EXPECT_NE(e.find("index -9"), std::string::npos) << e;
  // Still working.
  expect_same(xc.gather(0, longs({2, 1, 0, 2}).view({1, 4}).cuda()),
              x34().gather(0, longs({2, 1, 0, 2}).view({1, 4})));
}

// No hidden sync: an index op on CUDA queues kernels only; the host waits for the
// device (and the error record is read) only at the sync point.
TEST_F(CudaIndex, IndexingDoesNotMakeTheHostWait) {
  if (!glass::cuda::is_simulated()) GTEST_SKIP() << "reads the simulator's timeline";
  Tensor xc = x34().cuda();
  Tensor idx = longs({2, 0, 1}).cuda();
  Tensor acc = glass::zeros({3}).cuda();
  Tensor gidx = longs({0, 3, 1}).view({3, 1}).cuda();
  Tensor ones = glass::ones({3}).cuda();  // (a blocking host->device copy is a sync point)
  glass::cuda::synchronize();
  auto& sim = glass::cuda::sim::simulator();
  sim.clear_timeline();
  Tensor y = xc.index({idx});
  Tensor g = xc.gather(1, gidx);
  acc.index_put_({idx}, ones, true);
  Tensor s = xc.index_select(1, idx);
  auto dtoh_or_wait = [&] {
    int n = 0;
    for (const auto& r : sim.timeline())
      if (r.host_waited || (r.kind == glass::cuda::sim::OpKind::Copy &&
                            r.copy_kind == glass::cuda::CopyKind::DeviceToHost))
        ++n;
    return n;
  };
  EXPECT_EQ(dtoh_or_wait(), 0);
  expect_same(y, x34().index({longs({2, 0, 1})}));
  EXPECT_GE(dtoh_or_wait(), 1);
  // Once checked, an ordinary sync point reads nothing back: it costs nothing extra.
  glass::cuda::synchronize();
  sim.clear_timeline();
  glass::cuda::synchronize();
  Tensor z = (xc + 1).cpu();
  int copies = 0;
  for (const auto& r : sim.timeline()) copies += r.kind == glass::cuda::sim::OpKind::Copy;
  EXPECT_EQ(copies, 1);  // z's own copy, no read of the error record
}

// Each stream has its own error record: an error is reported when the stream whose op
// made it is synchronized, and the stream-race checker (GLASS_SIM_CHECK=1) sees no race.
TEST_F(CudaIndex, EachStreamReportsItsOwnErrors) {
  Tensor x = x34();
  Tensor xc = x.cuda();
  Tensor good = longs({1, 2}).cuda(), bad = longs({3}).cuda();
  glass::cuda::synchronize();
  auto s1 = glass::cuda::getStreamFromPool(), s2 = glass::cuda::getStreamFromPool();
  Tensor a, b;
  {
    glass::cuda::CUDAStreamGuard g(s1);
    a = xc.index({good});
  }
  {
    glass::cuda::CUDAStreamGuard g(s2);
    b = xc.index({bad});
  }
  EXPECT_EQ(error_of([&] { s1.synchronize(); }), "(no error)");
  std::string e = error_of([&] { s2.synchronize(); });
  EXPECT_NE(e.find("index 3 is out of bounds for dimension 0 with size 3"), std::string::npos) << e;
  glass::cuda::synchronize();
  expect_same(a, x.index({longs({1, 2})}));
}

TEST_F(CudaIndex, MasksAndClassLossesOnCuda) {
  Tensor x = x34();
  Tensor mask = x.t().contiguous().t() > 6.0;
  expect_same(x.cuda().index({mask.cuda()}), x.index({mask}));
  Tensor cpu = x.clone(), dev = x.cuda();
  cpu.index_put_({mask}, -1.0);
  dev.index_put_({mask.cuda()}, -1.0);
  expect_same(dev, cpu);

  namespace F = glass::nn::functional;
  Tensor logits = glass::randn({4, 5}).to(glass::kDouble);
  Tensor target = longs({0, 4, -100, 2});
  Tensor want = F::cross_entropy(logits, target);
  Tensor got = F::cross_entropy(logits.cuda(), target.cuda()).cpu();
  EXPECT_TRUE(glass::allclose(got, want, 1e-12, 1e-12)) << got << want;
  std::string e = error_of([&] {
    F::cross_entropy(logits.cuda(), longs({0, 5, 1, 1}).cuda()).cpu();
  });
  EXPECT_NE(e.find("cross_entropy(): target 5 is out of bounds"), std::string::npos) << e;
  EXPECT_NE(e.find("[0, 5)"), std::string::npos) << e;
}

}  // namespace
