// tests/core/ops/views_test.cpp — every view shares storage; strides match PyTorch.
#include "core/ops/views.h"

#include "../device_test.h"
#include "../test_util.h"

namespace glass {
namespace {

using testing::close;
using testing::ref_at;

class Views : public testing::DeviceTest {};
GLASS_INSTANTIATE_DEVICE_TESTS(Views);

struct ViewCase {
  const char* name;
  std::function<Tensor(const Tensor&)> f;
  Shape sizes, strides;
  int64_t offset;
};

// x = arange(24).view(2, 3, 4): strides [12, 4, 1]. Expected metadata is what PyTorch
// reports for the same call.
TEST_P(Views, EveryViewSharesStorageWithTheExpectedMetadata) {
  Tensor x = arange(24, opts(kFloat)).view({2, 3, 4});
  std::vector<ViewCase> cases = {
      {"view",
       [](const Tensor& t) {
         return t.view({6, 4});
       },
       {6, 4},
       {4, 1},
       0},
      {"reshape (no copy)",
       [](const Tensor& t) {
         return t.reshape({4, -1});
       },
       {4, 6},
       {6, 1},
       0},
      {"transpose", [](const Tensor& t) { return t.transpose(0, 2); }, {4, 3, 2}, {1, 4, 12}, 0},
      {"permute",
       [](const Tensor& t) {
         return t.permute({2, 0, 1});
       },
       {4, 2, 3},
       {1, 12, 4},
       0},
      {"expand",
       [](const Tensor& t) {
         return t.narrow(0, 0, 1).expand({5, 3, 4});
       },
       {5, 3, 4},
       {0, 4, 1},
       0},
      {"narrow", [](const Tensor& t) { return t.narrow(2, 1, 2); }, {2, 3, 2}, {12, 4, 1}, 1},
      {"slice step 2",
       [](const Tensor& t) { return t.slice(2, 1, 4, 2); },
       {2, 3, 2},
       {12, 4, 2},
       1},
      {"select", [](const Tensor& t) { return t.select(1, -1); }, {2, 4}, {12, 1}, 8},
      {"unsqueeze",
       [](const Tensor& t) { return t.unsqueeze(1); },
       {2, 1, 3, 4},
       {12, 12, 4, 1},
       0},
      {"squeeze",
       [](const Tensor& t) { return t.unsqueeze(0).squeeze(); },
       {2, 3, 4},
       {12, 4, 1},
       0},
      {"squeeze(dim)",
       [](const Tensor& t) { return t.unsqueeze(2).squeeze(2); },
       {2, 3, 4},
       {12, 4, 1},
       0},
      {"flatten", [](const Tensor& t) { return t.flatten(1); }, {2, 12}, {12, 1}, 0},
      {"unflatten",
       [](const Tensor& t) {
         return t.unflatten(2, {2, 2});
       },
       {2, 3, 2, 2},
       {12, 4, 2, 1},
       0},
      {"as_strided",
       [](const Tensor& t) {
         return t.as_strided({3, 3}, {1, 1}, 2);
       },
       {3, 3},
       {1, 1},
       2},
      {"diagonal", [](const Tensor& t) { return t.diagonal(1, 1, 2); }, {2, 3}, {12, 5}, 1},
      {"unfold", [](const Tensor& t) { return t.unfold(2, 2, 2); }, {2, 3, 2, 2}, {12, 4, 2, 1}, 0},
      {"t of 2-D", [](const Tensor& t) { return t.select(0, 1).t(); }, {4, 3}, {1, 4}, 12},
      {"movedim", [](const Tensor& t) { return t.movedim(0, 2); }, {3, 4, 2}, {4, 1, 12}, 0},
      {"detach", [](const Tensor& t) { return t.detach(); }, {2, 3, 4}, {12, 4, 1}, 0},
      {"contiguous (already)",
       [](const Tensor& t) { return t.contiguous(); },
       {2, 3, 4},
       {12, 4, 1},
       0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor v = c.f(x);
    EXPECT_TRUE(v.is_alias_of(x));
    EXPECT_EQ(v.sizes(), c.sizes);
    EXPECT_EQ(v.strides(), c.strides);
    EXPECT_EQ(v.storage_offset(), c.offset);
  }
}

TEST_P(Views, WritesThroughAViewAreSeenByTheBase) {
  Tensor x = zeros({3, 4}, opts());
  x.t().select(0, 1).fill_(7);  // column 1 of x
  EXPECT_TRUE(close(x.select(1, 1), {7, 7, 7}));
  EXPECT_EQ(x.sum().item<float>(), 21.0f);
}

TEST_P(Views, ContiguousCopiesExactlyWhenTheStridesDemandIt) {
  Tensor x = arange(12, opts(kFloat)).view({3, 4});
  EXPECT_TRUE(x.contiguous().is_same(x));
  Tensor t = x.t();
  Tensor c = t.contiguous();
  EXPECT_FALSE(c.is_alias_of(x));
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.strides(), (Shape{3, 1}));
  EXPECT_TRUE(close(c, t));
  EXPECT_TRUE(x.narrow(0, 1, 2).contiguous().is_alias_of(x));  // row slices stay contiguous
  // reshape copies only when no view exists.
  EXPECT_TRUE(x.reshape({12}).is_alias_of(x));
  EXPECT_FALSE(t.reshape({12}).is_alias_of(x));
  EXPECT_TRUE(close(t.reshape({12}), {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

TEST_P(Views, ValuesFollowTheAddressFormula) {
  Tensor x = arange(24, opts(kFloat)).view({2, 3, 4});
  Tensor p = x.permute({2, 0, 1});
  // p[3, 1, 2] = x[1, 2, 3] = 1*12 + 2*4 + 3 = 23
  EXPECT_EQ(ref_at(p, {3, 1, 2}), 23);
  EXPECT_EQ(storage_index(p, {3, 1, 2}), 23);
  Tensor d = x.select(0, 0).diagonal();  // [0, 5, 10]
  EXPECT_TRUE(close(d, {0, 5, 10}));
  Tensor w = arange(5, opts(kFloat)).unfold(0, 3, 1);  // sliding windows
  EXPECT_TRUE(close(w, {0, 1, 2, 1, 2, 3, 2, 3, 4}));
  EXPECT_TRUE(close(x.slice(2, -2), {2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23}));
}

TEST_P(Views, BroadcastTensorsExpands) {
  auto b = broadcast_tensors({ones({3, 1}, opts()), ones({4}, opts())});
  EXPECT_EQ(b[0].sizes(), (Shape{3, 4}));
  EXPECT_EQ(b[0].strides(), (Shape{1, 0}));
  EXPECT_EQ(b[1].strides(), (Shape{0, 1}));
}

}  // namespace
}  // namespace glass
