// cuda/sim/timeline.cpp — the record ring and the Chrome trace writer.
//
// Chrome's trace format (the "Trace Event Format"): complete events ("ph":"X", ts and
// dur in microseconds) for work, instant events ("ph":"i") for marks, and metadata
// events ("ph":"M") naming processes and threads. We map devices to processes and
// streams and engines to threads, so Perfetto draws one lane per stream and per engine;
// each operation appears twice, in its stream's lane and in its engine's lane.
#include "cuda/sim/timeline.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "core/error.h"

namespace glass::cuda::sim {

const char* to_string(Engine engine) {
  switch (engine) {
    case Engine::Compute: return "compute";
    case Engine::CopyHtoD: return "copy HtoD";
    case Engine::CopyDtoH: return "copy DtoH";
    case Engine::None: return "none";
  }
  return "?";
}

const char* to_string(OpKind kind) {
  switch (kind) {
    case OpKind::Kernel: return "kernel";
    case OpKind::Copy: return "copy";
    case OpKind::Memset: return "memset";
    case OpKind::Event: return "event";
  }
  return "?";
}

int64_t timeline_now_ns() {
  static const std::chrono::steady_clock::time_point epoch = std::chrono::steady_clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              epoch)
      .count();
}

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

Timeline::Timeline(size_t capacity) : capacity_(capacity) { GLASS_INTERNAL_ASSERT(capacity > 0); }

void Timeline::push(TimelineRecord record) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (record.seq < first_seq_) return;
  if (ring_.size() < capacity_) {
    ring_.push_back(std::move(record));
    return;
  }
  ring_[next_] = std::move(record);
  next_ = (next_ + 1) % capacity_;
  ++dropped_;
}

std::vector<TimelineRecord> Timeline::records() const {
  std::vector<TimelineRecord> out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out = ring_;
  }
  std::sort(out.begin(), out.end(),
            [](const TimelineRecord& a, const TimelineRecord& b) { return a.seq < b.seq; });
  return out;
}

void Timeline::clear(uint64_t first_seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  ring_.clear();
  next_ = 0;
  dropped_ = 0;
  first_seq_ = first_seq;
}

uint64_t Timeline::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

namespace {

// A JSON string literal.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
          out += esc;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Microseconds, as the format wants, keeping nanosecond precision.
std::string micros(int64_t ns) {
  char text[40];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(ns) / 1000.0);
  return text;
}

std::string dims(const Dim3& d) {
  return "[" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + "]";
}

constexpr int kHostPid = 0;
constexpr int64_t kEngineTid = 1000000;  // engine lanes sort after every stream lane

int device_pid(int device) { return device + 1; }
int64_t stream_tid(int64_t stream) { return stream + 1; }
int64_t engine_tid(Engine engine) { return kEngineTid + static_cast<int64_t>(engine); }

class TraceWriter {
 public:
  void metadata(const char* what, int pid, int64_t tid, const std::string& name) {
    begin();
    out_ << "{\"ph\":\"M\",\"name\":\"" << what << "\",\"pid\":" << pid << ",\"tid\":" << tid
         << ",\"args\":{\"name\":" << quoted(name) << "}}";
  }
  void sort_index(int pid, int64_t tid, int64_t index) {
    begin();
    out_ << "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" << pid << ",\"tid\":" << tid
         << ",\"args\":{\"sort_index\":" << index << "}}";
  }
  void complete(const std::string& name, const char* cat, int pid, int64_t tid, int64_t ts_ns,
                int64_t dur_ns, const std::string& args) {
    begin();
    out_ << "{\"ph\":\"X\",\"name\":" << quoted(name) << ",\"cat\":\"" << cat
         << "\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << micros(ts_ns)
         << ",\"dur\":" << micros(dur_ns) << ",\"args\":" << args << "}";
  }
  void instant(const std::string& name, const char* cat, int pid, int64_t tid, int64_t ts_ns,
               const std::string& args) {
    begin();
    out_ << "{\"ph\":\"i\",\"s\":\"t\",\"name\":" << quoted(name) << ",\"cat\":\"" << cat
         << "\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"ts\":" << micros(ts_ns)
         << ",\"args\":" << args << "}";
  }
  std::string finish() {
    out_ << "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":"
            "\"glasstorch simulated GPU\"}}\n";
    return out_.str();
  }

 private:
  void begin() {
    out_ << (first_ ? "\n" : ",\n");
    first_ = false;
  }
  std::ostringstream out_{"{\"traceEvents\":[", std::ios::ate};
  bool first_ = true;
};

std::string args_of(const TimelineRecord& r) {
  std::string a =
      "{\"seq\":" + std::to_string(r.seq) + ",\"device\":" + std::to_string(r.device) +
      ",\"stream\":" + std::to_string(r.stream) + ",\"engine\":" + quoted(to_string(r.engine)) +
      ",\"kind\":" + quoted(to_string(r.kind)) + ",\"enqueue_us\":" + micros(r.enqueue_ns) +
      ",\"returned_us\":" + micros(r.returned_ns);
  if (r.kind == OpKind::Kernel) {
    a += ",\"grid\":" + quoted(dims(r.grid)) + ",\"block\":" + quoted(dims(r.block));
    if (r.has_stats) {
      const KernelStats& s = r.stats;
      char intensity[32];
      std::snprintf(intensity, sizeof intensity, "%.6g", s.arithmetic_intensity());
      a += ",\"global_load_bytes\":" + std::to_string(s.global_load_bytes) +
           ",\"global_store_bytes\":" + std::to_string(s.global_store_bytes) +
           ",\"shared_loads\":" + std::to_string(s.shared_loads) +
           ",\"shared_stores\":" + std::to_string(s.shared_stores) +
           ",\"barriers\":" + std::to_string(s.barriers) +
           ",\"warp_syncs\":" + std::to_string(s.warp_syncs) +
           ",\"flops\":" + std::to_string(s.flops) + ",\"arithmetic_intensity\":" + intensity;
    }
  }
  if (r.kind == OpKind::Copy || r.kind == OpKind::Memset)
    a += ",\"bytes\":" + std::to_string(r.bytes);
  if (r.kind == OpKind::Copy) {
    a += std::string(",\"pinned\":") + (r.pinned ? "true" : "false") +
         ",\"host_waited\":" + (r.host_waited ? "true" : "false");
  }
  return a + "}";
}

}  // namespace

std::string Timeline::chrome_trace_json() const {
  const std::vector<TimelineRecord> recs = records();
  TraceWriter w;
  w.metadata("process_name", kHostPid, 0, "host");
  w.metadata("thread_name", kHostPid, 0, "host: enqueues, staging and waits");
  std::set<int> devices;
  std::set<std::pair<int, int64_t>> streams;
  std::set<std::pair<int, Engine>> engines;
  for (const TimelineRecord& r : recs) {
    devices.insert(r.device);
    streams.insert({r.device, r.stream});
    if (r.engine != Engine::None) engines.insert({r.device, r.engine});
  }
  for (int d : devices) {
    w.metadata("process_name", device_pid(d), 0, "cuda:" + std::to_string(d) + " (simulated)");
  }
  for (const auto& [d, s] : streams) {
    w.metadata("thread_name", device_pid(d), stream_tid(s),
               s == 0 ? std::string("stream 0 (default)") : "stream " + std::to_string(s));
    w.sort_index(device_pid(d), stream_tid(s), stream_tid(s));
  }
  for (const auto& [d, e] : engines) {
    w.metadata("thread_name", device_pid(d), engine_tid(e),
               e == Engine::Compute ? std::string("SMs (compute engine)")
                                    : std::string(to_string(e)) + " engine");
    w.sort_index(device_pid(d), engine_tid(e), engine_tid(e));
  }
  for (const TimelineRecord& r : recs) {
    const std::string args = args_of(r);
    const char* cat = to_string(r.kind);
    if (r.engine == Engine::None) {
      w.instant(r.name, cat, device_pid(r.device), stream_tid(r.stream), r.end_ns, args);
    } else {
      const int64_t dur = std::max<int64_t>(r.end_ns - r.start_ns, 0);
      w.complete(r.name, cat, device_pid(r.device), stream_tid(r.stream), r.start_ns, dur, args);
      w.complete(r.name, cat, device_pid(r.device), engine_tid(r.engine), r.start_ns, dur, args);
    }
    // The host's side: a mark where it enqueued, or the span it was held up.
    const std::string where =
        " (cuda:" + std::to_string(r.device) + " stream " + std::to_string(r.stream) + ")";
    if (r.host_waited) {
      w.complete("waits for " + r.name + where, "host", kHostPid, 0, r.enqueue_ns,
                 std::max<int64_t>(r.end_ns - r.enqueue_ns, 0), args);
    } else if (r.kind == OpKind::Copy && !r.pinned && r.copy_kind == CopyKind::HostToDevice) {
      w.complete("stages " + r.name + where, "host", kHostPid, 0, r.enqueue_ns,
                 std::max<int64_t>(r.returned_ns - r.enqueue_ns, 0), args);
    } else {
      w.instant("enqueue " + r.name + where, "host", kHostPid, 0, r.enqueue_ns, args);
    }
  }
  return w.finish();
}

void Timeline::write_chrome_trace(const std::string& path) const {
  const std::string json = chrome_trace_json();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  GLASS_CHECK(out.good(), "write_chrome_trace(\"", path, "\"): cannot open the file for writing (",
              std::strerror(errno), "). Check that the directory exists and is writable.");
  out << json;
  out.flush();
  GLASS_CHECK(out.good(), "write_chrome_trace(\"", path, "\"): writing failed (",
              std::strerror(errno), "); is the disk full?");
}

}  // namespace glass::cuda::sim
