// tests/autograd/queue_callback_test.cpp — end-of-backward callbacks (PyTorch's
// Variable._execution_engine.queue_callback), the engine hook DDP waits for its buckets in.
//
// A callback runs after every node of its backward pass and before backward() returns, in
// queue order, once; it belongs to the innermost pass running on its thread; an exception
// from one comes out of backward() and leaves the engine ready for the next pass.
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "autograd/engine.h"
#include "autograd/variable.h"
#include "core/test_util.h"

namespace glass {
namespace {

std::vector<double> values(const Tensor& t) {
  Tensor c = t.detach().to(kFloat64).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

Tensor leaf(std::vector<double> v) { return tensor(v).requires_grad_(); }

constexpr const char* kNotRunning = "queue_callback: no backward pass is running on this thread";

// The root's hook is the first thing backward runs, so a callback queued there can only
// see the leaves' final gradients if it really runs after every node.
TEST(QueueCallback, RunsAfterEveryNodeAndSeesTheFinalGrads) {
  Tensor a = leaf({1., 2.}), b = leaf({3., 4.});
  Tensor y = (a * b + a).sum();
  std::vector<std::vector<double>> seen;
  y.register_hook([&](const Tensor&) {
    autograd::queue_callback([&] {
      seen.push_back(values(a.grad()));
      seen.push_back(values(b.grad()));
    });
    return Tensor();
  });
  y.backward();  // d/da = b + 1 = [4, 5]; d/db = a = [1, 2]
  EXPECT_EQ(seen, (std::vector<std::vector<double>>{{4, 5}, {1, 2}}));
}

// The DDP pattern: each parameter's post-accumulate-grad hook marks it ready, the first
// one queues the finalizer, and the finalizer averages every gradient (here: over two
// pretend ranks) before backward() returns.
TEST(QueueCallback, QueuedFromPostAccumulateHooksOncePerBackward) {
  std::vector<Tensor> params = {leaf({2., 4.}), leaf({6.})};
  int ready = 0, finalized = 0;
  bool queued = false;
  for (const Tensor& p : params) {
    autograd::register_post_accumulate_grad_hook(p, [&](const Tensor&) {
      ++ready;
      if (queued) return;
      queued = true;
      autograd::queue_callback([&] {
        EXPECT_EQ(ready, 2);  // every parameter's gradient is in
        NoGradGuard no_grad;
        for (const Tensor& q : params) q.mutable_grad().div_(2);
        ++finalized;
        queued = false;
        ready = 0;
      });
    });
  }
  for (int step = 1; step <= 2; ++step) {
    for (const Tensor& p : params) autograd::zero_grad(p);
    ((params[0] * params[0]).sum() + params[1] * 4).sum().backward();  // [4, 8] and [4]
    EXPECT_EQ(finalized, step);
    EXPECT_EQ(values(params[0].grad()), (std::vector<double>{2, 4}));
    EXPECT_EQ(values(params[1].grad()), (std::vector<double>{2}));
  }
}

TEST(QueueCallback, RunInQueueOrderAndMayQueueMore) {
  Tensor x = leaf({1.});
  std::vector<std::string> log;
  x.register_hook([&](const Tensor&) {
    autograd::queue_callback([&] {
      log.push_back("first");
      autograd::queue_callback([&] { log.push_back("queued by first"); });
    });
    autograd::queue_callback([&] { log.push_back("second"); });
    return Tensor();
  });
  (x * 2).sum().backward();
  EXPECT_EQ(log, (std::vector<std::string>{"first", "second", "queued by first"}));
}

TEST(QueueCallback, GradRunsThemToo) {
  Tensor x = leaf({3.});
  int calls = 0;
  Tensor y = x * x;
  y.register_hook([&](const Tensor&) {
    autograd::queue_callback([&] { ++calls; });
    return Tensor();
  });
  auto g = autograd::grad({y.sum()}, {x});
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(values(g[0]), (std::vector<double>{6}));
  EXPECT_FALSE(x.grad().defined());
}

TEST(QueueCallback, OutsideBackwardIsAnError) {
  EXPECT_GLASS_ERROR(autograd::queue_callback([] {}), kNotRunning);
  Tensor x = leaf({1.});
  x.sum().backward();
  EXPECT_GLASS_ERROR(autograd::queue_callback([] {}), kNotRunning);  // the pass has ended

  // A pass running on one thread is not running on another.
  bool other_thread_failed = false;
  x.register_hook([&](const Tensor&) {
    std::thread other([&] {
      try {
        autograd::queue_callback([] {});
      } catch (const Error& e) {
        other_thread_failed = std::string(e.what()).find(kNotRunning) != std::string::npos;
      }
    });
    other.join();
    return Tensor();
  });
  x.sum().backward();
  EXPECT_TRUE(other_thread_failed);
}

// A backward inside a hook (reentrant, as in checkpointing): its callbacks run when it
// ends, the outer pass's when the outer pass ends.
TEST(QueueCallback, NestedBackwardOwnsItsCallbacks) {
  Tensor x = leaf({2.});
  std::vector<std::string> log;
  Tensor y = x * 3;
  y.register_hook([&](const Tensor&) {
    autograd::queue_callback([&] { log.push_back("outer, queued before"); });
    AutoGradMode enable_grad(true);  // hooks run without grad mode, as in PyTorch
    Tensor z = leaf({5.});
    Tensor w = z * z;
    w.register_hook([&](const Tensor&) {
      autograd::queue_callback([&] { log.push_back("inner"); });
      return Tensor();
    });
    w.sum().backward();
    log.push_back("inner backward returned");
    EXPECT_EQ(values(z.grad()), (std::vector<double>{10}));
    autograd::queue_callback([&] { log.push_back("outer, queued after"); });
    return Tensor();
  });
  y.sum().backward();
  log.push_back("outer backward returned");
  EXPECT_EQ(log,
            (std::vector<std::string>{"inner", "inner backward returned", "outer, queued before",
                                      "outer, queued after", "outer backward returned"}));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{3}));
}

TEST(QueueCallback, AThrowingCallbackFailsBackwardAndDropsTheRest) {
  Tensor x = leaf({1.});
  bool throw_now = true;
  int after_throw = 0, later = 0;
  const unsigned hook = x.register_hook([&](const Tensor&) {
    if (throw_now) {
      autograd::queue_callback([] { throw std::runtime_error("bucket 3 failed"); });
      autograd::queue_callback([&] { ++after_throw; });
    } else {
      autograd::queue_callback([&] { ++later; });
    }
    return Tensor();
  });
  try {
    (x * 2).sum().backward();
    ADD_FAILURE() << "backward() should rethrow the callback's exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "bucket 3 failed");
  }
  EXPECT_EQ(after_throw, 0);
  EXPECT_GLASS_ERROR(autograd::queue_callback([] {}), kNotRunning);

  // The engine is fine: the next backward runs its own callback, not the dropped one.
  throw_now = false;
  autograd::zero_grad(x);
  (x * 2).sum().backward();
  EXPECT_EQ(later, 1);
  EXPECT_EQ(after_throw, 0);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2}));
  x.remove_hook(hook);
}

}  // namespace
}  // namespace glass
