// tests/core/grad_mode_test.cpp — the thread-local grad-mode switch and its guards.
#include "core/grad_mode.h"

#include <thread>

#include "test_util.h"

namespace glass {
namespace {

TEST(GradMode, GuardsNest) {
  EXPECT_TRUE(GradMode::is_enabled());
  {
    NoGradGuard a;
    EXPECT_FALSE(GradMode::is_enabled());
    {
      AutoGradMode b(true);
      EXPECT_TRUE(GradMode::is_enabled());
    }
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_TRUE(GradMode::is_enabled());
}

TEST(GradMode, IsPerThread) {
  NoGradGuard no_grad;
  bool other = false;
  std::thread t([&] { other = GradMode::is_enabled(); });
  t.join();
  EXPECT_TRUE(other);  // a new thread starts with grad mode on
  EXPECT_FALSE(GradMode::is_enabled());
}

}  // namespace
}  // namespace glass
