// tests/core/array_ref_test.cpp — IntArrayRef views lists it does not own.
#include "core/array_ref.h"

#include <sstream>

#include "test_util.h"

namespace glass {
namespace {

int64_t total(IntArrayRef a) {
  int64_t s = 0;
  for (int64_t v : a) s += v;
  return s;
}

TEST(ArrayRef, BuildsFromListsVectorsAndOneValue) {
  EXPECT_EQ(total({1, 2, 3}), 6);
  std::vector<int64_t> v = {4, 5};
  EXPECT_EQ(total(v), 9);
  int64_t one = 7;
  EXPECT_EQ(total(one), 7);
  EXPECT_EQ(IntArrayRef(v).slice(1).vec(), (std::vector<int64_t>{5}));
  EXPECT_TRUE(IntArrayRef(v) == v);
  std::ostringstream s;
  s << IntArrayRef(v);
  EXPECT_EQ(s.str(), "[4, 5]");
  EXPECT_TRUE(IntArrayRef({}).empty());
}

}  // namespace
}  // namespace glass
