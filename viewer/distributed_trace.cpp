// viewer/distributed_trace.cpp — EventTrace and the per-rank Chrome trace writer
// (distributed_trace.h).
//
// The subscription's callback runs on whichever thread published — backward's, a
// communication thread, a rank-thread — so everything it touches is behind one mutex, and
// it copies what it needs at once: an event's node pointer is only valid while the
// engine runs that node.
#include "viewer/distributed_trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/error.h"

namespace glass::viz {

namespace {

// A number no other thread of this process ever had.
uint64_t thread_serial() {
  static std::atomic<uint64_t> next{0};
  thread_local const uint64_t serial = next++;
  return serial;
}

bool is_message(events::Kind k) {
  return k == events::Kind::MessagePosted || k == events::Kind::MessageDone;
}

}  // namespace

struct EventTrace::State {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  mutable std::mutex mutex;
  std::vector<TracedEvent> events;
  // (rank, thread serial) -> number. A serial, not std::thread::id: the OS reuses ids once a
  // thread exits, so a new compute thread could inherit a dead communication thread's lane.
  std::map<std::pair<int, uint64_t>, int> thread_index;
  std::map<int, int> threads_of_rank;
  std::set<std::pair<int, int>> comm_threads;  // (rank, thread) that ran a collective
  std::unordered_map<const void*, std::string> parameter_names;  // by TensorImpl
  std::unordered_map<const void*, int64_t> open_messages;        // by Work: posted, not done
  int64_t messages = 0;                                          // posted so far

  int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start)
        .count();
  }

  // Runs on the publishing thread, while a BackwardNodeRun's node is alive.
  void record(const events::Event& e) {
    TracedEvent t;
    t.kind = e.kind;
    t.t_ns = now_ns();
    t.rank = e.rank;
    t.value = e.value;
    t.bytes = e.bytes;
    t.name = e.name ? e.name : "";
    const auto* node = e.kind == events::Kind::BackwardNodeRun
                           ? static_cast<const autograd::Node*>(e.ptr)
                           : nullptr;
    if (node) t.name = node->name();
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(node)) {
      auto it = parameter_names.find(acc->variable().unsafeGetTensorImpl());
      if (it != parameter_names.end()) t.name += " " + it->second;
    }
    if (is_message(t.kind)) {
      // A message belongs to its rank, not to a thread: its completion may be published by
      // a transport's thread (or another rank's, under the threads backend).
      t.thread = -1;
    } else {
      auto [it, added] = thread_index.try_emplace({t.rank, thread_serial()}, 0);
      if (added) it->second = threads_of_rank[t.rank]++;
      t.thread = it->second;
    }
    if (t.kind == events::Kind::CollectiveStep) comm_threads.insert({t.rank, t.thread});
    if (t.kind == events::Kind::MessagePosted) {
      t.message = open_messages[e.ptr] = ++messages;
    } else if (t.kind == events::Kind::MessageDone) {
      if (auto open = open_messages.find(e.ptr); open != open_messages.end()) {
        t.message = open->second;
        open_messages.erase(open);
      }
    }
    events.push_back(std::move(t));
  }
};

EventTrace::EventTrace() : state_(std::make_shared<State>()) {
  // The callback holds the state, not `this`: an event already being delivered when stop()
  // runs still finds it alive.
  subscription_ = events::subscribe([state = state_](const events::Event& e) { state->record(e); });
}

EventTrace::~EventTrace() { stop(); }

void EventTrace::stop() {
  if (subscription_ < 0) return;
  events::unsubscribe(subscription_);
  subscription_ = -1;
}

void EventTrace::name_parameters(const std::vector<std::pair<std::string, Tensor>>& parameters) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  for (const auto& [name, p] : parameters) state_->parameter_names[p.unsafeGetTensorImpl()] = name;
}

std::vector<TracedEvent> EventTrace::events() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  std::vector<TracedEvent> out = state_->events;
  for (TracedEvent& e : out) e.comm = state_->comm_threads.count({e.rank, e.thread}) > 0;
  return out;
}

int64_t EventTrace::now_ns() const { return state_->now_ns(); }

namespace {

constexpr int kNoRankPid = 1000;
constexpr int kCommTidBase = 100;

// Events that happen while a backward node runs (its ops, their memory, a bucket it
// filled); any other event on the thread means the node had finished.
bool inside_a_node(events::Kind k) {
  switch (k) {
    case events::Kind::OpDispatched:
    case events::Kind::KernelLaunched:
    case events::Kind::Allocation:
    case events::Kind::Free:
    case events::Kind::BucketReady: return true;
    default: return false;
  }
}

double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

// What a message's slice is called: "send to 1", "recv from 0" (peers are group ranks).
std::string message_name(const TracedEvent& posted) {
  return (posted.name == "send" ? "send to " : "recv from ") + std::to_string(posted.value);
}

}  // namespace

std::string chrome_trace_json(const std::vector<TracedEvent>& events,
                              const std::vector<TraceSpan>& spans) {
  using nlohmann::json;
  auto pid_of = [](int rank) { return rank >= 0 ? rank : kNoRankPid; };
  // Chrome's tid per (rank, thread): compute threads 0, 1, ...; communication 100, 101, ...
  std::map<std::pair<int, int>, int> tid;
  std::map<int, std::pair<int, int>> counts;  // rank -> (compute, comm) threads so far
  for (const TracedEvent& e : events) {
    // A message is its rank's async slice (hung, as Chrome does, on the rank's first row),
    // not a thread's: its completion may come from a transport's thread.
    if (is_message(e.kind)) counts.try_emplace(e.rank, 0, 0);
    if (is_message(e.kind) || tid.count({e.rank, e.thread})) continue;
    auto& [compute, comm] = counts[e.rank];
    tid[{e.rank, e.thread}] = e.comm ? kCommTidBase + comm++ : compute++;
  }
  // Spans go to the rank's first thread of their kind (made up if it published nothing).
  for (const TraceSpan& s : spans) counts.try_emplace(s.rank, 0, 0);

  json out = json::array();
  for (const auto& [rank, n] : counts) {
    const int pid = pid_of(rank);
    out.push_back({{"ph", "M"},
                   {"name", "process_name"},
                   {"pid", pid},
                   {"tid", 0},
                   {"args", {{"name", rank >= 0 ? "rank " + std::to_string(rank) : "no rank"}}}});
    out.push_back({{"ph", "M"},
                   {"name", "process_sort_index"},
                   {"pid", pid},
                   {"tid", 0},
                   {"args", {{"sort_index", pid}}}});
    const int compute = std::max(n.first, 1), comm = std::max(n.second, 1);
    for (int i = 0; i < compute; ++i)
      out.push_back({{"ph", "M"},
                     {"name", "thread_name"},
                     {"pid", pid},
                     {"tid", i},
                     {"args", {{"name", i == 0 ? "compute" : "compute " + std::to_string(i)}}}});
    for (int i = 0; i < comm; ++i)
      out.push_back(
          {{"ph", "M"},
           {"name", "thread_name"},
           {"pid", pid},
           {"tid", kCommTidBase + i},
           {"args", {{"name", i == 0 ? "communication" : "communication " + std::to_string(i)}}}});
  }

  std::map<int64_t, size_t> unfinished;  // message -> its MessagePosted's index
  int64_t last_ns = 0;  // the latest time: events arrive in order, their clock reads need not
  for (const TracedEvent& e : events) last_ns = std::max(last_ns, e.t_ns);
  for (size_t i = 0; i < events.size(); ++i) {
    const TracedEvent& e = events[i];
    if (is_message(e.kind)) {
      const bool begin = e.kind == events::Kind::MessagePosted;
      const auto open = unfinished.find(e.message);
      // A completion whose post the trace (or a caller's cut of it) does not hold: nothing.
      if (e.message == 0 || (!begin && open == unfinished.end())) continue;
      const TracedEvent& posted = begin ? e : events[open->second];
      json j = {{"name", message_name(posted)},
                {"cat", "message"},
                {"ph", begin ? "b" : "e"},
                {"id", e.message},
                {"pid", pid_of(posted.rank)},
                {"tid", 0},
                {"ts", us(e.t_ns)}};
      if (begin) {
        j["args"] = {{"bytes", e.bytes}, {"peer", e.value}};
        unfinished[e.message] = i;
      } else {
        unfinished.erase(e.message);
      }
      out.push_back(std::move(j));
      continue;
    }
    json j = {{"name", e.name.empty() ? events::to_string(e.kind) : e.name},
              {"cat", events::to_string(e.kind)},
              {"pid", pid_of(e.rank)},
              {"tid", tid.at({e.rank, e.thread})},
              {"ts", us(e.t_ns)},
              {"args", {{"value", e.value}, {"bytes", e.bytes}}}};
    if (e.kind == events::Kind::BackwardNodeRun) {
      int64_t end = e.t_ns;
      for (size_t k = i + 1; k < events.size(); ++k) {
        const TracedEvent& next = events[k];
        if (next.rank != e.rank || next.thread != e.thread || is_message(next.kind)) continue;
        end = next.t_ns;
        if (!inside_a_node(next.kind)) break;
      }
      j["ph"] = "X";
      j["dur"] = std::max(us(end - e.t_ns), 0.001);
    } else {
      j["ph"] = "i";
      j["s"] = "t";
    }
    out.push_back(std::move(j));
  }
  for (const auto& [message, i] : unfinished)
    out.push_back({{"name", message_name(events[i])},
                   {"cat", "message"},
                   {"ph", "e"},
                   {"id", message},
                   {"pid", pid_of(events[i].rank)},
                   {"tid", 0},
                   {"ts", us(last_ns)},
                   {"args", {{"completed", false}}}});
  for (const TraceSpan& s : spans)
    out.push_back({{"name", s.name},
                   {"cat", "span"},
                   {"ph", "X"},
                   {"pid", pid_of(s.rank)},
                   {"tid", s.comm ? kCommTidBase : 0},
                   {"ts", us(s.start_ns)},
                   {"dur", std::max(us(s.end_ns - s.start_ns), 0.001)}});
  return json{{"traceEvents", out}, {"displayTimeUnit", "ms"}}.dump(1);
}

std::vector<TracedEvent> trace_events(const std::function<void()>& run) {
  EventTrace trace;
  run();
  trace.stop();
  return trace.events();
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  GLASS_CHECK(f.good(), "cannot open '", path, "' for writing");
  f << text;
  f.close();
  GLASS_CHECK(f.good(), "writing '", path, "' failed");
}

std::vector<TracedEvent> record_chrome_trace(const std::string& path,
                                             const std::function<void()>& run) {
  std::vector<TracedEvent> events = trace_events(run);
  write_text_file(path, chrome_trace_json(events));
  return events;
}

}  // namespace glass::viz
