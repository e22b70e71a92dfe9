// tests/autograd/hooks_removal_test.cpp — removable hooks in libtorch's form.
//
// register_hook returns an index into the tensor's own hooks that remove_hook takes; the
// same holds for post-accumulate-grad hooks. Indices never shift when others are removed,
// and a bad index is an error naming it. Post-accumulate hooks run in registration order
// and see the leaf's .grad() after accumulation (DDP reads it there). Values are worked by
// hand on float64 tensors, so every comparison is exact.
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/test_util.h"

namespace glass {
namespace {

std::vector<double> values(const Tensor& t) {
  Tensor c = t.detach().to(kFloat64).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

Tensor leaf(std::vector<double> v) { return tensor(v).requires_grad_(); }

// A hook that records `name` when it runs and scales the gradient by `factor`.
std::function<Tensor(const Tensor&)> scaling_hook(std::vector<std::string>& log, std::string name,
                                                  double factor) {
  return [&log, name, factor](const Tensor& g) -> Tensor {
    log.push_back(name);
    return factor == 1 ? Tensor() : g * factor;
  };
}

TEST(HooksRemoval, LeafHookIsReallyRemoved) {
  Tensor x = leaf({1., 2.});
  std::vector<std::string> log;
  EXPECT_EQ(x.register_hook(scaling_hook(log, "a", 1)), 0u);
  EXPECT_EQ(x.register_hook(scaling_hook(log, "b", 10)), 1u);
  EXPECT_EQ(x.register_hook(scaling_hook(log, "c", 1)), 2u);
  (x * 2).sum().backward();  // d/dx = [2, 2], times 10 by hook b
  EXPECT_EQ(values(x.grad()), (std::vector<double>{20, 20}));
  EXPECT_EQ(log, (std::vector<std::string>{"a", "b", "c"}));

  x.remove_hook(1);
  log.clear();
  autograd::zero_grad(x);
  (x * 2).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 2}));
  EXPECT_EQ(log, (std::vector<std::string>{"a", "c"}));
}

TEST(HooksRemoval, NonLeafHookIsReallyRemoved) {
  Tensor x = leaf({1., 2.});
  Tensor h = x * 3;
  std::vector<std::string> log;
  EXPECT_EQ(h.register_hook(scaling_hook(log, "ten", 10)), 0u);
  EXPECT_EQ(h.register_hook(scaling_hook(log, "seen", 1)), 1u);
  h.remove_hook(0);
  (h * h).sum().backward();  // d/dh = 2h = [6, 12]; d/dx = 3 * that, no factor 10
  EXPECT_EQ(values(x.grad()), (std::vector<double>{18, 36}));
  EXPECT_EQ(log, (std::vector<std::string>{"seen"}));
}

// The index counts this tensor's hooks only: other pre-hooks of its grad_fn (a viewer's
// recorder, another output's hooks) neither shift it nor get removed by it.
TEST(HooksRemoval, NonLeafIndicesArePerTensor) {
  Tensor x = leaf({1., 2.});
  Tensor h = x * 3;
  std::vector<std::string> log;
  h.grad_fn()->add_pre_hook(0, scaling_hook(log, "node's own", 1));
  EXPECT_EQ(h.register_hook(scaling_hook(log, "tensor's", 1)), 0u);
  h.remove_hook(0);
  h.sum().backward();
  EXPECT_EQ(log, (std::vector<std::string>{"node's own"}));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{3, 3}));
}

TEST(HooksRemoval, IndicesDoNotShiftAfterRemoval) {
  for (bool non_leaf : {false, true}) {
    SCOPED_TRACE(non_leaf ? "non-leaf" : "leaf");
    Tensor x = leaf({1.});
    Tensor t = non_leaf ? x * 1 : x;
    std::vector<std::string> log;
    EXPECT_EQ(t.register_hook(scaling_hook(log, "a", 1)), 0u);
    EXPECT_EQ(t.register_hook(scaling_hook(log, "b", 1)), 1u);
    t.remove_hook(0);
    EXPECT_EQ(t.register_hook(scaling_hook(log, "c", 1)), 2u);  // not 1: 1 is still b
    t.remove_hook(1);
    t.sum().backward();
    EXPECT_EQ(log, (std::vector<std::string>{"c"}));
  }
}

TEST(HooksRemoval, BadIndexIsAnErrorNamingIt) {
  for (bool non_leaf : {false, true}) {
    SCOPED_TRACE(non_leaf ? "non-leaf" : "leaf");
    Tensor x = leaf({1.});
    Tensor t = non_leaf ? x * 1 : x;
    EXPECT_GLASS_ERROR(t.remove_hook(0), "remove_hook(): this tensor has no hook with index 0");
    unsigned i = t.register_hook([](const Tensor&) { return Tensor(); });
    EXPECT_GLASS_ERROR(t.remove_hook(7), "no hook with index 7");
    t.remove_hook(i);
    EXPECT_GLASS_ERROR(t.remove_hook(i), "no hook with index 0", "already removed");
  }
  EXPECT_GLASS_ERROR(ones({1}).remove_hook(3), "no hook with index 3");
}

// Note [Post-accumulate hooks see the accumulated grad]: a leaf read twice (x * x + x) gets
// one AccumulateGrad call with the summed gradient, and its tensor hooks run first; the
// post-accumulate hooks see the result, added to what .grad() held before.
TEST(HooksRemoval, PostAccumulateHooksSeeTheAccumulatedGradInOrder) {
  Tensor x = leaf({1., 2.});
  x.register_hook([](const Tensor& g) { return g * 2; });
  std::vector<std::string> log;
  std::vector<std::vector<double>> seen;
  auto recorder = [&](std::string name) {
    return [&, name](const Tensor& t) {
      log.push_back(name);
      seen.push_back(values(t.grad()));
    };
  };
  EXPECT_EQ(autograd::register_post_accumulate_grad_hook(x, recorder("first")), 0u);
  EXPECT_EQ(autograd::register_post_accumulate_grad_hook(x, recorder("second")), 1u);
  (x * x + x).sum().backward();  // d/dx = 2x + 1 = [3, 5]; doubled by the tensor hook
  EXPECT_EQ(log, (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(seen, (std::vector<std::vector<double>>{{6, 10}, {6, 10}}));

  log.clear();
  seen.clear();
  (x * 4).sum().backward();  // [8, 8] added to [6, 10]
  EXPECT_EQ(seen, (std::vector<std::vector<double>>{{14, 18}, {14, 18}}));
}

TEST(HooksRemoval, PostAccumulateHookIsReallyRemoved) {
  Tensor x = leaf({1.});
  std::vector<int> log;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(autograd::register_post_accumulate_grad_hook(
                  x, [&log, i](const Tensor&) { log.push_back(i); }),
              static_cast<unsigned>(i));
  autograd::remove_post_accumulate_grad_hook(x, 1);
  EXPECT_EQ(
      autograd::register_post_accumulate_grad_hook(x, [&](const Tensor&) { log.push_back(3); }),
      3u);  // indices do not shift
  x.sum().backward();
  EXPECT_EQ(log, (std::vector<int>{0, 2, 3}));

  EXPECT_GLASS_ERROR(autograd::remove_post_accumulate_grad_hook(x, 1),
                     "remove_post_accumulate_grad_hook(): this tensor has no hook with index 1");
  EXPECT_GLASS_ERROR(autograd::remove_post_accumulate_grad_hook(x, 9), "index 9");
  EXPECT_GLASS_ERROR(autograd::remove_post_accumulate_grad_hook(leaf({1.}), 0), "index 0");
  EXPECT_GLASS_ERROR(autograd::register_post_accumulate_grad_hook(x * 2, [](const Tensor&) {}),
                     "expected a leaf tensor that requires grad");
}

}  // namespace
}  // namespace glass
