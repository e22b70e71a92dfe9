// tests/distributed/store_test.cpp — the in-process stores: HashStore (blocking get/wait
// with timeouts, counters, compare_set's three cases) and PrefixStore (each key lands under
// "<prefix>/" in the inner store; two prefixes never meet).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "core/error.h"
#include "distributed/hash_store.h"
#include "distributed/prefix_store.h"
#include "distributed/test_util.h"

namespace glass::distributed {
namespace {

using testing::bytes;
using testing::error_of;

using std::chrono::milliseconds;
using Bytes = std::vector<uint8_t>;

TEST(HashStore, SetGetAddCheckDeleteNumKeys) {
  HashStore store;
  store.set("a", "1");
  store.set("bin", Bytes{0, 255, 7});
  EXPECT_EQ(store.get_string("a"), "1");
  EXPECT_EQ(store.get("bin"), (Bytes{0, 255, 7}));
  EXPECT_EQ(store.add("n", 5), 5);  // absent counts as 0
  EXPECT_EQ(store.add("n", -2), 3);
  EXPECT_EQ(store.get_string("n"), "3");  // counters are decimal text, as torch's
  EXPECT_EQ(store.add("a", 10), 11);      // "1" set by hand is an integer too
  EXPECT_TRUE(store.check({"a", "n"}));
  EXPECT_FALSE(store.check({"a", "zzz"}));
  EXPECT_EQ(store.num_keys(), 3);
  EXPECT_TRUE(store.delete_key("a"));
  EXPECT_FALSE(store.delete_key("a"));
  EXPECT_EQ(store.num_keys(), 2);
}

TEST(HashStore, AddOnTextNamesTheKey) {
  HashStore store;
  store.set("name", "alice");
  EXPECT_EQ(error_of([&] { store.add("name", 1); }),
            "store: key \"name\" holds \"alice\", which is not an integer (add() keeps "
            "counters as decimal text)");
  EXPECT_EQ(store.get_string("name"), "alice");  // the failed add changed nothing
  store.add("max", INT64_MAX);
  EXPECT_EQ(error_of([&] { store.add("max", 1); }),
            "store: add(\"max\", 1) overflows int64 (the key holds 9223372036854775807)");
}

TEST(HashStore, CompareSetFollowsTorchsRule) {
  HashStore store;
  // absent + empty expected: set
  EXPECT_EQ(store.compare_set("k", {}, bytes("v1")), bytes("v1"));
  // present + matching expected: swap
  EXPECT_EQ(store.compare_set("k", bytes("v1"), bytes("v2")), bytes("v2"));
  // present + other expected: unchanged, returns what is there
  EXPECT_EQ(store.compare_set("k", bytes("nope"), bytes("v3")), bytes("v2"));
  EXPECT_EQ(store.get("k"), bytes("v2"));
  // absent + non-empty expected: nothing set, `expected` returned
  EXPECT_EQ(store.compare_set("absent", bytes("e"), bytes("d")), bytes("e"));
  EXPECT_FALSE(store.check({"absent"}));
}

TEST(HashStore, GetBlocksUntilAnotherThreadSets) {
  HashStore store(milliseconds(5000));
  std::string got;
  auto start = std::chrono::steady_clock::now();
  std::thread reader([&] { got = store.get_string("late"); });
  std::this_thread::sleep_for(milliseconds(50));  // let the reader block first
  store.set("late", "here");
  reader.join();
  EXPECT_EQ(got, "here");
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(50));
}

TEST(HashStore, TimeoutNamesTheMissingKeysAndTheTime) {
  HashStore store(milliseconds(100));
  store.set("b", "present");
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] {
              store.wait({"a", "b", "c"});
            }),
            "store: timed out after 100 ms waiting for keys: a, c");
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, milliseconds(100));
  EXPECT_LT(elapsed, milliseconds(3000));  // bounded, not hung
  EXPECT_EQ(error_of([&] { store.get("x"); }), "store: timed out after 100 ms waiting for keys: x");
  EXPECT_EQ(error_of([&] { store.wait({"y"}, milliseconds(20)); }),
            "store: timed out after 20 ms waiting for keys: y");
}

TEST(HashStore, ConcurrentAddsGiveEveryValueOnce) {
  HashStore store;
  constexpr int kThreads = 8, kAdds = 500;
  std::vector<std::vector<int64_t>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAdds; ++i) seen[t].push_back(store.add("counter", 1));
    });
  for (auto& thread : threads) thread.join();
  std::set<int64_t> all;
  for (auto& values : seen) all.insert(values.begin(), values.end());
  EXPECT_EQ(all.size(), size_t(kThreads * kAdds));  // each add saw a distinct total
  EXPECT_EQ(*all.begin(), 1);
  EXPECT_EQ(*all.rbegin(), kThreads * kAdds);
  EXPECT_EQ(store.get_string("counter"), std::to_string(kThreads * kAdds));
}

TEST(PrefixStore, KeysLandUnderThePrefix) {
  auto inner = std::make_shared<HashStore>(milliseconds(100));
  PrefixStore group0("pg0", inner), group1("pg1", inner);
  group0.set("rank", "zero");
  group1.set("rank", "one");
  EXPECT_EQ(group0.get_string("rank"), "zero");
  EXPECT_EQ(group1.get_string("rank"), "one");
  EXPECT_EQ(inner->get_string("pg0/rank"), "zero");
  EXPECT_EQ(inner->get_string("pg1/rank"), "one");
  EXPECT_EQ(group0.add("n", 2), 2);
  EXPECT_EQ(inner->get_string("pg0/n"), "2");
  EXPECT_TRUE(group0.check({"rank", "n"}));
  EXPECT_FALSE(group1.check({"n"}));
  EXPECT_EQ(group1.compare_set("rank", bytes("one"), bytes("uno")), bytes("uno"));
  EXPECT_EQ(inner->get_string("pg1/rank"), "uno");
  EXPECT_EQ(group0.num_keys(), 3);  // the inner store's count: every namespace
  EXPECT_TRUE(group0.delete_key("n"));
  EXPECT_FALSE(inner->check({"pg0/n"}));
  EXPECT_EQ(group0.prefix(), "pg0");
  EXPECT_EQ(group0.underlying_store(), inner);
}

TEST(PrefixStore, WaitsAndTimeoutsNameTheFullKeys) {
  auto inner = std::make_shared<HashStore>(milliseconds(5000));
  auto group = std::make_shared<PrefixStore>("pg", inner);
  group->set_timeout(milliseconds(80));  // its own timeout, not the inner one's
  EXPECT_EQ(error_of([&] { group->get("missing"); }),
            "store: timed out after 80 ms waiting for keys: pg/missing");
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(30));
    inner->set("pg/late", "ok");
  });
  group->wait({"late"}, milliseconds(2000));
  writer.join();
  EXPECT_EQ(group->get_string("late"), "ok");
}

TEST(PrefixStore, NestsLikeGroupsInsideGroups) {
  auto inner = std::make_shared<HashStore>();
  auto outer = std::make_shared<PrefixStore>("default_pg", inner);
  PrefixStore sub("1", outer);
  sub.set("k", "v");
  EXPECT_EQ(inner->get_string("default_pg/1/k"), "v");
  EXPECT_EQ(error_of([] { PrefixStore("x", nullptr); }),
            "PrefixStore(\"x\"): the inner store is null");
}

}  // namespace
}  // namespace glass::distributed
