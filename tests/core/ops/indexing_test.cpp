// tests/core/ops/indexing_test.cpp — advanced indexing, gather/scatter, masks.
#include "core/ops/indexing.h"

#include "../test_util.h"

namespace glass {
namespace {

using testing::close;

Tensor x34() { return arange(12, kFloat).view({3, 4}); }

TEST(Indexing, IndexSelectPicksRowsOrColumns) {
  EXPECT_TRUE(close(x34().index_select(0, tensor({2, 0})), {8, 9, 10, 11, 0, 1, 2, 3}));
  EXPECT_TRUE(close(x34().index_select(1, tensor({3, 3})), {3, 3, 7, 7, 11, 11}));
  EXPECT_EQ(x34().index_select(1, tensor({3, 3})).sizes(), (Shape{3, 2}));
  EXPECT_GLASS_ERROR(x34().index_select(0, tensor({3})), "index 3 is out of bounds", "dimension 0",
                     "size 3");
}

TEST(Indexing, GatherAndScatterAdd) {
  Tensor x = x34();
  Tensor idx = tensor({{0, 0}, {3, 1}, {2, 2}});
  EXPECT_TRUE(close(x.gather(1, idx), {0, 0, 7, 5, 10, 10}));
  EXPECT_TRUE(close(x.gather(0, tensor({{2, 1, 0, 0}})), {8, 5, 2, 3}));
  // scatter_add with repeated indices accumulates: torch gives [3, 0, 3].
  EXPECT_TRUE(close(zeros({3}).scatter_add(0, tensor({0, 0, 2}), tensor({1., 2., 3.})), {3, 0, 3}));
  Tensor acc = zeros({2, 3});
  acc.scatter_add_(1, tensor({{0, 0}, {2, 1}}), ones({2, 2}));
  EXPECT_TRUE(close(acc, {2, 0, 0, 0, 1, 1}));
  EXPECT_GLASS_ERROR(x.gather(1, tensor({{4}})), "index 4 is out of bounds");
  EXPECT_GLASS_ERROR(x.gather(1, tensor({1, 2})), "same number of dimensions");
}

TEST(Indexing, AdvancedIndexingWithLongTensors) {
  Tensor x = x34();
  EXPECT_TRUE(close(x.index({tensor({0, 2}), tensor({1, 3})}), {1, 11}));  // pairs
  EXPECT_TRUE(close(x.index({tensor({-1})}), {8, 9, 10, 11}));             // negative wraps
  EXPECT_EQ(x.index({Tensor(), tensor({{0, 1}, {2, 3}})}).sizes(), (Shape{3, 2, 2}));
  Tensor y = arange(24, kFloat).view({2, 3, 4});
  // Separated advanced indices move the indexed dims to the front (NumPy's rule).
  EXPECT_EQ(y.index({tensor({0, 1}), Tensor(), tensor({0, 1})}).sizes(), (Shape{2, 3}));
  EXPECT_TRUE(close(y.index({tensor({0, 1}), Tensor(), tensor({0, 1})}), {0, 4, 8, 13, 17, 21}));
}

TEST(Indexing, BooleanMasksReadAndWrite) {
  Tensor input = tensor({-1., 2., -3., 4.});
  Tensor grad_input = ones({4});
  // The seed's `grad_input[input < 0] = 0`:
  grad_input.index_put_({input < 0}, 0);
  EXPECT_TRUE(close(grad_input, {0, 1, 0, 1}));
  EXPECT_TRUE(close(input.index({input > 0}), {2, 4}));
  EXPECT_TRUE(close(x34().masked_select(x34() > 8), {9, 10, 11}));
  Tensor m = zeros({2, 2});
  m.index_put_({tensor({{true, false}, {false, true}})}, tensor({5., 6.}));
  EXPECT_TRUE(close(m, {5, 0, 0, 6}));
  EXPECT_GLASS_ERROR(input.index({tensor({true, false})}), "shape of the mask [2]");
}

TEST(Indexing, IndexPutAccumulatesDuplicates) {
  Tensor t = zeros({3});
  t.index_put_({tensor({0, 0, 2})}, tensor({1., 1., 5.}), true);
  EXPECT_TRUE(close(t, {2, 0, 5}));
  EXPECT_GLASS_ERROR(t.index_put_({tensor({0, 1})}, tensor({1., 2., 3.})), "shape mismatch");
}

// The kernel finds a bad index (no op reads indices on the host), and on the CPU it
// checks them all before writing anything.
TEST(Indexing, BadIndexWritesNothing) {
  Tensor t = arange(6, kFloat);
  Tensor before = t.clone();
  EXPECT_GLASS_ERROR(t.index_put_({tensor({0, 1, 6, 2})}, tensor({9., 9., 9., 9.})),
                     "index_put_(): index 6 is out of bounds for dimension 0 with size 6");
  EXPECT_TRUE(equal(t, before));
  EXPECT_GLASS_ERROR(t.index_put_({tensor({-7, 0})}, tensor({1., 1.}), true), "index -7");
  EXPECT_TRUE(equal(t, before));
  EXPECT_GLASS_ERROR(t.scatter_add_(0, tensor({0, -1}), tensor({1., 1.})),
                     "scatter_add_(): index -1 is out of bounds");  // scatter never wraps
  EXPECT_TRUE(equal(t, before));
  Tensor x = x34();
  EXPECT_GLASS_ERROR(x.index({Tensor(), tensor({{0, 4}})}),
                     "index(): index 4 is out of bounds for dimension 1 with size 4");
  // Separated indices are permuted to the front; the message names the user's dim.
  Tensor y = arange(24, kFloat).view({2, 3, 4});
  EXPECT_GLASS_ERROR(y.index({tensor({0}), Tensor(), tensor({5})}), "dimension 2 with size 4");
  EXPECT_GLASS_ERROR(x.index_select(1, tensor({-1})), "index_select(): index -1");
  EXPECT_TRUE(close(x.index({tensor({-1}), tensor({-4})}), {8}));  // index wraps
}

TEST(Indexing, Nonzero) {
  Tensor nz = tensor({{0, 1}, {2, 0}}).nonzero();
  EXPECT_EQ(nz.sizes(), (Shape{2, 2}));
  EXPECT_TRUE(close(nz, {0, 1, 1, 0}));
  EXPECT_EQ(zeros({3}).nonzero().sizes(), (Shape{0, 1}));
}

}  // namespace
}  // namespace glass
