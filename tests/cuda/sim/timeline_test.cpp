// tests/cuda/sim/timeline_test.cpp — the operation records and the Chrome trace export
// (cuda/sim/timeline.h).
//
// The records of a small program are checked field by field (against what the program
// enqueued and against stream order), and the Chrome trace is parsed back with
// nlohmann::json and checked for its lanes, its events and their durations.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sim_test_util.h"

namespace glass::cuda::sim {
namespace {

using testing::DeviceBuffer;
using testing::error_of;
using testing::fill_kernel;
using testing::sim;
using testing::TestEvent;
using testing::TestStream;

TEST(SimTimeline, FormatBytes) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(4096), "4.0 KiB");
  EXPECT_EQ(format_bytes(3 << 19), "1.5 MiB");
  EXPECT_EQ(format_bytes(size_t{5} << 30), "5.0 GiB");
}

TEST(SimTimeline, TheRingKeepsTheLatestRecordsInEnqueueOrder) {
  Timeline t(3);
  for (uint64_t seq : {4, 0, 1, 3, 2}) {
    TimelineRecord r;
    r.seq = seq;
    r.name = "op" + std::to_string(seq);
    t.push(r);
  }
  const std::vector<TimelineRecord> kept = t.records();
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].name, "op1");  // pushed 4, 0, 1, 3, 2: the last three pushed
  EXPECT_EQ(kept[1].name, "op2");
  EXPECT_EQ(kept[2].name, "op3");
  EXPECT_EQ(t.dropped(), 2u);
  t.clear(10);
  TimelineRecord late;
  late.seq = 9;  // enqueued before the clear, completed after: not kept
  t.push(late);
  EXPECT_TRUE(t.records().empty());
}

// A small program: stage, launch, memset, record, copy back.
struct Program {
  DeviceBuffer dev{4096};
  TestStream s;
  TestEvent e;
  std::vector<float> host = std::vector<float>(1024, 1.0f);

  void run() {
    sim().memcpy_async(dev.get(), host.data(), 4096, CopyKind::HostToDevice, s);
    KernelLaunch k = fill_kernel(dev.get(), 1024, 2.0f, 256);
    k.name = "fill_twos";
    enqueue_kernel(s, k);
    sim().memset_async(dev.get<char>() + 2048, 0, 2048, s);
    sim().event_record(e, s);
    sim().memcpy_async(host.data(), dev.get(), 4096, CopyKind::DeviceToHost, s);
  }
};

TEST(SimTimeline, RecordsDescribeEachOperation) {
  Program p;
  sim().clear_timeline();
  p.run();
  const std::vector<TimelineRecord> t = sim().timeline();
  ASSERT_EQ(t.size(), 5u);
  const int64_t sid = sim().stream_id(p.s);
  const std::vector<std::tuple<OpKind, Engine, std::string>> expected = {
      {OpKind::Copy, Engine::CopyHtoD, "HtoD 4.0 KiB"},
      {OpKind::Kernel, Engine::Compute, "fill_twos"},
      {OpKind::Memset, Engine::Compute, "memset 2.0 KiB"},
      {OpKind::Event, Engine::None, "record event " + std::to_string(0)},
      {OpKind::Copy, Engine::CopyDtoH, "DtoH 4.0 KiB"}};
  for (size_t i = 0; i < t.size(); ++i) {
    SCOPED_TRACE(t[i].name);
    EXPECT_EQ(t[i].kind, std::get<0>(expected[i]));
    EXPECT_EQ(t[i].engine, std::get<1>(expected[i]));
    if (t[i].kind != OpKind::Event) {
      EXPECT_EQ(t[i].name, std::get<2>(expected[i]));
    }
    EXPECT_EQ(t[i].device, 0);
    EXPECT_EQ(t[i].stream, sid);
    EXPECT_LE(t[i].enqueue_ns, t[i].returned_ns);
    EXPECT_LE(t[i].enqueue_ns, t[i].start_ns);
    EXPECT_LE(t[i].start_ns, t[i].end_ns);
    if (i > 0) {
      EXPECT_GT(t[i].seq, t[i - 1].seq);
      EXPECT_GE(t[i].start_ns, t[i - 1].end_ns);  // one stream: strictly one after another
    }
  }
  EXPECT_EQ(t[3].name.rfind("record event ", 0), 0u);
  EXPECT_EQ(t[0].bytes, 4096u);
  EXPECT_FALSE(t[0].pinned);
  EXPECT_EQ(t[1].grid.x, 4u);
  EXPECT_EQ(t[1].block.x, 256u);
  EXPECT_EQ(t[2].bytes, 2048u);
  EXPECT_TRUE(t[4].host_waited);
  EXPECT_EQ(p.host[0], 2.0f);
  EXPECT_EQ(p.host[1023], 0.0f);
}

TEST(SimTimeline, ClearForgetsWorkStillInFlight) {
  TestStream s;
  sim().hold(s);
  enqueue_kernel(s, testing::single_kernel("before_clear", [] {}));
  sim().clear_timeline();
  enqueue_kernel(s, testing::single_kernel("after_clear", [] {}));
  sim().release(s);
  sim().stream_synchronize(s);
  const std::vector<TimelineRecord> t = sim().timeline();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].name, "after_clear");
}

TEST(SimTimeline, ChromeTraceHasALanePerStreamAndEngineAndAHostLane) {
  Program p;
  sim().clear_timeline();
  p.run();
  const std::vector<TimelineRecord> records = sim().timeline();
  const nlohmann::json trace = nlohmann::json::parse(sim().chrome_trace_json());
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::map<std::pair<int, int>, std::string> lanes;  // (pid, tid) -> thread name
  std::map<int, std::string> processes;
  std::vector<nlohmann::json> work, host;
  for (const nlohmann::json& ev : trace["traceEvents"]) {
    const std::string ph = ev["ph"];
    if (ph == "M" && ev["name"] == "process_name")
      processes[ev["pid"].get<int>()] = ev["args"]["name"].get<std::string>();
    if (ph == "M" && ev["name"] == "thread_name") {
      lanes[{ev["pid"].get<int>(), ev["tid"].get<int>()}] = ev["args"]["name"].get<std::string>();
    }
    if (ph != "M") (ev["pid"] == 0 ? host : work).push_back(ev);
  }
  EXPECT_EQ(processes[0], "host");
  EXPECT_EQ(processes[1], "cuda:0 (simulated)");
  std::set<std::string> names;
  for (const auto& [lane, name] : lanes) names.insert(name);
  const std::string stream_lane = "stream " + std::to_string(sim().stream_id(p.s));
  for (const std::string& want :
       {stream_lane, std::string("SMs (compute engine)"), std::string("copy HtoD engine"),
        std::string("copy DtoH engine")}) {
    EXPECT_EQ(names.count(want), 1u) << want;
  }
  // Each engine op twice (its stream's lane and its engine's), the event once.
  EXPECT_EQ(work.size(), 2u * 4 + 1);
  for (const nlohmann::json& ev : work) {
    const uint64_t seq = ev["args"]["seq"];
    const TimelineRecord* r = nullptr;
    for (const TimelineRecord& rec : records) {
      if (rec.seq == seq) r = &rec;
    }
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(ev["name"], r->name);
    if (ev["ph"] == "X") {
      EXPECT_NEAR(ev["ts"].get<double>(), r->start_ns / 1000.0, 0.001);
      EXPECT_NEAR(ev["dur"].get<double>(), (r->end_ns - r->start_ns) / 1000.0, 0.002);
      const std::string lane = lanes[{ev["pid"].get<int>(), ev["tid"].get<int>()}];
      EXPECT_TRUE(lane == stream_lane || lane.find("engine") != std::string::npos) << lane;
    } else {
      EXPECT_EQ(ev["ph"], "i");
      EXPECT_EQ(r->kind, OpKind::Event);
    }
    if (r->kind == OpKind::Copy) {
      EXPECT_EQ(ev["args"]["bytes"], r->bytes);
    }
    if (r->kind == OpKind::Kernel) {
      EXPECT_EQ(ev["args"]["grid"], "[4,1,1]");
    }
  }
  // The host lane: the staging of the pageable source, three enqueue marks, and the wait
  // for the pageable copy back.
  ASSERT_EQ(host.size(), 5u);
  EXPECT_EQ(host[0]["ph"], "X");
  EXPECT_EQ(host[0]["name"].get<std::string>().rfind("stages HtoD 4.0 KiB", 0), 0u);
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(host[i]["ph"], "i");
    EXPECT_EQ(host[i]["name"].get<std::string>().rfind("enqueue ", 0), 0u);
  }
  EXPECT_EQ(host[4]["ph"], "X");
  EXPECT_EQ(host[4]["name"].get<std::string>().rfind("waits for DtoH 4.0 KiB", 0), 0u);
  EXPECT_NEAR(host[4]["dur"].get<double>(), (records[4].end_ns - records[4].enqueue_ns) / 1000.0,
              0.002);
}

TEST(SimTimeline, WriteChromeTraceWritesTheSameJson) {
  Program p;
  sim().clear_timeline();
  p.run();
  char path[] = "/tmp/glass_sim_trace_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  sim().write_chrome_trace(path);
  std::ifstream in(path);
  const nlohmann::json written = nlohmann::json::parse(in);
  std::remove(path);
  EXPECT_EQ(written, nlohmann::json::parse(sim().chrome_trace_json()));
  const std::string msg = error_of([] { sim().write_chrome_trace("/nonexistent-dir/trace.json"); });
  EXPECT_NE(msg.find("/nonexistent-dir/trace.json"), std::string::npos) << msg;
}

}  // namespace
}  // namespace glass::cuda::sim
