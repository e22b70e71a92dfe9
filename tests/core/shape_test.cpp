// tests/core/shape_test.cpp — stride arithmetic, checked by hand-worked examples.
#include "core/shape.h"

#include "test_util.h"

namespace glass {
namespace {

TEST(Shape, ContiguousStridesAreRowMajor) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({}), Shape{});
  EXPECT_EQ(contiguous_strides({3, 0, 2}), (Shape{2, 2, 1}));  // size-0 dims count as 1
}

TEST(Shape, AddressFormulaWorkedByHand) {
  // A 3x4 row-major tensor at offset 2: element (1, 2) is at 2 + 1*4 + 2*1 = 8.
  EXPECT_EQ(storage_index({3, 4}, {4, 1}, 2, {1, 2}), 8);
  // Its transpose (4x3, strides [1, 4]): element (2, 1) is the same element.
  EXPECT_EQ(storage_index({4, 3}, {1, 4}, 2, {2, 1}), 8);
  // Negative indices wrap: (-1, -1) of the 3x4 is (2, 3).
  EXPECT_EQ(storage_index({3, 4}, {4, 1}, 0, {-1, -1}), 11);
  EXPECT_GLASS_ERROR(storage_index({3, 4}, {4, 1}, 0, {3, 0}), "index 3", "dim 0", "size 3");
  EXPECT_GLASS_ERROR(storage_index({3, 4}, {4, 1}, 0, {1}), "2 entries");
}

TEST(Shape, BroadcastShapesFollowNumPy) {
  EXPECT_EQ(broadcast_shapes({2, 1, 4}, {3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {5}), (Shape{5}));
  EXPECT_EQ(broadcast_shapes({0}, {1}), (Shape{0}));
  EXPECT_GLASS_ERROR(broadcast_shapes({2, 3}, {4}, "add"), "add()", "[2, 3]", "[4]", "dim 1", "3",
                     "4");
}

TEST(Shape, WrapDim) {
  EXPECT_EQ(wrap_dim(-1, 3, "op"), 2);
  EXPECT_EQ(wrap_dim(0, 0, "op"), 0);
  EXPECT_EQ(wrap_dim(-1, 0, "op"), 0);
  EXPECT_GLASS_ERROR(wrap_dim(3, 3, "sum"), "sum()", "[-3, 2]", "got 3");
}

TEST(Shape, InferSize) {
  EXPECT_EQ(infer_size({-1, 3}, 12, "view"), (Shape{4, 3}));
  EXPECT_GLASS_ERROR(infer_size({-1, -1}, 12, "view"), "only one dimension");
  EXPECT_GLASS_ERROR(infer_size({5, -1}, 12, "view"), "invalid for input of size 12");
  EXPECT_GLASS_ERROR(infer_size({5, 3}, 12, "reshape"), "[5, 3]", "size 12");
}

TEST(Shape, ViewStridesSplitAndMergeContiguousChunks) {
  // Contiguous (2, 3, 4) -> (6, 4): mergeable.
  EXPECT_EQ(*view_strides({2, 3, 4}, {12, 4, 1}, {6, 4}), (Shape{4, 1}));
  // Transposed (3, 2) with strides (1, 3) cannot be flattened.
  EXPECT_FALSE(view_strides({3, 2}, {1, 3}, {6}).has_value());
  // But it can be split along a dim: (3, 2) -> (3, 2, 1).
  EXPECT_EQ(*view_strides({3, 2}, {1, 3}, {3, 2, 1}), (Shape{1, 3, 3}));
  // A step-2 slice of a vector can be reshaped to (2, 2) with strides (4, 2).
  EXPECT_EQ(*view_strides({4}, {2}, {2, 2}), (Shape{4, 2}));
}

TEST(Shape, ContiguityOverlapAndExtent) {
  EXPECT_TRUE(is_contiguous_layout({2, 3}, {3, 1}));
  EXPECT_FALSE(is_contiguous_layout({2, 3}, {1, 2}));
  EXPECT_TRUE(is_contiguous_layout({1, 3}, {99, 1}));  // size-1 dims do not matter
  EXPECT_TRUE(has_internal_overlap({3, 2}, {0, 1}));   // expanded
  EXPECT_FALSE(has_internal_overlap({3, 2}, {1, 3}));  // transposed
  EXPECT_TRUE(has_internal_overlap({3, 3}, {1, 1}));   // as_strided sliding window
  EXPECT_EQ(storage_extent({3, 4}, {4, 1}), (std::pair<int64_t, int64_t>{0, 11}));
  EXPECT_EQ(checked_numel({2, 3}, "op"), 6);
  EXPECT_GLASS_ERROR(checked_numel({2, -1}, "empty"), "negative size -1");
  EXPECT_GLASS_ERROR(checked_numel({1LL << 40, 1LL << 40}, "empty"), "overflow");
}

}  // namespace
}  // namespace glass
