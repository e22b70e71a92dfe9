// tests/core/dispatcher_test.cpp — the Trace -> Autograd -> Backend chain.
//
// Upper layers are simulated by registering handlers on a test-only Op, exactly as
// autograd/ and compiler/ will register theirs on the real ops.
#include "core/dispatcher.h"

#include "test_util.h"

namespace glass {
namespace {

std::vector<std::string> g_path;

Tensor backend_impl(const Tensor& x) {
  g_path.push_back("Backend");
  // Below Autograd, a nested op must not re-enter it (Note [Below-key exclusion]).
  if (x.defined() && x.requires_grad() && GradMode::is_enabled()) {
    EXPECT_TRUE(dispatch::thread_state().excluded &
                (1u << static_cast<int>(DispatchKey::Autograd)));
  }
  return x.clone();
}

Op<Tensor(const Tensor&)> test_op("test_op", &backend_impl);

Tensor trace_impl(const Tensor& x) {
  g_path.push_back("Trace");
  return test_op.redispatch(DispatchKey::Trace, x);
}

Tensor autograd_impl(const Tensor& x) {
  g_path.push_back("Autograd");
  return test_op.redispatch(DispatchKey::Autograd, x);
}

class DispatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_path.clear();
    test_op.register_handler(DispatchKey::Autograd, &autograd_impl);
    test_op.register_handler(DispatchKey::Trace, &trace_impl);
  }
};

TEST_F(DispatcherTest, PlainTensorsGoStraightToTheBackend) {
  test_op(ones({2}));
  EXPECT_EQ(g_path, (std::vector<std::string>{"Backend"}));
}

TEST_F(DispatcherTest, RequiresGradSelectsAutogradUnlessGradModeIsOff) {
  Tensor x = ones({2}).requires_grad_();
  test_op(x);
  EXPECT_EQ(g_path, (std::vector<std::string>{"Autograd", "Backend"}));
  g_path.clear();
  {
    NoGradGuard no_grad;
    test_op(x);
  }
  EXPECT_EQ(g_path, (std::vector<std::string>{"Backend"}));
}

TEST_F(DispatcherTest, TracingRunsFirstThenFallsThroughTheChain) {
  Tensor x = ones({2}).requires_grad_();
  {
    dispatch::TracingGuard tracing;
    test_op(x);
  }
  EXPECT_EQ(g_path, (std::vector<std::string>{"Trace", "Autograd", "Backend"}));
  EXPECT_FALSE(dispatch::thread_state().tracing);
}

TEST_F(DispatcherTest, ExclusionIsRestoredAfterAHandlerThrows) {
  test_op.register_handler(DispatchKey::Autograd, [](const Tensor& x) -> Tensor {
    return test_op.redispatch(DispatchKey::Autograd, Tensor()).add(x);  // backend throws: undefined
  });
  Tensor x = ones({2}).requires_grad_();
  EXPECT_THROW(test_op(x), Error);
  EXPECT_EQ(dispatch::thread_state().excluded, 0);
}

}  // namespace
}  // namespace glass
