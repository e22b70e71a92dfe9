// tests/cuda/sim/race_checker_test.cpp — the stream-race checker (race_checker.h).
//
// Races are reported at enqueue time, with both operations, both streams and the block,
// and the racing operation is not queued; programs ordered by the stream, by events
// (also transitively), or by a synchronize are never reported. Kernels here never touch
// memory: only their declared accesses matter to the checker, and the streams are held
// so that the verdict cannot depend on what happened to have finished.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "sim_test_util.h"

namespace glass::cuda::sim {
namespace {

using testing::DeviceBuffer;
using testing::error_of;
using testing::sim;
using testing::TestEvent;
using testing::TestStream;

class SimRaceChecker : public ::testing::Test {
 protected:
  void SetUp() override {
    was_on_ = sim().race_check();
    sim().set_race_check(true);
  }
  void TearDown() override {
    sim().device_synchronize(0);
    sim().set_race_check(was_on_);
  }

  static KernelLaunch writes(std::string name, const void* p) {
    return op(std::move(name), p, true);
  }
  static KernelLaunch reads(std::string name, const void* p) {
    return op(std::move(name), p, false);
  }
  static KernelLaunch op(std::string name, const void* p, bool write) {
    return testing::single_kernel(std::move(name), [] {}, {{p, write}});
  }
  static std::string stream_name(StreamHandle s) {
    return "stream " + std::to_string(sim().stream_id(s)) + " of cuda:0";
  }

 private:
  bool was_on_ = false;
};

TEST_F(SimRaceChecker, WriteThenUnorderedReadIsReportedWithBothSides) {
  DeviceBuffer x(4096);
  TestStream a, b;
  sim().hold(a);
  enqueue_kernel(a, writes("produce", x.get()));
  const std::string msg = error_of([&] { enqueue_kernel(b, reads("consume", x.get())); });
  std::ostringstream address;
  address << x.get();
  EXPECT_NE(msg.find("stream race"), std::string::npos) << msg;
  EXPECT_NE(msg.find(address.str()), std::string::npos) << msg;
  EXPECT_NE(msg.find("(2097152 bytes)"), std::string::npos) << msg;  // the raw allocation
  EXPECT_NE(msg.find("consume on " + stream_name(b) + " reads it"), std::string::npos) << msg;
  EXPECT_NE(msg.find("produce on " + stream_name(a) + " (enqueued earlier) may still write it"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("event.block(stream)"), std::string::npos) << msg;
  EXPECT_EQ(sim().pending_ops(b), 0u);  // the racing kernel was not queued
  sim().release(a);
}

TEST_F(SimRaceChecker, ReadThenUnorderedWriteIsReported) {
  DeviceBuffer x(4096);
  TestStream a, b;
  sim().hold(a);
  enqueue_kernel(a, reads("reader", x.get()));
  const std::string msg = error_of([&] { enqueue_kernel(b, writes("writer", x.get())); });
  EXPECT_NE(msg.find("writer on " + stream_name(b) + " writes it while reader"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("may still read it"), std::string::npos) << msg;
  sim().release(a);
}

TEST_F(SimRaceChecker, CopiesAndMemsetsAreCheckedToo) {
  DeviceBuffer x(4096), y(4096);
  std::vector<char> host(4096);
  TestStream a, b;
  sim().hold(a);
  sim().memcpy_async(x.get(), host.data(), 4096, CopyKind::HostToDevice, a);
  std::string msg = error_of([&] { enqueue_kernel(b, reads("add", x.get())); });
  EXPECT_NE(msg.find("add on " + stream_name(b) + " reads it while copy HtoD 4.0 KiB on " +
                     stream_name(a)),
            std::string::npos)
      << msg;
  msg = error_of([&] { sim().memset_async(x.get(), 0, 16, b); });
  EXPECT_NE(msg.find("memset 16 B on " + stream_name(b) + " writes it"), std::string::npos) << msg;
  msg = error_of([&] { sim().memcpy_async(y.get(), x.get(), 4096, CopyKind::DeviceToDevice, b); });
  EXPECT_NE(msg.find("copy DtoD 4.0 KiB"), std::string::npos) << msg;
  sim().release(a);
}

TEST_F(SimRaceChecker, ReadsDoNotRaceWithReads) {
  DeviceBuffer x(4096);
  TestStream a, b;
  sim().hold(a);
  enqueue_kernel(a, reads("r1", x.get()));
  enqueue_kernel(b, reads("r2", x.get()));
  sim().release(a);
}

TEST_F(SimRaceChecker, OneStreamIsAlwaysOrdered) {
  DeviceBuffer x(4096);
  TestStream a;
  sim().hold(a);
  enqueue_kernel(a, writes("w1", x.get()));
  enqueue_kernel(a, reads("r", x.get()));
  enqueue_kernel(a, writes("w2", x.get()));
  sim().release(a);
}

TEST_F(SimRaceChecker, AnEventRecordedAfterTheWriteOrdersIt) {
  DeviceBuffer x(4096);
  TestStream a, b;
  TestEvent e;
  sim().hold(a);
  enqueue_kernel(a, writes("produce", x.get()));
  sim().event_record(e, a);
  sim().stream_wait_event(b, e);
  enqueue_kernel(b, writes("consume", x.get()));
  // And back: a waits for b before touching x again.
  TestEvent back;
  sim().event_record(back, b);
  sim().stream_wait_event(a, back);
  enqueue_kernel(a, reads("again", x.get()));
  sim().release(a);
}

TEST_F(SimRaceChecker, AnEventRecordedBeforeTheWriteDoesNot) {
  DeviceBuffer x(4096);
  TestStream a, b;
  TestEvent e;
  sim().hold(a);
  sim().event_record(e, a);
  enqueue_kernel(a, writes("produce", x.get()));
  sim().stream_wait_event(b, e);
  EXPECT_NE(error_of([&] { enqueue_kernel(b, reads("consume", x.get())); }).find("stream race"),
            std::string::npos);
  sim().release(a);
}

TEST_F(SimRaceChecker, OrderIsTransitiveThroughStreams) {
  DeviceBuffer x(4096);
  TestStream a, b, c;
  TestEvent e1, e2;
  sim().hold(a);
  enqueue_kernel(a, writes("produce", x.get()));
  sim().event_record(e1, a);
  sim().stream_wait_event(b, e1);
  enqueue_kernel(b, testing::single_kernel("unrelated", [] {}));
  sim().event_record(e2, b);
  sim().stream_wait_event(c, e2);
  enqueue_kernel(c, reads("consume", x.get()));
  sim().release(a);
}

TEST_F(SimRaceChecker, SynchronizingOrdersWhatTheHostEnqueuesAfter) {
  DeviceBuffer x(4096);
  TestStream a, b, c;
  TestEvent e;
  enqueue_kernel(a, writes("w_a", x.get()));
  sim().stream_synchronize(a);
  enqueue_kernel(b, writes("w_b", x.get()));  // after the sync: ordered
  sim().event_record(e, b);
  sim().event_synchronize(e);
  enqueue_kernel(c, writes("w_c", x.get()));
  sim().device_synchronize(0);
  enqueue_kernel(a, reads("r_a", x.get()));
  while (!sim().stream_query(a)) {
  }
  enqueue_kernel(b, writes("w_b2", x.get()));  // a query that said "done" is a sync too
  std::vector<char> host(16);
  sim().memcpy_async(host.data(), x.get(), 16, CopyKind::DeviceToHost, b);  // pageable: waits
  enqueue_kernel(c, writes("w_c2", x.get()));
}

TEST_F(SimRaceChecker, ASynchronizeOrdersOnlyWhatItCovered) {
  DeviceBuffer x(4096);
  TestStream a, b, c;
  enqueue_kernel(a, writes("w_a", x.get()));
  sim().stream_synchronize(a);
  sim().hold(b);
  enqueue_kernel(b, writes("w_b", x.get()));  // after the sync of a, but b is not synced
  const std::string msg = error_of([&] { enqueue_kernel(c, reads("r_c", x.get())); });
  EXPECT_NE(msg.find("r_c on " + stream_name(c) + " reads it while w_b on " + stream_name(b)),
            std::string::npos)
      << msg;
  sim().release(b);
}

TEST_F(SimRaceChecker, RegisteredBlocksAreTrackedApart) {
  DeviceBuffer segment(8192);  // one raw allocation holding two tensors
  char* first = segment.get<char>();
  char* second = first + 4096;
  TestStream a, b;
  sim().hold(a);
  // Unregistered, both pointers resolve to the one raw allocation: a race.
  enqueue_kernel(a, writes("w_first", first));
  EXPECT_NE(error_of([&] { enqueue_kernel(b, writes("w_second", second)); }).find("stream race"),
            std::string::npos);
  sim().release(a);
  sim().stream_synchronize(a);
  sim().stream_synchronize(b);
  sim().register_block(first, 4096);
  sim().register_block(second, 4096);
  sim().hold(a);
  enqueue_kernel(a, writes("w_first", first));
  enqueue_kernel(b, writes("w_second", second));  // different tensors: no race
  const std::string msg = error_of([&] { enqueue_kernel(b, reads("r_first", first + 100)); });
  EXPECT_NE(msg.find("the tensor memory at"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(4096 bytes)"), std::string::npos) << msg;
  // Unregistering forgets the block's history: its next user starts clean.
  sim().unregister_block(first);
  sim().register_block(first, 4096);
  enqueue_kernel(b, reads("r_first", first));
  sim().release(a);
  EXPECT_NE(error_of([&] { sim().register_block(first + 8, 16); }).find("overlaps"),
            std::string::npos);
  EXPECT_NE(error_of([&] { sim().unregister_block(first + 8); }).find("no block was registered"),
            std::string::npos);
  sim().unregister_block(first);
  sim().unregister_block(second);
}

TEST_F(SimRaceChecker, FreeingForgetsTheAllocationsHistory) {
  TestStream a, b;
  void* p = sim().malloc(0, 4096);
  ASSERT_NE(p, nullptr);
  sim().hold(a);
  enqueue_kernel(a, writes("w", p));
  // Freed and handed out again (the same range) while a's write is still queued: the new
  // allocation starts with no history. (Ordering reuse is the caching allocator's job;
  // that is what its events and record_stream are for.)
  sim().free(0, p);
  void* q = sim().malloc(0, 4096);
  ASSERT_EQ(q, p);
  enqueue_kernel(b, writes("w_new", q));
  sim().release(a);
  sim().device_synchronize(0);
  sim().free(0, q);
}

TEST_F(SimRaceChecker, OffMeansNoChecks) {
  DeviceBuffer x(4096);
  TestStream a, b;
  sim().set_race_check(false);
  sim().hold(a);
  enqueue_kernel(a, writes("w", x.get()));
  enqueue_kernel(b, writes("w", x.get()));
  sim().release(a);
}

}  // namespace
}  // namespace glass::cuda::sim
