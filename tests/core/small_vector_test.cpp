// tests/core/small_vector_test.cpp — inline storage, growth to the heap, copies and moves.
#include "core/small_vector.h"

#include "test_util.h"

namespace glass {
namespace {

TEST(SmallVector, StaysInlineUpToNThenGrows) {
  SmallVector<int64_t, 3> v;
  const int64_t* inline_data = v.data();
  for (int64_t i = 0; i < 3; ++i) v.push_back(i);
  EXPECT_EQ(v.data(), inline_data);
  v.push_back(3);  // the fourth element moves everything to the heap
  EXPECT_NE(v.data(), inline_data);
  EXPECT_EQ(v.vec(), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(SmallVector, CopiesMovesInsertAndErase) {
  SmallVector<int64_t, 2> a = {1, 2, 3, 4};  // heap
  SmallVector<int64_t, 2> b = a;
  b[0] = 9;
  EXPECT_EQ(a[0], 1);
  SmallVector<int64_t, 2> c = std::move(b);
  EXPECT_EQ(c.vec(), (std::vector<int64_t>{9, 2, 3, 4}));
  EXPECT_TRUE(b.empty());
  c.insert(c.begin() + 1, 7);
  c.erase(c.begin());
  EXPECT_EQ(c.vec(), (std::vector<int64_t>{7, 2, 3, 4}));
  SmallVector<int64_t, 4> small = {5};
  SmallVector<int64_t, 4> moved = std::move(small);  // inline: copied, source emptied
  EXPECT_EQ(moved.vec(), (std::vector<int64_t>{5}));
  EXPECT_TRUE(DimVector({1, 2}) == std::vector<int64_t>({1, 2}));
  EXPECT_EQ(IntArrayRef(DimVector({3, 4})).size(), 2u);
}

}  // namespace
}  // namespace glass
