// tests/viewer/timeline_test.cpp — the timeline model, its Chrome trace reader and its SVG
// (viewer/timeline.h).
//
// A hand-made set of records fixes the lanes, their order, the host's marks and spans, and
// the rows that keep overlapping spans apart; a real simulator run (a copy on one stream,
// a kernel on another) is written as a Chrome trace and read back into the same ops and
// spans; the SVG is checked for a box per span, a label per lane and the shapes that tell
// pinned, pageable and host-waited copies apart.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glass/glass.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "cuda/sim/sim_runtime.h"
#include "viewer/timeline.h"
#include "viewer/timeline_test_util.h"

namespace glass::viz {
namespace {

using cuda::CopyKind;
using cuda::sim::Engine;
using cuda::sim::OpKind;
using testing::hand_made;

size_t lane_index(const Timeline& t, const std::string& name) {
  const TimelineLane* l = t.find_lane(name);
  EXPECT_NE(l, nullptr) << "no lane " << name;
  return l == nullptr ? 0 : static_cast<size_t>(l - t.lanes.data());
}

std::vector<std::string> names_in(const Timeline& t, const std::string& lane) {
  std::vector<std::string> out;
  for (size_t i : t.spans_in(lane_index(t, lane))) out.push_back(t.ops[t.spans[i].op].name);
  return out;
}

bool overlap(const TimelineSpan& a, const TimelineSpan& b) {
  return a.start_ns < b.end_ns && b.start_ns < a.end_ns;
}

TEST(Timeline, LanesAreTheHostThenEachDevicesStreamsThenItsEngines) {
  const Timeline t = timeline_from_records(hand_made());
  std::vector<std::string> lanes;
  for (const TimelineLane& l : t.lanes) lanes.push_back(l.name);
  EXPECT_EQ(lanes, (std::vector<std::string>{
                       "host", "cuda:0 stream 0 (default)", "cuda:0 stream 1", "cuda:0 stream 2",
                       "cuda:0 stream 3", "cuda:0 SMs (compute engine)", "cuda:0 copy HtoD engine",
                       "cuda:0 copy DtoH engine", "cuda:1 stream 0 (default)",
                       "cuda:1 SMs (compute engine)"}));
  EXPECT_EQ(t.lanes[0].kind, LaneKind::Host);
  EXPECT_EQ(t.lanes[2].kind, LaneKind::Stream);
  EXPECT_EQ(t.lanes[2].stream, 1);
  EXPECT_EQ(t.lanes[6].kind, LaneKind::Engine);
  EXPECT_EQ(t.lanes[6].engine, Engine::CopyHtoD);
  for (size_t i = 0; i + 1 < t.ops.size(); ++i) EXPECT_LT(t.ops[i].seq, t.ops[i + 1].seq);
  EXPECT_EQ(t.t0_ns, 100);   // the first enqueue
  EXPECT_EQ(t.t1_ns, 2600);  // the last end
}

TEST(Timeline, EachOpRunsInItsStreamAndEngineAndTheHostEnqueuedIt) {
  const Timeline t = timeline_from_records(hand_made());
  EXPECT_EQ(names_in(t, "cuda:0 stream 1"),
            (std::vector<std::string>{"HtoD 4.0 KiB", "DtoH 4.0 KiB"}));
  EXPECT_EQ(names_in(t, "cuda:0 stream 2"), (std::vector<std::string>{"scale", "record event 0"}));
  EXPECT_EQ(names_in(t, "cuda:0 SMs (compute engine)"), (std::vector<std::string>{"scale", "add"}));
  EXPECT_EQ(names_in(t, "cuda:0 copy HtoD engine"),
            (std::vector<std::string>{"HtoD 4.0 KiB", "HtoD 1.0 KiB"}));
  // Spans sorted by lane, then start.
  for (size_t i = 0; i + 1 < t.spans.size(); ++i) {
    const TimelineSpan &a = t.spans[i], &b = t.spans[i + 1];
    EXPECT_TRUE(a.lane < b.lane || (a.lane == b.lane && a.start_ns <= b.start_ns));
  }
  // An engine op: stream, engine and host; an event: its stream and the host.
  for (size_t o = 0; o < t.ops.size(); ++o)
    EXPECT_EQ(t.spans_of(o).size(), t.ops[o].engine == Engine::None ? 2u : 3u) << t.ops[o].name;
  // The host: a mark per op enqueued and returned at once, a wait for the pageable copy back,
  // a staging span for the pageable copy in.
  int marks = 0;
  for (size_t i : t.spans_in(0)) {
    const TimelineSpan& s = t.spans[i];
    const TimelineOp& o = t.ops[s.op];
    if (o.name == "DtoH 4.0 KiB") {
      EXPECT_EQ(s.role, SpanRole::Wait);
      EXPECT_EQ(s.start_ns, 1300);
      EXPECT_EQ(s.end_ns, 2000);
    } else if (o.name == "HtoD 1.0 KiB") {
      EXPECT_EQ(s.role, SpanRole::Staging);
      EXPECT_EQ(s.end_ns, 2300);
    } else {
      EXPECT_EQ(s.role, SpanRole::Enqueue);
      EXPECT_TRUE(s.mark);
      EXPECT_EQ(s.start_ns, o.enqueue_ns);
      ++marks;
    }
  }
  EXPECT_EQ(marks, 5);
  // The event is a mark in its stream, where it completed.
  for (size_t i : t.spans_of(3))
    if (t.spans[i].role == SpanRole::Run) {
      EXPECT_TRUE(t.spans[i].mark);
      EXPECT_EQ(t.spans[i].start_ns, 900);
    }
}

TEST(Timeline, OverlappingSpansOfOneLaneGetTheirOwnRows) {
  const Timeline t = timeline_from_records(hand_made());
  const size_t sms = lane_index(t, "cuda:0 SMs (compute engine)");
  EXPECT_EQ(t.lanes[sms].rows, 2);  // scale (300-900) and add (500-1500) ran at once
  std::vector<size_t> run = t.spans_in(sms);
  ASSERT_EQ(run.size(), 2u);
  EXPECT_TRUE(overlap(t.spans[run[0]], t.spans[run[1]]));
  EXPECT_NE(t.spans[run[0]].row, t.spans[run[1]].row);
  for (const TimelineLane& l : t.lanes)
    if (l.kind == LaneKind::Stream) {
      EXPECT_EQ(l.rows, 1) << l.name;  // a stream runs its ops one after another
    }
  // Across lanes, overlap is the point: the copy on stream 1 runs while the kernel on
  // stream 2 does.
  const TimelineSpan& copy = t.spans[t.spans_in(lane_index(t, "cuda:0 copy HtoD engine"))[0]];
  EXPECT_TRUE(overlap(copy, t.spans[run[0]]));
  for (const TimelineSpan& s : t.spans) {
    EXPECT_LT(s.row, t.lanes[s.lane].rows);
    EXPECT_GE(s.start_ns, t.t0_ns);
    EXPECT_LE(s.end_ns, t.t1_ns);
  }
}

TEST(Timeline, BadRecordsAreNamed) {
  std::vector<TimelineOp> twice = hand_made();
  twice[1].seq = twice[0].seq;
  try {
    timeline_from_records(twice);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("two operations have seq 6"), std::string::npos)
        << e.what();
  }
  std::vector<TimelineOp> backwards = hand_made();
  backwards[0].end_ns = backwards[0].start_ns - 1;
  EXPECT_THROW(timeline_from_records(backwards), Error);
}

TEST(Timeline, DetailsSayWhatRanWhereAndWhen) {
  const Timeline t = timeline_from_records(hand_made());
  const TimelineSpan& kernel = t.spans[t.spans_in(lane_index(t, "cuda:0 stream 2"))[0]];
  const std::string k = span_details(t, kernel);
  EXPECT_NE(k.find("scale\nkernel on cuda:0 stream 2, compute engine"), std::string::npos) << k;
  EXPECT_NE(k.find("grid [4,1,1]  block [256,1,1]  (1024 threads)"), std::string::npos) << k;
  EXPECT_NE(k.find("enqueued at 0.000 ms"), std::string::npos) << k;  // 120 ns after t0
  EXPECT_NE(k.find("ran 0.000 ms to 0.001 ms (600 ns)"), std::string::npos) << k;
  const TimelineSpan& copy = t.spans[t.spans_in(lane_index(t, "cuda:0 stream 1"))[0]];
  EXPECT_NE(span_details(t, copy).find("4096 bytes (4.0 KiB) HtoD, pinned host memory"),
            std::string::npos);
  const TimelineSpan& back = t.spans[t.spans_in(lane_index(t, "cuda:0 stream 1"))[1]];
  EXPECT_NE(span_details(t, back).find("pageable host memory"), std::string::npos);
  EXPECT_NE(span_details(t, back).find("the host waited for it"), std::string::npos);
  for (size_t i : t.spans_in(0))
    if (t.spans[i].role == SpanRole::Staging) {
      EXPECT_EQ(span_label(t, t.spans[i]), "stages HtoD 1.0 KiB");
    }
}

TEST(Timeline, TimesAndTicks) {
  EXPECT_EQ(format_time_ms(1'250'000), "1.250 ms");
  EXPECT_EQ(format_duration(640), "640 ns");
  EXPECT_EQ(format_duration(42'000), "42.0 us");
  EXPECT_EQ(format_duration(3'500'000), "3.500 ms");
  EXPECT_EQ(tick_step_ns(1'000'000, 1000, 80), 100'000);  // 1 ms over 1000 px: 0.1 ms ticks
  EXPECT_EQ(tick_step_ns(1'000'000, 1000, 150), 200'000);
  EXPECT_EQ(tick_step_ns(0, 1000), 1);
}

// ---- the Chrome trace ------------------------------------------------------------------

// A copy on one stream and a kernel on another, on the simulated GPU.
std::vector<TimelineOp> run_two_streams() {
  cuda::use_simulator();
  cuda::sim::simulator().clear_timeline();
  cuda::CUDAStream copies = cuda::getStreamFromPool(), compute = cuda::getStreamFromPool();
  Tensor host = arange(4096).to(kFloat).pin_memory();
  Tensor a;
  {
    cuda::CUDAStreamGuard g(compute);
    a = ones({4096}, kCUDA);  // a fill kernel on the compute stream
    a = a + a;                // and an add
  }
  Tensor d;
  {
    cuda::CUDAStreamGuard g(copies);
    d = host.to(kCUDA, /*non_blocking=*/true);  // a pinned copy on the copy stream
  }
  cuda::synchronize();
  EXPECT_TRUE(equal(d.cpu(), host));
  return cuda::sim::simulator().timeline();
}

std::string temp_path(const char* name) {
  return ::testing::TempDir() + "glass_timeline_" + std::to_string(::getpid()) + "_" + name;
}

void expect_same_op(const TimelineOp& a, const TimelineOp& b) {
  SCOPED_TRACE(a.name);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.stream, b.stream);
  EXPECT_EQ(a.engine, b.engine);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.enqueue_ns, b.enqueue_ns);
  EXPECT_EQ(a.returned_ns, b.returned_ns);
  EXPECT_EQ(a.start_ns, b.start_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.grid.count(), b.grid.count());
  EXPECT_EQ(a.block.x, b.block.x);
  EXPECT_EQ(a.copy_kind, b.copy_kind);
  EXPECT_EQ(a.pinned, b.pinned);
  EXPECT_EQ(a.host_waited, b.host_waited);
}

TEST(TimelineTrace, ARealRunReadsBackAsTheSameSpans) {
  const std::vector<TimelineOp> records = run_two_streams();
  const std::string path = temp_path("two_streams.json");
  cuda::sim::simulator().write_chrome_trace(path);
  const Timeline live = timeline_from_records(records, "simulator");
  const Timeline loaded = load_timeline(path);
  std::remove(path.c_str());
  EXPECT_EQ(loaded.source, path);

  ASSERT_EQ(loaded.ops.size(), live.ops.size());
  for (size_t i = 0; i < live.ops.size(); ++i) expect_same_op(loaded.ops[i], live.ops[i]);
  ASSERT_EQ(loaded.lanes.size(), live.lanes.size());
  for (size_t i = 0; i < live.lanes.size(); ++i)
    EXPECT_EQ(loaded.lanes[i].name, live.lanes[i].name);
  ASSERT_EQ(loaded.spans.size(), live.spans.size());
  for (size_t i = 0; i < live.spans.size(); ++i) {
    EXPECT_EQ(loaded.spans[i].lane, live.spans[i].lane);
    EXPECT_EQ(loaded.spans[i].op, live.spans[i].op);
    EXPECT_EQ(loaded.spans[i].role, live.spans[i].role);
    EXPECT_EQ(loaded.spans[i].start_ns, live.spans[i].start_ns);
    EXPECT_EQ(loaded.spans[i].end_ns, live.spans[i].end_ns);
    EXPECT_EQ(loaded.spans[i].row, live.spans[i].row);
  }
  EXPECT_EQ(loaded.t0_ns, live.t0_ns);
  EXPECT_EQ(loaded.t1_ns, live.t1_ns);

  // The program's shape: the pinned copy on one stream, the kernels on another.
  const TimelineOp* copy = nullptr;
  const TimelineOp* kernel = nullptr;
  for (const TimelineOp& o : loaded.ops) {
    if (o.kind == OpKind::Copy && o.copy_kind == CopyKind::HostToDevice) copy = &o;
    if (o.kind == OpKind::Kernel) kernel = &o;
  }
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(kernel, nullptr);
  EXPECT_TRUE(copy->pinned);
  EXPECT_EQ(copy->bytes, 4096u * 4);
  EXPECT_NE(copy->stream, kernel->stream);
  EXPECT_GT(kernel->grid.count() * kernel->block.count(), 0u);
  EXPECT_NE(loaded.find_lane("cuda:0 copy HtoD engine"), nullptr);
  EXPECT_NE(loaded.find_lane("cuda:0 SMs (compute engine)"), nullptr);
}

std::string error_of(std::string_view json) {
  try {
    timeline_from_chrome_trace(json, "t.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TimelineTrace, BadTracesSayWhatIsWrong) {
  EXPECT_NE(error_of("{\"traceEvents\": [").find("t.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("[]").find("t.json: not a Chrome trace: expected a JSON object with a "
                                "\"traceEvents\" array"),
            std::string::npos);
  // Another profiler's trace: events without the simulator's args.
  const std::string foreign =
      error_of(R"({"traceEvents":[{"ph":"X","name":"aten::add","pid":7,"tid":7,"ts":1,"dur":2}]})");
  EXPECT_NE(foreign.find("traceEvents[0] (\"aten::add\") has no args.seq, so it was not written "
                         "by the simulated GPU"),
            std::string::npos)
      << foreign;
  const std::string wrong_type = error_of(
      R"({"traceEvents":[{"ph":"X","name":"k","pid":1,"tid":2,"ts":"soon","dur":2,
          "args":{"seq":0,"device":0,"stream":1,"engine":"compute","kind":"kernel",
                  "enqueue_us":0,"returned_us":0,"grid":"[1,1,1]","block":"[32,1,1]"}}]})");
  EXPECT_NE(wrong_type.find("traceEvents[0] (\"k\"): \"ts\" is \"soon\", not a number"),
            std::string::npos)
      << wrong_type;
  const std::string engine = error_of(
      R"({"traceEvents":[{"ph":"i","name":"e","pid":1,"tid":2,"ts":1,
          "args":{"seq":0,"device":0,"stream":1,"engine":"tensor cores","kind":"event",
                  "enqueue_us":0,"returned_us":0}}]})");
  EXPECT_NE(engine.find("unknown engine \"tensor cores\""), std::string::npos) << engine;
  // Every message says what the reader expects.
  EXPECT_NE(engine.find("write_chrome_trace"), std::string::npos);
  // Metadata only: a valid, empty timeline.
  EXPECT_TRUE(timeline_from_chrome_trace(R"({"traceEvents":[{"ph":"M","name":"process_name",
      "pid":0,"tid":0,"args":{"name":"host"}}]})")
                  .empty());
}

TEST(TimelineTrace, AMissingFileIsNamed) {
  try {
    load_timeline("/nonexistent/trace.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read the trace file '/nonexistent/trace.json'"),
              std::string::npos)
        << e.what();
  }
}

// ---- SVG --------------------------------------------------------------------------------

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TimelineSvg, ABoxPerSpanALabelPerLaneAndMarksForTheHost) {
  const Timeline t = timeline_from_records(hand_made());
  const std::string svg = timeline_to_svg(t);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  size_t boxes = 0, enqueues = 0, events = 0;
  for (const TimelineSpan& s : t.spans) {
    if (!s.mark) ++boxes;
    if (s.role == SpanRole::Enqueue) ++enqueues;
    if (s.role == SpanRole::Run && s.mark) ++events;
  }
  EXPECT_EQ(count(svg, "<rect class=\"span "), boxes);
  EXPECT_EQ(count(svg, "class=\"mark enqueue\""), enqueues);
  EXPECT_EQ(count(svg, "class=\"mark event\""), events);
  EXPECT_EQ(count(svg, "<text class=\"lane-label\""), t.lanes.size());
  for (const TimelineLane& l : t.lanes)
    EXPECT_NE(svg.find(">" + l.name + "</text>"), std::string::npos) << l.name;
  // Pinned and pageable copies, and what the host waited for, look different.
  EXPECT_EQ(count(svg, "<rect class=\"span run copy pinned\""), 2u);  // its stream and engine
  EXPECT_EQ(count(svg, "<rect class=\"span run copy pageable host-waited\""), 2u);
  EXPECT_EQ(count(svg, "<rect class=\"span run copy pageable\""), 2u);  // staged, not waited
  EXPECT_EQ(count(svg, "<rect class=\"span host wait host-waited\""), 1u);
  EXPECT_EQ(count(svg, "<rect class=\"span host staging pageable\""), 1u);
  EXPECT_NE(svg.find("fill=\"url(#hatch-"), std::string::npos);  // pageable: hatched
  EXPECT_NE(svg.find("stroke=\"#c0141e\""), std::string::npos);  // waited: red outline
  EXPECT_NE(svg.find(">0 ms</text>"), std::string::npos);        // the axis, in ms
  EXPECT_NE(svg.find("<title>scale\nkernel on cuda:0 stream 2"), std::string::npos);  // hover
  EXPECT_NE(svg.find(">scale</text>"), std::string::npos);  // a label inside its box
  EXPECT_EQ(svg, timeline_to_svg(t));                       // the same bytes every time
}

TEST(TimelineSvg, NamesAreEscapedAndAnEmptyTimelineSaysSo) {
  std::vector<TimelineOp> ops = hand_made();
  ops[0].name = "k<float> & \"more\"";
  const std::string svg = timeline_to_svg(timeline_from_records(ops));
  EXPECT_NE(svg.find("k&lt;float&gt; &amp; &quot;more&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("k<float>"), std::string::npos);
  const std::string empty = timeline_to_svg(timeline_from_records({}, "nothing"));
  EXPECT_NE(empty.find("no operations recorded"), std::string::npos);
  EXPECT_EQ(count(empty, "<rect class=\"span "), 0u);
}

// ---- glass-dot --timeline ------------------------------------------------------------------

struct ToolRun {
  int status = -1;
  std::string output;  // stdout and stderr
};

ToolRun glass_dot(const std::string& args) {
  ToolRun r;
  const std::string command = std::string(GLASS_DOT_TOOL) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) r.output.append(buffer, n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(GlassDotTimeline, DrawsATraceAsSvg) {
  const std::string out = temp_path("timeline.svg");
  const ToolRun r = glass_dot(std::string("--timeline ") + GLASS_TIMELINE_TRACE + " --out " + out);
  EXPECT_EQ(r.status, 0) << r.output;
  std::ifstream in(out);
  const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(out.c_str());
  const Timeline t = load_timeline(GLASS_TIMELINE_TRACE);
  EXPECT_EQ(svg, timeline_to_svg(t));  // the tool adds nothing of its own
  EXPECT_GT(count(svg, "<rect class=\"span run kernel\""), 0u);
  EXPECT_GT(count(svg, "<rect class=\"span run copy pinned\""), 0u);
}

TEST(GlassDotTimeline, BadFilesAndArgumentsAreUsageErrors) {
  const std::string not_a_trace = temp_path("not_a_trace.json");
  std::ofstream(not_a_trace)
      << R"({"traceEvents":[{"ph":"X","name":"aten::mm","pid":3,"tid":3,"ts":1,"dur":1}]})";
  const std::string trace = GLASS_TIMELINE_TRACE;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--timeline /nonexistent/trace.json",
       "cannot read the trace file '/nonexistent/trace.json' (No such file or directory)"},
      {"--timeline " + std::string(GLASS_DOT_TOOL), "not valid JSON"},  // a binary file
      {"--timeline " + not_a_trace, "has no args.seq, so it was not written by the simulated GPU"},
      {"--timeline " + trace + " --format png", "--timeline draws SVG only"},
      {"--timeline " + trace + " --out t.png", "--timeline draws SVG only"},
      {"--timeline " + trace + " --demo mlp", "--timeline draws a trace, not a graph"},
      {"--timeline " + trace + " --width 12", "--width needs a width in pixels from 300"},
      {"--demo mlp --width 800", "--width sizes a timeline: give --timeline TRACE.json"},
      {"--timeline", "--timeline needs a value"},
  };
  for (const auto& [args, message] : cases) {
    const ToolRun r = glass_dot(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("glass-dot --help shows the usage"), std::string::npos) << r.output;
  }
  std::remove(not_a_trace.c_str());
}

}  // namespace
}  // namespace glass::viz
