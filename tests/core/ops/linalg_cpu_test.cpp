// tests/core/ops/linalg_cpu_test.cpp — the CPU matmul's thread safety: each caller gets its
// own packing buffers while another holds the intra-op pool. CPU binaries only; the
// values tests, run on every device, are in linalg_test.cpp.
#include "core/ops/linalg.h"

#include <thread>

#include "../test_util.h"

namespace glass {
namespace {

// Several user threads at once: each gets its own packing buffers and, while one of
// them holds the intra-op pool, the others run serially — results must not change.
TEST(Linalg, ConcurrentCallersGetTheSameResults) {
  Tensor a = testing::random_tensor({96, 80}, kFloat32, 7),
         b = testing::random_tensor({80, 72}, kFloat32, 8);
  Tensor want = a.mm(b);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      bool good = true;
      for (int i = 0; i < 20; ++i) {
        Tensor got = a.mm(b) + 0;
        good = good && testing::close(got, want, 0, 0);
      }
      ok[t] = good;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, std::vector<int>(4, 1));
}

}  // namespace
}  // namespace glass
