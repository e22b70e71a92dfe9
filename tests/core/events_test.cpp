// tests/core/events_test.cpp — publish/subscribe: delivery, unsubscription, isolation.
#include "core/events.h"

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
        seen.push_back(std::string(e.name) + "@" + e.detail);
    });
    EXPECT_TRUE(events::enabled());
    Tensor c = a + b;
  }
  EXPECT_FALSE(events::enabled());
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), "binary@Backend");
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
