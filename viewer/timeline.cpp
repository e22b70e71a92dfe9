// viewer/timeline.cpp — the timeline model: lanes and spans from the simulator's records,
// the Chrome trace read back into records, and spans described in words (timeline.h).
//
// Both sources go through timeline_from_records, so a trace file and the live simulator
// can only differ in the records themselves. The SVG rendering is in timeline_svg.cpp.
//
// [SECTION] lanes and spans   [SECTION] Chrome trace   [SECTION] words and colours
#include "viewer/timeline.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "cuda/sim/sim_runtime.h"

namespace glass::viz {

using cuda::CopyKind;
using cuda::sim::Engine;
using cuda::sim::OpKind;

const char* to_string(SpanRole role) {
  switch (role) {
    case SpanRole::Run: return "run";
    case SpanRole::Enqueue: return "enqueue";
    case SpanRole::Staging: return "staging";
    case SpanRole::Wait: return "wait";
  }
  return "?";
}

// [SECTION] lanes and spans -----------------------------------------------------------------

namespace {

constexpr Engine kEngines[] = {Engine::Compute, Engine::CopyHtoD, Engine::CopyDtoH};

std::string device_name(int device) { return "cuda:" + std::to_string(device); }

// The lane names follow the Chrome trace's thread names (cuda/sim/timeline.cpp), with the
// device in front, since here all devices share one list.
std::string stream_lane_name(int device, int64_t stream) {
  return device_name(device) + " stream " + std::to_string(stream) +
         (stream == 0 ? " (default)" : "");
}

std::string engine_lane_name(int device, Engine engine) {
  return device_name(device) + " " +
         (engine == Engine::Compute ? std::string("SMs (compute engine)")
                                    : std::string(to_string(engine)) + " engine");
}

// Gives each span of one lane (sorted by start) a row: the lowest row whose last span has
// ended by the time this one starts. Marks stay in row 0: they are drawn the lane's height.
int assign_rows(std::vector<TimelineSpan>& spans, size_t begin, size_t end) {
  std::vector<int64_t> row_end;  // per row, when its last span ends
  for (size_t i = begin; i < end; ++i) {
    TimelineSpan& s = spans[i];
    if (s.mark) continue;
    size_t r = 0;
    while (r < row_end.size() && row_end[r] > s.start_ns) ++r;
    if (r == row_end.size()) row_end.push_back(s.end_ns);
    row_end[r] = s.end_ns;
    s.row = static_cast<int>(r);
  }
  return std::max<int>(1, static_cast<int>(row_end.size()));
}

}  // namespace

const TimelineLane* Timeline::find_lane(std::string_view name) const {
  for (const TimelineLane& l : lanes)
    if (l.name == name) return &l;
  return nullptr;
}

std::vector<size_t> Timeline::spans_in(size_t lane) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].lane == lane) out.push_back(i);
  return out;
}

std::vector<size_t> Timeline::spans_of(size_t op) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].op == op) out.push_back(i);
  return out;
}

Timeline timeline_from_records(std::vector<TimelineOp> ops, std::string source) {
  std::sort(ops.begin(), ops.end(),
            [](const TimelineOp& a, const TimelineOp& b) { return a.seq < b.seq; });
  for (size_t i = 0; i < ops.size(); ++i) {
    const TimelineOp& o = ops[i];
    GLASS_CHECK(i == 0 || ops[i - 1].seq != o.seq, source, ": two operations have seq ", o.seq,
                " ('", ops[i - 1].name, "' and '", o.name,
                "'); each operation the simulator records has its own.");
    GLASS_CHECK(o.start_ns <= o.end_ns && o.enqueue_ns <= o.returned_ns, source, ": operation seq ",
                o.seq, " ('", o.name, "') ends before it starts (start ", o.start_ns, " ns, end ",
                o.end_ns, " ns, enqueued ", o.enqueue_ns, " ns, returned ", o.returned_ns, " ns).");
    GLASS_CHECK(o.device >= 0 && o.stream >= 0, source, ": operation seq ", o.seq, " ('", o.name,
                "') has device ", o.device, " and stream ", o.stream, "; both must be 0 or more.");
  }
  Timeline t;
  t.source = std::move(source);
  t.ops = std::move(ops);

  // Lanes: the host, then each device's streams (by id) and engines (in kEngines' order).
  std::map<std::tuple<LaneKind, int, int64_t, Engine>, size_t> index;
  t.lanes.push_back({.kind = LaneKind::Host, .name = "host"});
  std::set<int> devices;
  std::set<std::pair<int, int64_t>> streams;
  std::set<std::pair<int, Engine>> engines;
  for (const TimelineOp& o : t.ops) {
    devices.insert(o.device);
    streams.insert({o.device, o.stream});
    if (o.engine != Engine::None) engines.insert({o.device, o.engine});
  }
  for (int d : devices) {
    for (const auto& [sd, s] : streams)
      if (sd == d) {
        index[{LaneKind::Stream, d, s, Engine::None}] = t.lanes.size();
        t.lanes.push_back(
            {.kind = LaneKind::Stream, .device = d, .stream = s, .name = stream_lane_name(d, s)});
      }
    for (Engine e : kEngines)
      if (engines.count({d, e})) {
        index[{LaneKind::Engine, d, 0, e}] = t.lanes.size();
        t.lanes.push_back(
            {.kind = LaneKind::Engine, .device = d, .engine = e, .name = engine_lane_name(d, e)});
      }
  }

  // Spans: each op where it ran (its stream, its engine) and where the host enqueued it. The
  // host's side is what the Chrome trace shows: a wait, a staging span, or a mark.
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const TimelineOp& o = t.ops[i];
    const bool instant = o.engine == Engine::None;  // an event: completes in the stream itself
    const size_t stream_lane = index.at({LaneKind::Stream, o.device, o.stream, Engine::None});
    t.spans.push_back({.lane = stream_lane,
                       .op = i,
                       .start_ns = instant ? o.end_ns : o.start_ns,
                       .end_ns = o.end_ns,
                       .mark = instant});
    if (!instant)
      t.spans.push_back({.lane = index.at({LaneKind::Engine, o.device, 0, o.engine}),
                         .op = i,
                         .start_ns = o.start_ns,
                         .end_ns = o.end_ns});
    if (o.host_waited)
      t.spans.push_back({.lane = 0,
                         .op = i,
                         .role = SpanRole::Wait,
                         .start_ns = o.enqueue_ns,
                         .end_ns = std::max(o.end_ns, o.enqueue_ns)});
    else if (o.kind == OpKind::Copy && !o.pinned && o.copy_kind == CopyKind::HostToDevice)
      t.spans.push_back({.lane = 0,
                         .op = i,
                         .role = SpanRole::Staging,
                         .start_ns = o.enqueue_ns,
                         .end_ns = o.returned_ns});
    else
      t.spans.push_back({.lane = 0,
                         .op = i,
                         .role = SpanRole::Enqueue,
                         .start_ns = o.enqueue_ns,
                         .end_ns = o.enqueue_ns,
                         .mark = true});
  }
  std::sort(t.spans.begin(), t.spans.end(), [](const TimelineSpan& a, const TimelineSpan& b) {
    return std::tie(a.lane, a.start_ns, a.op) < std::tie(b.lane, b.start_ns, b.op);
  });
  for (size_t begin = 0; begin < t.spans.size();) {
    size_t end = begin;
    while (end < t.spans.size() && t.spans[end].lane == t.spans[begin].lane) ++end;
    t.lanes[t.spans[begin].lane].rows = assign_rows(t.spans, begin, end);
    begin = end;
  }
  if (!t.spans.empty()) {
    t.t0_ns = t.spans.front().start_ns;
    t.t1_ns = t.spans.front().end_ns;
    for (const TimelineSpan& s : t.spans) {
      t.t0_ns = std::min(t.t0_ns, s.start_ns);
      t.t1_ns = std::max(t.t1_ns, s.end_ns);
    }
  }
  return t;
}

Timeline timeline_from_simulator() {
  return timeline_from_records(cuda::sim::simulator().timeline(), "simulator");
}

// [SECTION] Chrome trace --------------------------------------------------------------------

namespace {

using nlohmann::json;

// Reads one trace back; every failure names the source and the event.
class TraceReader {
 public:
  explicit TraceReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(source_ + ": " + what +
                ". glass-dot --timeline and glass-viewer --timeline read the Chrome trace "
                "JSON that glasstorch's simulated GPU writes "
                "(glass::cuda::sim::simulator().write_chrome_trace(path)).");
  }

  std::vector<TimelineOp> read(std::string_view text) {
    json doc;
    try {
      doc = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
      fail(std::string("not valid JSON (") + e.what() + ")");
    }
    if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
      fail("not a Chrome trace: expected a JSON object with a \"traceEvents\" array");
    const json& events = doc["traceEvents"];
    std::vector<TimelineOp> ops;
    std::set<uint64_t> seen;
    for (size_t i = 0; i < events.size(); ++i) {
      where_ = "traceEvents[" + std::to_string(i) + "]";
      const json& ev = events[i];
      if (!ev.is_object()) fail(where_ + " is not an object");
      const std::string ph = text_field(ev, "ph");
      if (ph == "M") continue;  // process and thread names: the lanes are rebuilt from the ops
      if (ev.contains("name") && ev["name"].is_string())
        where_ += " (\"" + ev["name"].get<std::string>() + "\")";
      // pid 0 is the host's process: its events are derived from the ops' own.
      if (integer_field(ev, "pid") == 0) continue;
      if (ph != "X" && ph != "i")
        fail(where_ + " has phase \"" + ph +
             "\"; the simulator writes only complete (\"X\") and instant (\"i\") events");
      if (!ev.contains("args") || !ev["args"].is_object() || !ev["args"].contains("seq"))
        fail(where_ + " has no args.seq, so it was not written by the simulated GPU");
      const json& args = ev["args"];
      TimelineOp o;
      o.seq = static_cast<uint64_t>(integer_field(args, "seq"));
      // An op that ran on an engine is written twice, in its stream's lane and its engine's,
      // with the same times and args; the first is enough.
      if (!seen.insert(o.seq).second) continue;
      o.name = text_field(ev, "name");
      o.device = static_cast<int>(integer_field(args, "device"));
      o.stream = integer_field(args, "stream");
      o.engine = engine_of(text_field(args, "engine"));
      o.kind = kind_of(text_field(args, "kind"));
      o.enqueue_ns = nanos(number_field(args, "enqueue_us"));
      o.returned_ns = nanos(number_field(args, "returned_us"));
      o.start_ns = nanos(number_field(ev, "ts"));
      o.end_ns = ph == "X" ? o.start_ns + nanos(number_field(ev, "dur")) : o.start_ns;
      if (o.kind == OpKind::Kernel) {
        o.grid = dims_of(args, "grid");
        o.block = dims_of(args, "block");
      }
      if (args.contains("bytes")) o.bytes = static_cast<uint64_t>(integer_field(args, "bytes"));
      if (args.contains("pinned")) o.pinned = flag_field(args, "pinned");
      if (args.contains("host_waited")) o.host_waited = flag_field(args, "host_waited");
      // The copy's direction is its engine's: HtoD and DtoH have their own copy engines, and
      // a device-to-device copy runs on the SMs (cuda/sim/sim_copies.cpp).
      o.copy_kind = o.engine == Engine::CopyHtoD   ? CopyKind::HostToDevice
                    : o.engine == Engine::CopyDtoH ? CopyKind::DeviceToHost
                                                   : CopyKind::DeviceToDevice;
      ops.push_back(std::move(o));
    }
    return ops;
  }

 private:
  const json& field(const json& obj, const char* name) const {
    if (!obj.contains(name)) fail(where_ + " has no \"" + name + "\"");
    return obj[name];
  }
  std::string text_field(const json& obj, const char* name) const {
    const json& v = field(obj, name);
    if (!v.is_string()) fail(where_ + ": \"" + name + "\" is " + v.dump() + ", not a string");
    return v.get<std::string>();
  }
  int64_t integer_field(const json& obj, const char* name) const {
    const json& v = field(obj, name);
    if (!v.is_number_integer())
      fail(where_ + ": \"" + name + "\" is " + v.dump() + ", not an integer");
    return v.get<int64_t>();
  }
  double number_field(const json& obj, const char* name) const {
    const json& v = field(obj, name);
    if (!v.is_number()) fail(where_ + ": \"" + name + "\" is " + v.dump() + ", not a number");
    return v.get<double>();
  }
  bool flag_field(const json& obj, const char* name) const {
    const json& v = field(obj, name);
    if (!v.is_boolean()) fail(where_ + ": \"" + name + "\" is " + v.dump() + ", not true/false");
    return v.get<bool>();
  }
  // The writer prints microseconds with three decimals: nanoseconds, exactly.
  static int64_t nanos(double us) { return std::llround(us * 1000.0); }
  Engine engine_of(const std::string& s) const {
    for (Engine e : {Engine::Compute, Engine::CopyHtoD, Engine::CopyDtoH, Engine::None})
      if (s == to_string(e)) return e;
    fail(where_ + ": unknown engine \"" + s +
         "\" (the simulator's are \"compute\", \"copy HtoD\", \"copy DtoH\", \"none\")");
  }
  OpKind kind_of(const std::string& s) const {
    for (OpKind k : {OpKind::Kernel, OpKind::Copy, OpKind::Memset, OpKind::Event})
      if (s == to_string(k)) return k;
    fail(where_ + ": unknown kind \"" + s +
         "\" (the simulator's are \"kernel\", \"copy\", \"memset\", \"event\")");
  }
  cuda::Dim3 dims_of(const json& args, const char* name) const {
    const std::string s = text_field(args, name);
    unsigned x = 0, y = 0, z = 0;
    char end = 0;
    if (std::sscanf(s.c_str(), "[%u,%u,%u%c", &x, &y, &z, &end) != 4 || end != ']')
      fail(where_ + ": \"" + name + "\" is \"" + s + "\", expected \"[x,y,z]\"");
    return cuda::Dim3(x, y, z);
  }

  std::string source_;
  std::string where_;  // the event being read, for messages
};

}  // namespace

Timeline timeline_from_chrome_trace(std::string_view json_text, std::string source) {
  TraceReader reader(source);
  return timeline_from_records(reader.read(json_text), std::move(source));
}

Timeline load_timeline(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  GLASS_CHECK(in.good(), "cannot read the trace file '", path, "' (", std::strerror(errno),
              "). Write one with glass::cuda::sim::simulator().write_chrome_trace(path).");
  std::ostringstream text;
  text << in.rdbuf();
  GLASS_CHECK(!in.bad(), "reading the trace file '", path, "' failed (", std::strerror(errno),
              ").");
  return timeline_from_chrome_trace(text.str(), path);
}

// [SECTION] words and colours ---------------------------------------------------------------

std::string format_time_ms(int64_t ns_after_t0) {
  char text[48];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(ns_after_t0) / 1e6);
  return text;
}

std::string format_duration(int64_t ns) {
  char text[48];
  if (ns < 1000)
    std::snprintf(text, sizeof text, "%lld ns", static_cast<long long>(ns));
  else if (ns < 1000000)
    std::snprintf(text, sizeof text, "%.1f us", static_cast<double>(ns) / 1e3);
  else
    std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(ns) / 1e6);
  return text;
}

int64_t tick_step_ns(int64_t span_ns, double pixels, double min_gap_px) {
  if (span_ns <= 0 || pixels <= 0) return 1;
  const double smallest = static_cast<double>(span_ns) * min_gap_px / pixels;
  for (int64_t decade = 1;; decade *= 10)
    for (int64_t m : {1, 2, 5})
      if (static_cast<double>(m * decade) >= smallest || decade > INT64_MAX / 100)
        return m * decade;
}

std::string span_label(const Timeline& t, const TimelineSpan& s) {
  const TimelineOp& o = t.ops[s.op];
  switch (s.role) {
    case SpanRole::Staging: return "stages " + o.name;
    case SpanRole::Wait: return "waits for " + o.name;
    default: return o.name;
  }
}

namespace {

std::string dims(const cuda::Dim3& d) {
  return "[" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + "]";
}

}  // namespace

std::string span_details(const Timeline& t, const TimelineSpan& s) {
  const TimelineOp& o = t.ops[s.op];
  auto at = [&](int64_t ns) { return format_time_ms(ns - t.t0_ns); };
  std::ostringstream out;
  out << o.name << "\n" << to_string(o.kind) << " on " << stream_lane_name(o.device, o.stream);
  if (o.engine != Engine::None)
    out << ", " << (o.engine == Engine::Compute ? "compute" : to_string(o.engine)) << " engine";
  out << "\n";
  switch (o.kind) {
    case OpKind::Kernel:
      out << "grid " << dims(o.grid) << "  block " << dims(o.block) << "  ("
          << o.grid.count() * o.block.count() << " threads)\n";
      break;
    case OpKind::Copy:
      out << o.bytes << " bytes (" << cuda::sim::format_bytes(o.bytes) << ") "
          << cuda::to_string(o.copy_kind);
      if (o.copy_kind != CopyKind::DeviceToDevice)
        out << ", " << (o.pinned ? "pinned" : "pageable") << " host memory";
      out << "\n";
      break;
    case OpKind::Memset:
      out << o.bytes << " bytes (" << cuda::sim::format_bytes(o.bytes) << ")\n";
      break;
    case OpKind::Event: break;
  }
  out << "enqueued at " << at(o.enqueue_ns) << ", the call returned after "
      << format_duration(o.returned_ns - o.enqueue_ns) << "\n";
  if (o.engine == Engine::None)
    out << "completed at " << at(o.end_ns);
  else
    out << "ran " << at(o.start_ns) << " to " << at(o.end_ns) << " ("
        << format_duration(o.end_ns - o.start_ns) << ")";
  switch (s.role) {
    case SpanRole::Run:
      if (o.host_waited) out << "\nthe host waited for it (pageable memory)";
      break;
    case SpanRole::Enqueue: out << "\nthe host enqueued it and went on"; break;
    case SpanRole::Staging:
      out << "\nthe host staged the pageable source for " << format_duration(s.end_ns - s.start_ns)
          << " before the call returned";
      break;
    case SpanRole::Wait:
      out << "\nthe host waited " << format_duration(s.end_ns - s.start_ns)
          << " for it to finish (a copy into pageable memory blocks)";
      break;
  }
  return out.str();
}

SpanStyle span_style(const Timeline& t, const TimelineSpan& s) {
  const TimelineOp& o = t.ops[s.op];
  SpanStyle style;
  switch (s.role) {
    case SpanRole::Enqueue:
      style.fill = {70, 70, 70};
      style.classes = "mark enqueue";
      return style;
    case SpanRole::Staging:
      style.fill = {232, 163, 61};
      style.hatched = true;  // the host copying pageable memory: the same hatch as its copy
      style.classes = "span host staging pageable";
      return style;
    case SpanRole::Wait:
      style.fill = {228, 87, 86};
      style.waited = true;
      style.classes = "span host wait host-waited";
      return style;
    case SpanRole::Run: break;
  }
  if (s.mark) {
    style.fill = {30, 30, 30};
    style.classes = "mark event";
    return style;
  }
  style.classes = std::string("span run ") + to_string(o.kind);
  switch (o.kind) {
    case OpKind::Kernel: style.fill = {76, 120, 168}; break;
    case OpKind::Memset: style.fill = {157, 125, 189}; break;
    case OpKind::Event: style.fill = {30, 30, 30}; break;
    case OpKind::Copy:
      style.fill = o.copy_kind == CopyKind::HostToDevice   ? TimelineColor{84, 162, 75}
                   : o.copy_kind == CopyKind::DeviceToHost ? TimelineColor{47, 158, 143}
                                                           : TimelineColor{178, 121, 162};
      if (o.copy_kind != CopyKind::DeviceToDevice) {
        style.hatched = !o.pinned;
        style.classes += o.pinned ? " pinned" : " pageable";
      }
      break;
  }
  if (o.host_waited) {
    style.waited = true;
    style.classes += " host-waited";
  }
  return style;
}

}  // namespace glass::viz
