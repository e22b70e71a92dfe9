// tests/cuda/exec/gptr_test.cpp — gptr<T> behaves as a pointer and reads through host_view.
#include "cuda/sim/gptr.h"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "exec_test_util.h"

namespace exec_test {
namespace {

static_assert(std::is_trivially_copyable_v<gptr<float>>, "passed to kernels by value, as T*");
static_assert(sizeof(gptr<float>) == sizeof(float*));
// A raw pointer does not become a gptr by accident (&p[i] is a host-view address).
static_assert(!std::is_convertible_v<float*, gptr<float>>);
static_assert(std::is_constructible_v<gptr<float>, float*>);
// Adding const converts implicitly; removing it does not convert at all.
static_assert(std::is_convertible_v<gptr<float>, gptr<const float>>);
static_assert(!std::is_constructible_v<gptr<float>, gptr<const float>>);

struct Pair {
  int a, b;
};

TEST(Gptr, NullBehavesLikeANullPointer) {
  gptr<int> p;
  EXPECT_FALSE(p);
  EXPECT_TRUE(p == nullptr);
  EXPECT_EQ(p.get(), nullptr);
  gptr<int> q = nullptr;
  EXPECT_EQ(p, q);
  try {
    (void)*p;
    FAIL() << "no error";
  } catch (const glass::Error& e) {
    EXPECT_NE(std::string(e.what()).find("null gptr"), std::string::npos) << e.what();
  }
}

TEST(Gptr, ArithmeticAndComparisonFollowTheDeviceAddress) {
  std::vector<int> v = {10, 11, 12, 13, 14};
  const gptr<int> p = dev(v);
  EXPECT_EQ(p.get(), as_device(v.data()));
  gptr<int> q = p + 3;
  EXPECT_EQ(q - p, 3);
  EXPECT_EQ(q.get(), p.get() + 3);
  EXPECT_TRUE(p < q);
  EXPECT_TRUE(q != p);
  EXPECT_EQ(*q, 13);
  EXPECT_EQ(*--q, 12);
  EXPECT_EQ(*q++, 12);
  EXPECT_EQ(*q, 13);
  q -= 2;
  EXPECT_EQ(*q, 11);
  q += 3;
  EXPECT_EQ(q[0], 14);
  EXPECT_EQ((2 + p)[1], 13);
  EXPECT_EQ((q - 4)[0], 10);
}

TEST(Gptr, ReadsAndWritesLandInTheHostView) {
  std::vector<int> v(4, 0);
  gptr<int> p = dev(v);
  p[2] = 7;
  *p = 5;
  EXPECT_EQ(v, (std::vector<int>{5, 0, 7, 0}));
  EXPECT_EQ(&p[2], v.data() + 2);  // a reference into the host view

  std::vector<Pair> pairs = {{1, 2}, {3, 4}};
  gptr<Pair> pp = dev(pairs);
  (pp + 1)->b = 40;
  EXPECT_EQ(pairs[1].b, 40);
}

TEST(Gptr, ConstConversionKeepsTheAddress) {
  std::vector<float> v = {1.5f, 2.5f};
  gptr<float> p = dev(v);
  gptr<const float> c = p;
  EXPECT_EQ(c, p);  // mixed comparison through the conversion
  EXPECT_EQ(c[1], 2.5f);
  static_assert(std::is_same_v<decltype(c[1]), const float&>);
}

}  // namespace
}  // namespace exec_test
