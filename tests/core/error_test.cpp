// tests/core/error_test.cpp — the two error levels.
#include "core/error.h"

#include "test_util.h"

namespace glass {
namespace {

TEST(Error, UserChecksThrowGlassErrorWithTheMessage) {
  EXPECT_GLASS_ERROR(GLASS_CHECK(1 == 2, "op(): got ", 3, " and ", 4.5), "op(): got 3 and 4.5");
  static_assert(std::is_base_of_v<std::exception, Error>);
}

TEST(Error, InternalAssertsSayItIsABug) {
  EXPECT_GLASS_ERROR(GLASS_INTERNAL_ASSERT(false, "detail"), "internal error", "bug", "detail");
}

}  // namespace
}  // namespace glass
