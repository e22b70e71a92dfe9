// viewer/distributed_trace.h — core's events, time-stamped per rank and thread, and written
// as a Chrome trace (chrome://tracing, Perfetto): one process per rank, one thread row for
// compute and one for communication.
//
// core's events (core/events.h) carry the rank that published them but no time and no
// thread; an EventTrace adds both as they arrive (a steady clock, and the publishing
// thread). A thread that published a CollectiveStep is its rank's communication thread
// (ProcessGroup runs every collective there); every other thread of the rank computes.
//
//   viz::record_chrome_trace("ddp.trace.json", [&] {
//     distributed::run_threads(2, [&](int rank) { ... train a step under DDP ... });
//   });
//
// Invariants: events() are in the order they arrived, and each thread's are in the order
// it published them (a thread's t_ns never decreases); `thread` numbers a rank's threads
// in the order they first published, so (rank, thread) names one OS thread — except for
// MessagePosted and MessageDone, which belong to their rank alone (thread −1).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/events.h"
#include "core/tensor.h"

namespace glass::viz {

struct TracedEvent {
  events::Kind kind = events::Kind::OpDispatched;
  // The event's name; for BackwardNodeRun the node's own name ("AddmmBackward0"), and an
  // AccumulateGrad of a named parameter says which: "AccumulateGrad fc1.weight".
  std::string name;
  int rank = -1;      // −1: published outside any rank
  int thread = 0;     // the publishing thread, numbered per rank from 0
  bool comm = false;  // published on its rank's communication thread
  int64_t t_ns = 0;   // since the trace started
  int64_t value = 0, bytes = 0;
  // MessagePosted and MessageDone: the message they belong to, numbered from 1 in the order
  // messages were posted (a Work's address may be reused, this never is); 0 for a done
  // whose post the trace did not see, and for every other event.
  int64_t message = 0;
};

// A span to draw beside the events, which events alone cannot give (they are instants):
// e.g. a DDP bucket's all-reduce, from when it was queued to when it finished.
struct TraceSpan {
  std::string name;
  int rank = -1;
  bool comm = true;  // drawn in the rank's communication row, else its compute row
  int64_t start_ns = 0, end_ns = 0;
};

class EventTrace {
 public:
  EventTrace();  // subscribes to core's events, from every thread
  ~EventTrace();
  EventTrace(const EventTrace&) = delete;
  EventTrace& operator=(const EventTrace&) = delete;

  // Parameters to name in AccumulateGrad nodes (any thread may add them, any time).
  void name_parameters(const std::vector<std::pair<std::string, Tensor>>& parameters);
  // Stops listening (also done by the destructor). Idempotent.
  void stop();
  // What was recorded so far, with `comm` filled in.
  std::vector<TracedEvent> events() const;
  // Now, on the trace's clock (ns since it started): for marks of one's own.
  int64_t now_ns() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  int subscription_ = -1;
};

// Chrome trace JSON ({"traceEvents": [...]}, times in µs): per rank a process "rank r"
// (pid r; events outside any rank go to pid 1000, "no rank") and its threads named
// "compute" (tid 0, 1, ... in order of appearance) and "communication" (tid 100, 101, ...).
// BackwardNodeRun is a complete event ("X"): the engine publishes when a node starts, so
// it lasts until the same thread's next event that is not part of running it (ops,
// kernels, memory, BucketReady are; a next node, a forward's graph node or module, a
// collective are not), or its last event. A point-to-point message (MessagePosted to its
// MessageDone) is an async slice ("b"/"e", category "message") of the poster's rank, "send
// to 1" or "recv from 0" (the peer's rank in its group) with its bytes, from post to
// completion: a rank's sends and receives overlap, and only async slices may. One never seen to
// complete ends at the trace's last event, with "completed": false. Everything else is an instant
// ("i"), with value and bytes in its args. Each span is a complete event.
std::string chrome_trace_json(const std::vector<TracedEvent>& events,
                              const std::vector<TraceSpan>& spans = {});

// Runs `run` with an EventTrace listening, and returns what it recorded.
std::vector<TracedEvent> trace_events(const std::function<void()>& run);
// Runs `run` and writes its events to `path` as Chrome trace JSON; a file that cannot be
// written is a glass::Error naming it. Returns the events.
std::vector<TracedEvent> record_chrome_trace(const std::string& path,
                                             const std::function<void()>& run);
// Writes JSON text to `path` (a glass::Error names the path if it cannot).
void write_text_file(const std::string& path, const std::string& text);

}  // namespace glass::viz
