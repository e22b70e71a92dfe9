// tests/core/events_test.cpp — publish/subscribe: delivery, unsubscription, isolation.
#include "core/events.h"

#include <algorithm>

#include "test_util.h"

namespace glass {
namespace {

TEST(Events, NoSubscribersMeansDisabled) { EXPECT_FALSE(events::enabled()); }

TEST(Events, OpDispatchesArePublishedWithTheKeyThatRanThem) {
  Tensor a = ones({2}), b = ones({2});
  std::vector<std::string> seen;
  {
    events::Subscription sub([&](const events::Event& e) {
      if (e.kind == events::Kind::OpDispatched)
        seen.push_back(std::string(e.name) + "/" + e.entry + "@" + e.detail);
    });
    EXPECT_TRUE(events::enabled());
    Tensor c = a + b;
  }
  EXPECT_FALSE(events::enabled());
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), "add/binary@Backend");
}

// Note [Op names in events]: a family entry names its member, in-place entries end in '_',
// and any other entry is its own op.
TEST(Events, OpDispatchesNameTheOpAndTheEntry) {
  Tensor a = ones({2, 3}), b = full({2, 3}, 2.0);
  std::vector<std::string> seen;
  {
    events::Subscription sub([&](const events::Event& e) {
      if (e.kind == events::Kind::OpDispatched)
        seen.push_back(std::string(e.name) + "/" + e.entry + "@" + e.detail);
    });
    Tensor c = a * b;
    Tensor d = b.exp();
    Tensor m = d.amax({1});  // reduce
    Tensor v = d.view({3, 2});
    b.mul_(b);
    d.neg_();
  }
  auto has = [&](const std::string& s) {
    return std::find(seen.begin(), seen.end(), s) != seen.end();
  };
  EXPECT_EQ(seen.front(), "mul/binary@Backend");
  EXPECT_TRUE(has("exp/unary@Backend"));
  EXPECT_TRUE(has("amax/reduce@Backend"));
  EXPECT_TRUE(has("view/view@Backend"));
  EXPECT_TRUE(has("mul_/binary_@Backend"));
  EXPECT_TRUE(has("neg_/unary_@Backend"));
  EXPECT_FALSE(has("binary/binary@Backend"));
}

TEST(Events, AThrowingSubscriberDoesNotBreakPublishing) {
  int64_t dropped = events::dropped();
  int calls = 0;
  events::Subscription bad([](const events::Event&) { throw std::runtime_error("boom"); });
  events::Subscription good([&](const events::Event&) { ++calls; });
  events::publish({.kind = events::Kind::BucketReady, .value = 3});
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(events::dropped(), dropped + 1);
  EXPECT_STREQ(events::to_string(events::Kind::BucketReady), "bucket_ready");
}

}  // namespace
}  // namespace glass
