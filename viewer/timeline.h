// viewer/timeline.h — what the simulated GPU did, as lanes of spans: the model that the
// timeline panel (app/timeline_panel.cpp) and `glass-dot --timeline` draw.
//
// A Timeline is made from the simulator's records (cuda/sim/timeline.h), live or from the
// Chrome trace JSON that write_chrome_trace() wrote; both give the same ops, so the same
// lanes and spans. It has, as Perfetto shows the trace:
//   - the host lane: where each op was enqueued. Most ops are a mark there (the host
//     enqueued and got control back at once); a pageable host-to-device copy is a span
//     (the host staged the source before the call returned), and a pageable device-to-host
//     copy is a span until the copy ended (the host waited);
//   - per device, one lane per stream (every op on it, one after another) and one per
//     engine (compute, copy HtoD, copy DtoH: the ops it ran, from any stream).
// An op that ran on an engine appears twice, in its stream's lane and in its engine's,
// start to end; an event op runs on no engine and is a mark in its stream's lane.
//
//   glass::viz::Timeline t = glass::viz::timeline_from_simulator();   // or load_timeline(path)
//   std::string svg = glass::viz::timeline_to_svg(t);
//
// Invariants: ops are in enqueue order (ascending seq, no two alike); lanes are the host's,
// then per device (ascending) its streams by id, then its engines; spans are sorted by
// (lane, start_ns, op); spans of one lane that overlap in time have different rows (every
// row < the lane's rows), so none hides another; every time lies in [t0_ns, t1_ns].
// Plain data: copying a Timeline copies everything, and nothing refers back to the
// simulator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/sim/timeline.h"

namespace glass::viz {

// One operation the device ran: the simulator's record, as it was written.
using TimelineOp = cuda::sim::TimelineRecord;

enum class LaneKind : uint8_t { Host, Stream, Engine };

struct TimelineLane {
  LaneKind kind = LaneKind::Host;
  int device = -1;     // -1 for the host lane
  int64_t stream = 0;  // the stream's id on its device (Stream lanes; 0 is the default stream)
  cuda::sim::Engine engine = cuda::sim::Engine::None;  // Engine lanes
  std::string name;  // "host", "cuda:0 stream 0 (default)", "cuda:0 copy HtoD engine"
  int rows = 1;      // sub-rows, so that overlapping spans sit one above the other
};

// Why a span is where it is.
enum class SpanRole : uint8_t {
  Run,      // the op running, in its stream's lane or its engine's (an event op: a mark)
  Enqueue,  // host lane: a mark where the host enqueued the op and went on
  Staging,  // host lane: the host copied a pageable source before returning (enqueue..returned)
  Wait,     // host lane: the host blocked until the op ended (enqueue..end)
};
const char* to_string(SpanRole role);  // "run", "enqueue", "staging", "wait"

struct TimelineSpan {
  size_t lane = 0;  // index into Timeline::lanes
  size_t op = 0;    // index into Timeline::ops
  SpanRole role = SpanRole::Run;
  int64_t start_ns = 0, end_ns = 0;
  int row = 0;        // within the lane; marks are always row 0 and drawn the lane's height
  bool mark = false;  // an instant (Enqueue, or an event op's Run), drawn as a tick, not a box
};

struct Timeline {
  std::vector<TimelineOp> ops;
  std::vector<TimelineLane> lanes;
  std::vector<TimelineSpan> spans;
  // The time range every span lies in (the earliest enqueue to the latest end), in the
  // simulator's clock: nanoseconds since it started. Axes count milliseconds from t0_ns.
  int64_t t0_ns = 0, t1_ns = 0;
  std::string source;  // where it came from: "simulator", or the trace file's path

  bool empty() const { return ops.empty(); }
  // The lane named `name`, or null.
  const TimelineLane* find_lane(std::string_view name) const;
  // Indices into spans: every span of one lane (in order), or of one op (its stream lane,
  // engine lane and host lane).
  std::vector<size_t> spans_in(size_t lane) const;
  std::vector<size_t> spans_of(size_t op) const;
};

// Builds the lanes and spans of a set of records (any order; they are sorted by seq).
// Throws glass::Error if two records share a seq, or a record ends before it starts.
Timeline timeline_from_records(std::vector<TimelineOp> ops, std::string source = "records");
// The simulated GPU's records so far (simulator().timeline(); creates the simulator if
// this process has none yet, so call it where the simulator serves kCUDA).
Timeline timeline_from_simulator();
// Parses Chrome trace JSON written by cuda::sim::Timeline::chrome_trace_json(). Each op is
// read back from its event in a device's lane (the args carry seq, device, stream, engine,
// kind, enqueue and return times, grid and block or bytes, pinned, host_waited); the host's
// events are derived from those and not read. A glass::Error names `source`, the event and
// what was wrong: not JSON, no "traceEvents" array, an event without the simulator's args
// (a trace from another profiler), a field of the wrong type.
Timeline timeline_from_chrome_trace(std::string_view json, std::string source = "trace");
// Reads and parses a trace file; a file that cannot be read is a glass::Error naming it.
Timeline load_timeline(const std::string& path);

// What a span is, in words: the label drawn in its box (the op's name) and the text shown
// on hover — the op, where it ran, its bytes (pinned or pageable) or grid and block, and
// its times in ms from t0 (enqueued, returned, start, end, duration).
std::string span_label(const Timeline& t, const TimelineSpan& s);
std::string span_details(const Timeline& t, const TimelineSpan& s);

// How a span is drawn, the same in the panel and the SVG: its fill (by op kind; the host's
// staging and waiting spans their own), hatched when a copy's host memory was pageable,
// outlined red when the host waited for it; `classes` names all of that for SVG.
struct TimelineColor {
  uint8_t r = 0, g = 0, b = 0;
};
struct SpanStyle {
  TimelineColor fill;
  bool hatched = false;  // a copy from or to pageable host memory (pinned ones are solid)
  bool waited = false;   // the host blocked until the op ended
  std::string classes;   // "span run copy pageable host-waited", "mark enqueue", ...
};
SpanStyle span_style(const Timeline& t, const TimelineSpan& s);

// "0.125 ms" for a time `ns` after t0; "42.0 us", "1.250 ms" for a duration.
std::string format_time_ms(int64_t ns_after_t0);
std::string format_duration(int64_t ns);

// A tick spacing for an axis `span_ns` long drawn `pixels` wide: 1, 2 or 5 times a power of
// ten nanoseconds, the smallest that keeps ticks at least `min_gap_px` apart.
int64_t tick_step_ns(int64_t span_ns, double pixels, double min_gap_px = 80);

struct TimelineSvgOptions {
  int width = 1200;       // pixels, label column included
  int label_width = 200;  // the column of lane names on the left
  int row_height = 22;    // one row of a lane
  std::string title;      // default: "timeline of <source>: N ops"
};

// The timeline as a standalone SVG document (no Graphviz): a time axis in ms, one band per
// lane with its name, a <rect class="span ..."> per span that is not a mark (the op's name
// inside when it fits, the hover text as its <title>), host enqueue marks and event marks
// as ticks, and a legend. Pinned copies are solid, pageable ones hatched; spans the host
// waited for have a red outline, and the host's staging and waiting spans are their own
// colours. The classes name what each shape is (kernel, copy, memset, pinned, pageable,
// host-waited, enqueue, staging, wait), so tests and stylesheets can find them.
std::string timeline_to_svg(const Timeline& t, const TimelineSvgOptions& options = {});

}  // namespace glass::viz
