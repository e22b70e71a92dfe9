// tests/core/ops/join_test.cpp — cat, stack, split, chunk.
#include "core/ops/join.h"

#include "../device_test.h"
#include "../test_util.h"

namespace glass {
namespace {

using testing::close;

class Join : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(Join);

TEST_P(Join, CatAndStack) {
  Tensor a = on(tensor({{1., 2.}})), b = on(tensor({{3., 4.}, {5., 6.}}));
  EXPECT_TRUE(close(cat({a, b}), {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(close(cat({b, b.t()}, 1), {3, 4, 3, 5, 5, 6, 4, 6}));
  EXPECT_EQ(cat({on(tensor({1})), on(tensor({2.5}))}).dtype(),
            kFloat32);                                             // promotes like torch.cat
  EXPECT_EQ(cat({zeros({0}, opts()), b}).sizes(), (Shape{2, 2}));  // legacy empty is skipped
  Tensor s = stack({a.squeeze(), b.select(0, 1)}, 1);
  EXPECT_EQ(s.sizes(), (Shape{2, 2}));
  EXPECT_TRUE(close(s, {1, 5, 2, 6}));
  EXPECT_GLASS_ERROR(cat({a, on(tensor({{1., 2., 3.}}))}), "must match except in dimension 0",
                     "Expected size 2 but got size 3", "tensor number 1");
  EXPECT_GLASS_ERROR(stack({a, b}), "equal size");
  EXPECT_GLASS_ERROR(cat({scalar_tensor(1.0, opts())}), "zero-dimensional");
}

TEST_P(Join, SplitAndChunkAreViews) {
  Tensor x = arange(10, opts(kFloat));
  auto parts = x.split(4);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].numel(), 2);
  EXPECT_TRUE(parts[1].is_alias_of(x));
  EXPECT_TRUE(close(parts[1], {4, 5, 6, 7}));
  auto sized = x.split(IntArrayRef{3, 7});
  EXPECT_EQ(sized[1].numel(), 7);
  auto ch = x.chunk(3);  // torch.chunk(10, 3) -> sizes 4, 4, 2
  ASSERT_EQ(ch.size(), 3u);
  EXPECT_EQ(ch[0].numel(), 4);
  EXPECT_EQ(ch[2].numel(), 2);
  EXPECT_GLASS_ERROR(x.split(IntArrayRef{3, 3}), "sum to 6");
  EXPECT_GLASS_ERROR(x.chunk(0), "greater than 0");
}

}  // namespace
}  // namespace glass
