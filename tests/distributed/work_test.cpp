// tests/distributed/work_test.cpp — Work: completes once, rethrows its error, times out with
// a message naming op, number and timeout (plus the group's diagnosis), and runs then()
// callbacks on the completing thread.
#include "distributed/work.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "core/error.h"
#include "core/ops/factories.h"
#include "distributed/test_util.h"

namespace glass::distributed {
namespace {

using testing::error_of;

using std::chrono::milliseconds;

TEST(Work, FinishThenWaitReturnsTrueAndKeepsOutputs) {
  Tensor out = full({2}, 3.0);
  Work work("allgather", 4, milliseconds(1000), {out});
  EXPECT_FALSE(work.is_completed());
  work.finish();
  EXPECT_TRUE(work.is_completed());
  EXPECT_TRUE(work.is_success());
  EXPECT_TRUE(work.wait());
  ASSERT_EQ(work.result().size(), 1u);
  EXPECT_TRUE(work.result()[0].is_same(out));
  EXPECT_EQ(work.op(), "allgather");
  EXPECT_EQ(work.seq(), 4u);
}

TEST(Work, WaitRethrowsTheStoredError) {
  Work work("broadcast", 2, milliseconds(1000));
  work.finish(std::make_exception_ptr(std::runtime_error("broadcast #2: the link broke")));
  EXPECT_TRUE(work.is_completed());
  EXPECT_FALSE(work.is_success());
  EXPECT_NE(work.exception(), nullptr);
  EXPECT_EQ(error_of([&] { work.wait(); }), "broadcast #2: the link broke");
  // Every wait sees it, not just the first.
  EXPECT_EQ(error_of([&] { work.wait(milliseconds(5)); }), "broadcast #2: the link broke");
}

TEST(Work, WaitTimesOutNamingOpSeqAndTimeoutAndStaysPending) {
  Work work("allreduce", 7, milliseconds(10'000));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { work.wait(milliseconds(30)); }), "allreduce #7 timed out after 30 ms");
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(30));
  EXPECT_FALSE(work.is_completed());
  work.finish();  // the transport may still finish it later
  EXPECT_TRUE(work.wait(milliseconds(0)));
}

TEST(Work, WaitWithoutArgumentUsesItsOwnTimeout) {
  Work work("barrier", 0, milliseconds(20));
  EXPECT_EQ(error_of([&] { work.wait(); }), "barrier #0 timed out after 20 ms");
}

TEST(Work, TimeoutMessageEndsWithTheDiagnosis) {
  Work work("allreduce", 3, milliseconds(1000));
  work.set_timeout_diagnosis([] { return std::string("ranks that did not join: 1, 3"); });
  EXPECT_EQ(error_of([&] { work.wait(milliseconds(10)); }),
            "allreduce #3 timed out after 10 ms — ranks that did not join: 1, 3");
}

TEST(Work, WaitWakesWhenAnotherThreadFinishes) {
  Work work("recv", 0, milliseconds(5000));
  std::thread finisher([&] {
    std::this_thread::sleep_for(milliseconds(20));  // the test's stand-in for a transport
    work.finish();
  });
  EXPECT_TRUE(work.wait());
  finisher.join();
}

TEST(Work, ThenRunsOnTheCompletingThreadOrAtOnce) {
  Work work("allreduce", 0, milliseconds(1000));
  std::thread::id ran_on;
  int calls = 0;
  work.then([&](Work& w) {
    ran_on = std::this_thread::get_id();
    ++calls;
    EXPECT_TRUE(w.is_completed());  // callbacks see the finished state
  });
  std::thread::id finisher_id;
  std::thread finisher([&] {
    finisher_id = std::this_thread::get_id();
    work.finish();
  });
  finisher.join();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ran_on, finisher_id);
  // Added after completion: runs now, on this thread.
  work.then([&](Work&) {
    ran_on = std::this_thread::get_id();
    ++calls;
  });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(Work, CallbacksAllRunEvenIfOneThrows) {
  Work work("allreduce", 0, milliseconds(1000));
  int calls = 0;
  work.then([&](Work&) {
    ++calls;
    throw std::runtime_error("bucket callback failed");
  });
  work.then([&](Work&) { ++calls; });
  ::testing::internal::CaptureStderr();
  work.finish();  // on a transport's thread: nobody there could catch it
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("a then() callback of allreduce #0 threw: bucket callback failed"),
            std::string::npos)
      << said;
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(work.is_success());  // the collective itself succeeded
}

TEST(Work, SecondFinishIsAnInternalError) {
  Work work("allreduce", 9, milliseconds(1000));
  work.finish();
  const std::string message = error_of([&] { work.finish(); });
  EXPECT_NE(message.find("allreduce #9 was finished twice"), std::string::npos) << message;
}

// A group that gives up on a stuck collective fails its Work first; the transport's thread
// finishes it again later. The first finish decides, and the callbacks run once.
TEST(Work, FinishIfPendingLetsTheFirstFinisherDecide) {
  Work work("allreduce", 3, milliseconds(1000));
  int calls = 0;
  work.then([&](Work&) { ++calls; });
  EXPECT_TRUE(work.finish_if_pending(
      std::make_exception_ptr(std::runtime_error("allreduce #3: rank 1 exited"))));
  EXPECT_FALSE(work.finish_if_pending(nullptr));  // the transport, late: ignored
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(work.is_success());
  EXPECT_EQ(error_of([&] { work.wait(); }), "allreduce #3: rank 1 exited");
}

}  // namespace
}  // namespace glass::distributed
