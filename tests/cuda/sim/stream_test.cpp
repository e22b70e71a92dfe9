// tests/cuda/sim/stream_test.cpp — asynchronous launches, streams, events, sticky errors
// (cuda/sim/streams.h, cuda/sim/sim_runtime.h).
//
// Asynchrony is shown deterministically: a held stream starts nothing, so a call that
// returns while its stream is held returned before its work ran. Nothing here compares
// host clocks; elapsed_time is checked against the timeline's own timestamps.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "sim_test_util.h"

namespace glass::cuda::sim {
namespace {

using testing::DeviceBuffer;
using testing::elementwise_kernel;
using testing::error_of;
using testing::fill_kernel;
using testing::sim;
using testing::single_kernel;
using testing::TestEvent;
using testing::TestStream;

TEST(SimStream, LaunchReturnsBeforeTheKernelRuns) {
  DeviceBuffer buf(1024 * sizeof(float));
  TestStream s;
  sim().hold(s);
  enqueue_kernel(s, fill_kernel(buf.get(), 1024, 3.0f));
  // Returned with the stream held: nothing ran, and the host can see that.
  EXPECT_FALSE(sim().stream_query(s));
  EXPECT_EQ(sim().pending_ops(s), 1u);
  EXPECT_EQ(buf.view()[0], 0.0f);
  sim().release(s);
  sim().stream_synchronize(s);
  EXPECT_TRUE(sim().stream_query(s));
  for (size_t i = 0; i < 1024; ++i) ASSERT_EQ(buf.view()[i], 3.0f) << i;
}

TEST(SimStream, EveryBlockRunsOnceOnAnSmWorker) {
  std::mutex mutex;
  std::multiset<std::tuple<unsigned, unsigned, unsigned>> seen;
  std::set<std::thread::id> threads;
  KernelLaunch launch;
  launch.name = "blocks";
  launch.grid = Dim3(5, 3, 2);
  launch.block = Dim3(32);
  launch.run_block = [&](Dim3 b) {
    std::lock_guard<std::mutex> lock(mutex);
    seen.insert({b.x, b.y, b.z});
    threads.insert(std::this_thread::get_id());
  };
  TestStream s;
  enqueue_kernel(s, launch);
  sim().stream_synchronize(s);
  EXPECT_EQ(seen.size(), 30u);
  for (unsigned z = 0; z < 2; ++z)
    for (unsigned y = 0; y < 3; ++y)
      for (unsigned x = 0; x < 5; ++x) EXPECT_EQ(seen.count({x, y, z}), 1u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
  EXPECT_LE(threads.size(), static_cast<size_t>(sim().config().sms));
}

TEST(SimStream, OperationsOfOneStreamRunInOrder) {
  DeviceBuffer buf(sizeof(int64_t));
  int64_t* x = buf.get<int64_t>();
  TestStream s;
  sim().memset_async(x, 0, sizeof(int64_t), s);
  // x = 10 x + k for k = 1..12: any reordering changes the digits.
  for (int k = 1; k <= 12; ++k) {
    enqueue_kernel(s, single_kernel("step", [x, k] { *host_view(x) = *host_view(x) * 10 + k % 10; },
                                    {{x, true}}));
  }
  int64_t result = -1;
  sim().memcpy_async(&result, x, sizeof result, CopyKind::DeviceToHost, s);
  EXPECT_EQ(result, 123456789012);
}

TEST(SimStream, EventsOrderWorkAcrossStreams) {
  DeviceBuffer buf(2 * sizeof(int));
  int* x = buf.get<int>();
  TestStream a, b;
  TestEvent e;
  sim().hold(a);
  enqueue_kernel(a, single_kernel("produce", [x] { host_view(x)[0] = 41; }, {{x, true}}));
  sim().event_record(e, a);
  sim().stream_wait_event(b, e);
  enqueue_kernel(
      b, single_kernel("consume", [x] { host_view(x)[1] = host_view(x)[0] + 1; }, {{x, true}}));
  // b waits for an event that a (held) has not reached.
  EXPECT_FALSE(sim().event_query(e));
  EXPECT_FALSE(sim().stream_query(b));
  EXPECT_EQ(host_view(x)[1], 0);
  sim().release(a);
  sim().stream_synchronize(b);
  EXPECT_TRUE(sim().event_query(e));
  EXPECT_EQ(host_view(x)[1], 42);
}

TEST(SimStream, AnUnrecordedEventIsCompleteAndWaitingOnItIsANoOp) {
  TestStream s;
  TestEvent e;
  EXPECT_TRUE(sim().event_query(e));
  sim().event_synchronize(e);
  sim().stream_wait_event(s, e);
  sim().stream_synchronize(s);
}

TEST(SimStream, StreamsOfOneDeviceRunConcurrently) {
  if (sim().config().sms < 2) GTEST_SKIP() << "needs GLASS_SIM_SMS >= 2";
  // Kernel 1 (stream a) spins until kernel 2 (stream b) has run: it can only finish if
  // the SMs run b's kernel while a's still occupies one of them.
  std::atomic<bool> second_ran{false};
  std::atomic<bool> first_saw_it{false};
  TestStream a, b;
  enqueue_kernel(
      a, single_kernel("wait_for_b", [&] { first_saw_it = testing::wait_for(second_ran); }));
  enqueue_kernel(b, single_kernel("signal", [&] { second_ran = true; }));
  sim().stream_synchronize(a);
  EXPECT_TRUE(first_saw_it);
}

TEST(SimStream, ElapsedTimeIsTheDistanceBetweenTheEventsCompletions) {
  TestStream s;
  TestEvent start(0, true), stop(0, true), untimed(0, false), never(0, true);
  sim().clear_timeline();
  sim().event_record(start, s);
  enqueue_kernel(s, single_kernel("busy", [] {
                   volatile double acc = 0;
                   for (int i = 0; i < 200000; ++i) acc = acc + i;
                 }));
  sim().event_record(stop, s);
  sim().event_synchronize(stop);
  const float ms = sim().event_elapsed_ms(start, stop);
  const std::vector<TimelineRecord> t = sim().timeline();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].kind, OpKind::Event);
  EXPECT_EQ(t[1].name, "busy");
  // The events completed when the stream reached them: around the kernel.
  EXPECT_LE(t[0].end_ns, t[1].start_ns);
  EXPECT_GE(t[2].end_ns, t[1].end_ns);
  EXPECT_FLOAT_EQ(ms, static_cast<float>((t[2].end_ns - t[0].end_ns) / 1e6));
  EXPECT_GT(ms, 0.0f);
  EXPECT_NE(error_of([&] { sim().event_elapsed_ms(start, untimed); }).find("without timing"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sim().event_elapsed_ms(start, never); }).find("not been recorded"),
            std::string::npos);
  sim().hold(s);
  sim().event_record(never, s);
  EXPECT_NE(error_of([&] { sim().event_elapsed_ms(start, never); }).find("not completed"),
            std::string::npos);
  sim().release(s);
  sim().stream_synchronize(s);
}

TEST(SimStream, SynchronizingAHeldStreamIsAnErrorNotAHang) {
  TestStream a, b;
  TestEvent e;
  sim().set_held_wait_limit(std::chrono::milliseconds(20));
  sim().hold(a);
  enqueue_kernel(a, single_kernel("held", [] {}));
  sim().event_record(e, a);
  sim().stream_wait_event(b, e);
  enqueue_kernel(b, single_kernel("behind_the_event", [] {}));
  const std::string name = "stream " + std::to_string(sim().stream_id(a)) + " of cuda:0 is held";
  for (const std::string& msg : {error_of([&] { sim().stream_synchronize(a); }),
                                 error_of([&] { sim().event_synchronize(e); }), error_of([&] {
                                   sim().stream_synchronize(b);
                                 }),  // blocked through the event
                                 error_of([&] { sim().device_synchronize(0); })}) {
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
    EXPECT_NE(msg.find("release"), std::string::npos) << msg;
  }
  sim().set_held_wait_limit(std::chrono::seconds(10));
  sim().release(a);
  sim().device_synchronize(0);
  EXPECT_TRUE(sim().stream_query(b));
}

// A synchronize waits while another thread may still release the stream: that is how a
// test shows a call blocking.
TEST(SimStream, AHeldStreamReleasedByAnotherThreadEndsTheWait) {
  TestStream a;
  sim().hold(a);
  enqueue_kernel(a, single_kernel("held", [] {}));
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    sim().release(a);
  });
  sim().stream_synchronize(a);  // returns once the other thread has released it
  EXPECT_TRUE(sim().stream_query(a));
  releaser.join();
}

TEST(SimStream, EventsRecordOnlyOnTheirOwnDeviceButMayBeWaitedOnAnywhere) {
  TestStream s0(0), s1(1);
  TestEvent e0(0);
  const std::string msg = error_of([&] { sim().event_record(e0, s1); });
  EXPECT_NE(msg.find("created on cuda:0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is on cuda:1"), std::string::npos) << msg;
  // Cross-device wait: cuda:1's stream waits for cuda:0's work.
  DeviceBuffer flag(sizeof(int), 0), out(sizeof(int), 1);
  int* f = flag.get<int>();
  int* o = out.get<int>();
  sim().hold(s0);
  enqueue_kernel(s0, single_kernel("set_flag", [f] { *host_view(f) = 5; }, {{f, true}}));
  sim().event_record(e0, s0);
  sim().stream_wait_event(s1, e0);
  enqueue_kernel(s1, single_kernel("read_flag", [f, o] { *host_view(o) = *host_view(f) * 2; },
                                   {{f, false}, {o, true}}));
  EXPECT_FALSE(sim().stream_query(s1));
  sim().release(s0);
  sim().stream_synchronize(s1);
  EXPECT_EQ(*host_view(o), 10);
}

TEST(SimStream, DeviceSynchronizeWaitsForEveryStreamOfTheDevice) {
  DeviceBuffer buf(3 * sizeof(int));
  int* x = buf.get<int>();
  TestStream a, b;
  enqueue_kernel(a, single_kernel("a", [x] { host_view(x)[0] = 1; }, {{x, true}}));
  enqueue_kernel(b, elementwise_kernel("b", 1, 2, [x](size_t i) { host_view(x)[1 + i] = 2; }));
  sim().device_synchronize(0);
  EXPECT_TRUE(sim().stream_query(a));
  EXPECT_TRUE(sim().stream_query(b));
  EXPECT_EQ(host_view(x)[0], 1);
  EXPECT_EQ(host_view(x)[2], 2);
}

TEST(SimStream, KernelErrorsAreStickyUntilReset) {
  TestStream s, other_device(1);
  KernelLaunch bad = elementwise_kernel("divergent", 8, 32, [](size_t i) {
    if (i == 3 * 32 + 5) throw Error("threads of block 3 wait at two different barriers");
  });
  sim().hold(s);
  enqueue_kernel(s, bad);  // returns: the error is the kernel's, found later
  std::atomic<bool> ran_after{false};
  enqueue_kernel(s, single_kernel("after", [&] { ran_after = true; }));
  sim().release(s);
  std::string msg = error_of([&] { sim().stream_synchronize(s); });
  EXPECT_NE(msg.find("kernel 'divergent' failed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("two different barriers"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cuda:0"), std::string::npos) << msg;
  EXPECT_FALSE(ran_after);  // work behind a failed kernel is abandoned, as on a GPU
  // Every later call on the device fails with the same message ...
  EXPECT_EQ(error_of([&] { sim().stream_query(s); }), msg);
  EXPECT_EQ(error_of([&] { enqueue_kernel(s, single_kernel("next", [] {})); }), msg);
  DeviceBuffer buf(16);
  int host[4] = {};
  EXPECT_EQ(error_of([&] { sim().memcpy_async(buf.get(), host, 16, CopyKind::HostToDevice, s); }),
            msg);
  EXPECT_EQ(error_of([&] { sim().device_synchronize(0); }), msg);
  // ... while other devices carry on.
  enqueue_kernel(other_device, single_kernel("fine", [] {}));
  sim().stream_synchronize(other_device);
  sim().reset_sticky_error(0);
  enqueue_kernel(s, single_kernel("recovered", [] {}));
  sim().stream_synchronize(s);
}

TEST(SimStream, BadLaunchShapesAreRejectedBeforeAnythingIsQueued) {
  TestStream s;
  KernelLaunch k = single_kernel("too_big", [] {});
  k.block = Dim3(2048);
  std::string msg = error_of([&] { enqueue_kernel(s, k); });
  EXPECT_NE(msg.find("kernel 'too_big'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2048 threads"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1024"), std::string::npos) << msg;
  k.block = Dim3(32);
  k.grid = Dim3(0);
  EXPECT_NE(error_of([&] { enqueue_kernel(s, k); }).find("grid (0, 1, 1)"), std::string::npos);
  k.grid = Dim3(1);
  k.dynamic_shared_bytes = 64 * 1024;
  EXPECT_NE(error_of([&] { enqueue_kernel(s, k); }).find("65536 bytes of dynamic shared"),
            std::string::npos);
  EXPECT_EQ(sim().pending_ops(s), 0u);
  EXPECT_NE(error_of([&] { sim().destroy_stream(sim().default_stream(0)); }).find("default"),
            std::string::npos);
  EXPECT_NE(error_of([] { sim().create_stream(9); }).find("device 9 does not exist"),
            std::string::npos);
}

TEST(SimStream, DestroyingAStreamLetsItsWorkFinish) {
  DeviceBuffer buf(sizeof(int));
  int* x = buf.get<int>();
  StreamHandle s = sim().create_stream(0);
  EXPECT_GT(sim().stream_id(s), 0);
  EXPECT_EQ(sim().stream_device(s), 0);
  sim().hold(s);
  enqueue_kernel(s, single_kernel("last_words", [x] { *host_view(x) = 9; }, {{x, true}}));
  sim().destroy_stream(s);  // drops the hold; the kernel still runs
  sim().device_synchronize(0);
  EXPECT_EQ(*host_view(x), 9);
}

TEST(SimStream, HostThreadsMayEnqueueConcurrently) {
  // Four host threads, each with its own stream and counter, chained through events to a
  // shared stream of the other device; every kernel must run once and in its stream's order.
  constexpr int kThreads = 4, kSteps = 100;
  DeviceBuffer counters(kThreads * sizeof(int64_t));
  int64_t* c = counters.get<int64_t>();
  // One allocation, four tensors: registered apart, so the race checker sees four blocks.
  for (int t = 0; t < kThreads; ++t) sim().register_block(c + t, sizeof(int64_t));
  std::vector<std::thread> hosts;
  for (int t = 0; t < kThreads; ++t) {
    hosts.emplace_back([c, t] {
      TestStream s(t % 2);
      TestEvent e(t % 2);
      int64_t* mine = c + t;
      for (int k = 0; k < kSteps; ++k) {
        enqueue_kernel(
            s, single_kernel("count",
                             [mine, k] { *host_view(mine) = *host_view(mine) * 3 % 1000003 + k; },
                             {{mine, true}}));
        if (k % 10 == 0) {
          sim().event_record(e, s);
          sim().stream_wait_event(sim().default_stream(1 - t % 2), e);
        }
      }
      int64_t result = 0;
      sim().memcpy_async(&result, mine, sizeof result, CopyKind::DeviceToHost, s);
      int64_t expected = 0;
      for (int k = 0; k < kSteps; ++k) expected = expected * 3 % 1000003 + k;
      EXPECT_EQ(result, expected) << "thread " << t;
    });
  }
  for (std::thread& h : hosts) h.join();
  sim().device_synchronize(0);
  sim().device_synchronize(1);
  for (int t = 0; t < kThreads; ++t) sim().unregister_block(c + t);
}

// The child's side: leaves work queued behind a hold and exits; the simulator must
// release the hold, run the work and join its threads — not hang, not drop the work.
[[noreturn]] void exit_with_work_pending() {
  StreamHandle s = sim().create_stream(0);
  sim().hold(s);
  enqueue_kernel(s, single_kernel("last", [] { std::fputs("the kernel ran at exit\n", stderr); }));
  std::exit(3);
}

TEST(SimStreamDeathTest, PendingWorkFinishesAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exit_with_work_pending(), ::testing::ExitedWithCode(3), "the kernel ran at exit");
}

TEST(SimStream, DefaultStreamsAreOnePerDeviceWithIdZero) {
  for (int d = 0; d < sim().device_count(); ++d) {
    StreamHandle s = sim().default_stream(d);
    EXPECT_EQ(s, sim().default_stream(d));
    EXPECT_EQ(sim().stream_id(s), 0);
    EXPECT_EQ(sim().stream_device(s), d);
  }
}

}  // namespace
}  // namespace glass::cuda::sim
