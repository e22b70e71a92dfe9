// tests/core/ops/indexing_test.cpp — advanced indexing, gather/scatter, masks.
//
// Every test runs on each device (device_test.h). A bad index is found by the kernel
// (Note [Index errors are found by the kernel], core/device_kernels.h): at once on the
// CPU, at the next sync point on a CUDA device. So each expected index error reads the
// result back with .cpu() inside the throwing statement — a no-op on the CPU, the sync
// that reports the error on CUDA — and no error is left pending for the next test. That
// the CPU writes nothing before it throws is a CPU-only promise: indexing_cpu_test.cpp.
#include "core/ops/indexing.h"

#include "../device_test.h"
#include "../test_util.h"

namespace glass {
namespace {

using testing::close;

class Indexing : public testing::DeviceTest {
 protected:
  Tensor x34() const { return arange(12, opts(kFloat)).view({3, 4}); }
};
GLASS_INSTANTIATE_DEVICE_TESTS(Indexing);

TEST_P(Indexing, IndexSelectPicksRowsOrColumns) {
  EXPECT_TRUE(close(x34().index_select(0, on(tensor({2, 0}))), {8, 9, 10, 11, 0, 1, 2, 3}));
  EXPECT_TRUE(close(x34().index_select(1, on(tensor({3, 3}))), {3, 3, 7, 7, 11, 11}));
  EXPECT_EQ(x34().index_select(1, on(tensor({3, 3}))).sizes(), (Shape{3, 2}));
  EXPECT_GLASS_ERROR(x34().index_select(0, on(tensor({3}))).cpu(), "index 3 is out of bounds",
                     "dimension 0", "size 3");
}

TEST_P(Indexing, GatherAndScatterAdd) {
  Tensor x = x34();
  Tensor idx = on(tensor({{0, 0}, {3, 1}, {2, 2}}));
  EXPECT_TRUE(close(x.gather(1, idx), {0, 0, 7, 5, 10, 10}));
  EXPECT_TRUE(close(x.gather(0, on(tensor({{2, 1, 0, 0}}))), {8, 5, 2, 3}));
  // scatter_add with repeated indices accumulates: torch gives [3, 0, 3].
  EXPECT_TRUE(
      close(zeros({3}, opts()).scatter_add(0, on(tensor({0, 0, 2})), on(tensor({1., 2., 3.}))),
            {3, 0, 3}));
  Tensor acc = zeros({2, 3}, opts());
  acc.scatter_add_(1, on(tensor({{0, 0}, {2, 1}})), ones({2, 2}, opts()));
  EXPECT_TRUE(close(acc, {2, 0, 0, 0, 1, 1}));
  EXPECT_GLASS_ERROR(x.gather(1, on(tensor({{4}}))).cpu(), "index 4 is out of bounds");
  EXPECT_GLASS_ERROR(x.gather(1, on(tensor({1, 2}))), "same number of dimensions");
}

TEST_P(Indexing, AdvancedIndexingWithLongTensors) {
  Tensor x = x34();
  EXPECT_TRUE(close(x.index({on(tensor({0, 2})), on(tensor({1, 3}))}), {1, 11}));  // pairs
  EXPECT_TRUE(close(x.index({on(tensor({-1}))}), {8, 9, 10, 11}));                 // negative wraps
  EXPECT_EQ(x.index({Tensor(), on(tensor({{0, 1}, {2, 3}}))}).sizes(), (Shape{3, 2, 2}));
  Tensor y = arange(24, opts(kFloat)).view({2, 3, 4});
  // Separated advanced indices move the indexed dims to the front (NumPy's rule).
  Tensor i01 = on(tensor({0, 1}));
  EXPECT_EQ(y.index({i01, Tensor(), i01}).sizes(), (Shape{2, 3}));
  EXPECT_TRUE(close(y.index({i01, Tensor(), i01}), {0, 4, 8, 13, 17, 21}));
}

TEST_P(Indexing, BooleanMasksReadAndWrite) {
  Tensor input = on(tensor({-1., 2., -3., 4.}));
  Tensor grad_input = ones({4}, opts());
  // The seed's `grad_input[input < 0] = 0`:
  grad_input.index_put_({input < 0}, 0);
  EXPECT_TRUE(close(grad_input, {0, 1, 0, 1}));
  EXPECT_TRUE(close(input.index({input > 0}), {2, 4}));
  EXPECT_TRUE(close(x34().masked_select(x34() > 8), {9, 10, 11}));
  Tensor m = zeros({2, 2}, opts());
  m.index_put_({on(tensor({{true, false}, {false, true}}))}, on(tensor({5., 6.})));
  EXPECT_TRUE(close(m, {5, 0, 0, 6}));
  EXPECT_GLASS_ERROR(input.index({on(tensor({true, false}))}), "shape of the mask [2]");
}

TEST_P(Indexing, IndexPutAccumulatesDuplicates) {
  Tensor t = zeros({3}, opts());
  t.index_put_({on(tensor({0, 0, 2}))}, on(tensor({1., 1., 5.})), true);
  EXPECT_TRUE(close(t, {2, 0, 5}));
  EXPECT_GLASS_ERROR(t.index_put_({on(tensor({0, 1}))}, on(tensor({1., 2., 3.}))),
                     "shape mismatch");
}

// Each op names itself and the user's dim in the message, on every device.
TEST_P(Indexing, BadIndexIsAnErrorNamingTheOpAndDim) {
  Tensor t = arange(6, opts(kFloat));
  EXPECT_GLASS_ERROR(t.index_put_({on(tensor({0, 1, 6, 2}))}, on(tensor({9., 9., 9., 9.}))).cpu(),
                     "index_put_(): index 6 is out of bounds for dimension 0 with size 6");
  EXPECT_GLASS_ERROR(t.index_put_({on(tensor({-7, 0}))}, on(tensor({1., 1.})), true).cpu(),
                     "index -7");
  EXPECT_GLASS_ERROR(t.scatter_add_(0, on(tensor({0, -1})), on(tensor({1., 1.}))).cpu(),
                     "scatter_add_(): index -1 is out of bounds");  // scatter never wraps
  Tensor x = x34();
  EXPECT_GLASS_ERROR(x.index({Tensor(), on(tensor({{0, 4}}))}).cpu(),
                     "index(): index 4 is out of bounds for dimension 1 with size 4");
  // Separated indices are permuted to the front; the message names the user's dim.
  Tensor y = arange(24, opts(kFloat)).view({2, 3, 4});
  EXPECT_GLASS_ERROR(y.index({on(tensor({0})), Tensor(), on(tensor({5}))}).cpu(),
                     "dimension 2 with size 4");
  EXPECT_GLASS_ERROR(x.index_select(1, on(tensor({-1}))).cpu(), "index_select(): index -1");
  // The device keeps working after an error, and the index wraps here.
  EXPECT_TRUE(close(x.index({on(tensor({-1})), on(tensor({-4}))}), {8}));
}

TEST_P(Indexing, Nonzero) {
  Tensor nz = on(tensor({{0, 1}, {2, 0}})).nonzero();
  EXPECT_EQ(nz.sizes(), (Shape{2, 2}));
  EXPECT_TRUE(close(nz, {0, 1, 1, 0}));
  EXPECT_EQ(zeros({3}, opts()).nonzero().sizes(), (Shape{0, 1}));
}

}  // namespace
}  // namespace glass
