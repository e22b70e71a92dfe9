// tests/core/ops/indexing_cpu_test.cpp — the CPU's promise about bad indices: it checks
// them all before writing anything (Note [Index errors are found by the kernel],
// core/device_kernels.h). A CUDA device reports the error at the next sync point and may
// have written part of the result, so this is a CPU-only test; the messages themselves
// are tested on every device in indexing_test.cpp.
#include "core/ops/indexing.h"

#include "../test_util.h"

namespace glass {
namespace {

TEST(Indexing, BadIndexWritesNothing) {
  Tensor t = arange(6, kFloat);
  Tensor before = t.clone();
  EXPECT_GLASS_ERROR(t.index_put_({tensor({0, 1, 6, 2})}, tensor({9., 9., 9., 9.})),
                     "index_put_(): index 6 is out of bounds for dimension 0 with size 6");
  EXPECT_TRUE(equal(t, before));
  EXPECT_GLASS_ERROR(t.index_put_({tensor({-7, 0})}, tensor({1., 1.}), true), "index -7");
  EXPECT_TRUE(equal(t, before));
  EXPECT_GLASS_ERROR(t.scatter_add_(0, tensor({0, -1}), tensor({1., 1.})),
                     "scatter_add_(): index -1 is out of bounds");
  EXPECT_TRUE(equal(t, before));
}

}  // namespace
}  // namespace glass
