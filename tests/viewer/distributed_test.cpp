// tests/viewer/distributed_test.cpp — the distributed panel's models: the ring recording's
// partial sums against the hand-worked ring, the DDP bucket timeline's overlap with
// backward, and the per-rank Chrome trace read back as JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <bit>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "core/ops/factories.h"
#include "distributed/backends/threads.h"
#include "distributed/ring.h"
#include "viewer/distributed_ddp.h"
#include "viewer/distributed_ring.h"
#include "viewer/distributed_trace.h"

namespace glass::viz {
namespace {

int mod(int a, int n) { return ((a % n) + n) % n; }

// The ranks whose values chunk c holds on rank r after reduce-scatter step s, worked by
// hand: chunk c starts on rank c and moves one rank right per step, each rank adding its
// own, so after step s it is on rank c + s + 1 and holds ranks c, c + 1, ..., c + s + 1.
// Rank r received chunk r − s − 1 in step s; its other chunks are as they were.
uint32_t ranks_in(int r, int c, int s, int n) {
  uint32_t mask = 1u << r;  // its own value
  for (int k = 0; k <= s; ++k) {
    if (mod(r - k - 1, n) != c) continue;  // not the chunk received in step k
    mask = 0;
    for (int j = 0; j <= k + 1; ++j) mask |= 1u << mod(c + j, n);
  }
  return mask;
}

void expect_ring_matches_hand_worked(int n, int64_t numel) {
  const RingRecording rec = record_ring({.world_size = n, .numel = numel});
  ASSERT_EQ(rec.frames.size(), static_cast<size_t>(2 * (n - 1) + 1));
  const uint32_t all = (1u << n) - 1;
  EXPECT_EQ(rec.full_mask(), all);
  for (size_t f = 0; f < rec.frames.size(); ++f) {
    const RingFrame& frame = rec.frames[f];
    ASSERT_EQ(frame.cells.size(), static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      ASSERT_EQ(frame.cells[r].size(), static_cast<size_t>(n));
      for (int c = 0; c < n; ++c) {
        const RingCell& cell = frame.cells[r][c];
        uint32_t expected;
        if (f == 0) {
          expected = 1u << r;
        } else if (!frame.gather_phase) {
          expected = ranks_in(r, c, frame.phase_step, n);
        } else {
          // All-gather step s: rank r receives the finished chunk r − s; the chunks it has
          // already received or finished itself (r + 1) are complete too.
          bool done = c == mod(r + 1, n);
          for (int k = 0; k <= frame.phase_step; ++k) done = done || c == mod(r - k, n);
          expected = done ? all : ranks_in(r, c, n - 2, n);
        }
        EXPECT_EQ(cell.mask, expected) << frame.caption() << ", rank " << r << ", chunk " << c;
        EXPECT_EQ(cell.count, std::popcount(expected));
        for (double v : cell.values) EXPECT_EQ(v, static_cast<double>(expected));
        EXPECT_EQ(cell.values.size(), static_cast<size_t>(rec.chunk_lengths[c]));
      }
      if (f > 0) {  // who sent what to whom, as the ring's loops say
        const RingTransfer& t = frame.transfers[r];
        const int s = frame.phase_step;
        EXPECT_EQ(t.to, mod(r + 1, n));
        EXPECT_EQ(t.from, mod(r - 1, n));
        EXPECT_EQ(t.send_chunk, frame.gather_phase ? mod(r + 1 - s, n) : mod(r - s, n));
        EXPECT_EQ(t.recv_chunk, frame.gather_phase ? mod(r - s, n) : mod(r - s - 1, n));
        // What rank r sent is what its right neighbour received.
        EXPECT_EQ(frame.transfers[mod(r + 1, n)].recv_chunk, t.send_chunk);
      }
    }
  }
  for (int r = 0; r < n; ++r)  // the end: the full sum everywhere
    for (const RingCell& cell : rec.frames.back().cells[r]) EXPECT_EQ(cell.count, n);
}

TEST(DistributedRing, FourRanksPartialSumsFollowTheHandWorkedRing) {
  expect_ring_matches_hand_worked(4, 8);
}

TEST(DistributedRing, ThreeRanksWithUnevenChunks) {
  expect_ring_matches_hand_worked(3, 7);  // chunks of 3, 2 and 2 elements
}

TEST(DistributedRing, AfterReduceScatterStepSRankRsNewChunkHoldsSPlus2Ranks) {
  const int n = 4;
  const RingRecording rec = record_ring({.world_size = n});
  for (int s = 0; s < n - 1; ++s)
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(rec.frames[s + 1].cells[r][mod(r - s - 1, n)].count, s + 2)
          << "step " << s << ", rank " << r;
  // Hand-worked, n = 4, rank 1 after step 1: chunk (1 − 1 − 1) mod 4 = 3 holds ranks 3, 0, 1,
  // that is 8 + 1 + 2 = 11.
  EXPECT_EQ(rec.frames[2].cells[1][3].values.front(), 11);
  EXPECT_EQ(rec.frames[2].caption(), "reduce-scatter step 2 of 3");
  EXPECT_EQ(rec.frames.back().caption(), "all-gather step 3 of 3");
}

TEST(DistributedRing, BadOptionsAreNamed) {
  EXPECT_THROW(
      {
        try {
          record_ring({.world_size = 17});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("world_size must be 1..16"), std::string::npos);
          throw;
        }
      },
      Error);
  EXPECT_THROW(record_ring({.world_size = 4, .numel = 3}), Error);
  EXPECT_EQ(record_ring({.world_size = 1}).frames.size(), 1u);  // no steps: just the start
}

TEST(DistributedRing, TheObserverIsPerThreadAndRestored) {
  int calls = 0;
  distributed::run_threads(2, [&](int rank) {
    const auto* rv = distributed::current_threads_rendezvous();
    auto group = distributed::make_threads_group(rv->store, rank, 2, {});
    Tensor t = full({4}, 1.0);
    if (rank == 0) {
      distributed::RingObserverGuard watch([&](const distributed::RingStep&) { ++calls; });
      distributed::ring_all_reduce(*group, t);
    } else {
      distributed::ring_all_reduce(*group, t);  // rank 1 has no observer
    }
    distributed::ring_all_reduce(*group, t);  // the guard is gone: nobody watches
  });
  EXPECT_EQ(calls, 2);  // rank 0's two steps (n = 2: one per phase), once
}

TEST(DistributedDdp, ABucketsAllReduceStartsBeforeTheLastBackwardNodeEnds) {
  const DdpRecording rec = record_ddp({.world_size = 2});
  ASSERT_EQ(rec.ranks.size(), 2u);
  for (const DdpRankTimeline& t : rec.ranks) {
    SCOPED_TRACE("rank " + std::to_string(t.rank));
    ASSERT_GE(t.buckets.size(), 2u);
    ASSERT_FALSE(t.nodes.empty());
    const DdpNodeSpan& last = t.nodes.back();
    // Overlap: the first bucket's all-reduce was launched while backward still had the
    // first layer's gradients to compute. (When the communication thread got to run it
    // depends on how busy the cores are, so only its order is checked below.)
    EXPECT_LT(t.buckets[0].ready_ns, last.start_ns);
    EXPECT_LE(last.end_ns, t.returned_ns);
    for (size_t i = 0; i < t.nodes.size(); ++i) {
      EXPECT_LE(t.nodes[i].start_ns, t.nodes[i].end_ns);
      if (i > 0) {
        EXPECT_LE(t.nodes[i - 1].end_ns, t.nodes[i].start_ns);
      }
    }
    for (const DdpBucketSpan& b : t.buckets) {
      EXPECT_LE(t.backward_start_ns, b.ready_ns);
      EXPECT_LE(b.ready_ns, b.started_ns);
      EXPECT_LE(b.started_ns, b.finished_ns);
      EXPECT_LE(b.finished_ns, t.returned_ns);
      EXPECT_FALSE(b.parameters.empty());
    }
    // Reverse registration order: the last layer's gradients are in the first bucket.
    EXPECT_EQ(t.buckets[0].parameters.front().rfind("fc4.", 0), 0u)
        << t.buckets[0].parameters.front();
    // Every layer's matmul gradient ran, and AccumulateGrad nodes name their parameter.
    int accumulates = 0;
    for (const DdpNodeSpan& s : t.nodes) accumulates += s.name.rfind("AccumulateGrad fc", 0) == 0;
    EXPECT_EQ(accumulates, 8);  // 4 Linear layers × (weight, bias)
  }
}

TEST(DistributedTrace, ChromeTraceHasOnePidPerRankAndComputeAndCommunicationThreads) {
  const DdpRecording rec = record_ddp({.world_size = 2, .iterations = 1});
  const nlohmann::json j = nlohmann::json::parse(rec.chrome_trace());
  ASSERT_TRUE(j.contains("traceEvents"));
  std::set<int> pids;
  std::set<std::string> thread_names;
  bool node = false, bucket = false, collective = false;
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e.dump();
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") thread_names.insert(e["args"]["name"].get<std::string>());
      continue;
    }
    pids.insert(e["pid"].get<int>());
    const std::string name = e["name"];
    if (e["ph"] == "X" && e["tid"] == 0 && name.find("Backward") != std::string::npos) node = true;
    if (e["ph"] == "X" && e["tid"] == 100 && name.find("all-reduce") != std::string::npos) {
      bucket = true;
      EXPECT_GT(e["dur"].get<double>(), 0);
    }
    if (e["cat"] == "collective_step" && e["tid"] == 100) collective = true;
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
  EXPECT_TRUE(thread_names.count("compute") && thread_names.count("communication"));
  EXPECT_TRUE(node) << "no backward node in a compute thread";
  EXPECT_TRUE(bucket) << "no bucket all-reduce in a communication thread";
  EXPECT_TRUE(collective) << "no collective event in a communication thread";
}

TEST(DistributedTrace, RecordChromeTraceWritesAnyRunsEventsPerRank) {
  const std::string path = ::testing::TempDir() + "ring_trace.json";
  const std::vector<TracedEvent> events =
      record_chrome_trace(path, [] { record_ring({.world_size = 3}); });
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str());
  std::set<int> pids, process_names;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M") {
      if (e["name"] == "process_name") process_names.insert(e["pid"].get<int>());
      continue;
    }
    pids.insert(e["pid"].get<int>());
    EXPECT_EQ(e["tid"], 0) << "the ring's adds and copies run on the rank's own thread";
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1, 2}));
  EXPECT_EQ(process_names, pids);
  ASSERT_FALSE(events.empty());
  for (const TracedEvent& e : events) EXPECT_GE(e.rank, 0) << events::to_string(e.kind);
  std::remove(path.c_str());
  EXPECT_THROW(record_chrome_trace("/nonexistent-dir/x.json", [] {}), Error);
}

// A ring of 3 ranks on 9 floats (chunks of 3): in each of its 2(n − 1) = 4 steps rank r
// sends one chunk, 12 bytes, to rank r + 1 and receives one from rank r − 1, so its trace
// holds 4 sends and 4 receives of 12 bytes, each an async slice that begins and then ends.
TEST(DistributedTrace, ARingsMessagesAreSlicesFromPostToCompletionPerRank) {
  const nlohmann::json j =
      nlohmann::json::parse(record_ring({.world_size = 3, .numel = 9}).chrome_trace());
  std::map<int64_t, nlohmann::json> begun;  // id -> its "b"
  std::map<std::pair<int, std::string>, int> slices;
  for (const auto& e : j["traceEvents"]) {
    if (e["cat"] != "message") continue;
    const int64_t id = e["id"];
    if (e["ph"] == "b") {
      ASSERT_FALSE(begun.count(id)) << "message " << id << " begins twice";
      EXPECT_EQ(e["args"]["bytes"], 12) << e.dump();
      begun[id] = e;
      continue;
    }
    ASSERT_EQ(e["ph"], "e") << e.dump();
    ASSERT_TRUE(begun.count(id)) << "message " << id << " ends before it begins";
    const nlohmann::json& b = begun[id];
    EXPECT_EQ(e["pid"], b["pid"]) << "a message ends on its poster's rank";
    EXPECT_EQ(e["name"], b["name"]);
    EXPECT_GE(e["ts"].get<double>(), b["ts"].get<double>());
    EXPECT_FALSE(e.contains("args")) << "the ring's messages all complete: " << e.dump();
    ++slices[{e["pid"].get<int>(), e["name"].get<std::string>()}];
    begun.erase(id);
  }
  EXPECT_TRUE(begun.empty()) << begun.size() << " messages never end";
  std::map<std::pair<int, std::string>, int> expected;
  for (int r = 0; r < 3; ++r) {
    expected[{r, "send to " + std::to_string((r + 1) % 3)}] = 4;
    expected[{r, "recv from " + std::to_string((r + 2) % 3)}] = 4;
  }
  EXPECT_EQ(slices, expected);
}

// A message still in flight when the trace stopped ends at the trace's last event, marked
// unfinished; a completion whose post the trace missed, or whose post was cut off, draws
// nothing; none of them gets a thread row.
TEST(DistributedTrace, AMessageNeverSeenToCompleteEndsAtTheLastEventMarkedUnfinished) {
  using events::Kind;
  const std::vector<TracedEvent> events = {
      {.kind = Kind::MessageDone,
       .name = "send",
       .rank = 0,
       .thread = -1,
       .t_ns = 1000,
       .value = 1},
      // A completion whose post a caller cut off (DdpRecording keeps a window of the trace).
      {.kind = Kind::MessageDone,
       .name = "recv",
       .rank = 0,
       .thread = -1,
       .t_ns = 1500,
       .value = 1,
       .message = 7},
      {.kind = Kind::MessagePosted,
       .name = "recv",
       .rank = 0,
       .thread = -1,
       .t_ns = 2000,
       .value = 1,
       .bytes = 64,
       .message = 1},
      {.kind = Kind::OpDispatched, .name = "add", .rank = 0, .thread = 0, .t_ns = 5000},
  };
  const nlohmann::json j = nlohmann::json::parse(chrome_trace_json(events));
  std::vector<nlohmann::json> messages;
  int thread_rows = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["cat"] == "message") messages.push_back(e);
    if (e["ph"] == "M" && e["name"] == "thread_name") ++thread_rows;
  }
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0]["ph"], "b");
  EXPECT_EQ(messages[0]["name"], "recv from 1");
  EXPECT_DOUBLE_EQ(messages[0]["ts"].get<double>(), 2.0);
  EXPECT_EQ(messages[1]["ph"], "e");
  EXPECT_EQ(messages[1]["id"], 1);
  EXPECT_DOUBLE_EQ(messages[1]["ts"].get<double>(), 5.0);
  EXPECT_EQ(messages[1]["args"]["completed"], false);
  EXPECT_EQ(thread_rows, 2) << "compute and communication rows only: " << j.dump();
}

}  // namespace
}  // namespace glass::viz
