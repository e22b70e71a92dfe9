// core/events.h — the publish/subscribe channel every layer reports through.
//
// Layers publish what happens (an op dispatched, a block allocated, a graph node
// created, ...) and consumers — the viewer, the Graphviz export, a JSON trace writer,
// tests — subscribe. No layer calls a consumer directly, which keeps the dependency
// arrows pointing down. Invariant: when nobody subscribes, publishing costs one relaxed
// atomic load (events::enabled()); callers check it before building an Event.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "core/device.h"

namespace glass::events {

enum class Kind : uint8_t {
  OpDispatched,        // name = op ("mul", "mul_"), entry = dispatcher entry ("binary"),
                       // detail = dispatch key that handled it
  KernelLaunched,      // name = kernel, device
  Allocation,          // bytes, ptr, device; value = 1 when served from the cache
  Free,                // bytes, ptr, device; value = 1 when kept in the cache
  GraphNodeCreated,    // name = grad_fn name, ptr = node
  BackwardNodeRun,     // name = grad_fn name, ptr = node
  BucketReady,         // value = bucket index
  CollectiveStep,      // name = collective, value = step
  FusionGroupEmitted,  // name = kernel name, value = ops fused
  ModuleEnter,         // ptr = the nn::Module whose forward starts (nn/module.h, ModuleScope)
  ModuleExit,          // ptr = the same module, when its forward returns or throws
  MessagePosted,       // a point-to-point send or recv was posted: name = "send" or "recv",
                       // value = the peer's rank in its group, bytes, ptr = the op's Work
  MessageDone,         // that message completed (or failed), published by whichever thread
                       // completed it but tagged with the poster's rank; same fields
};

const char* to_string(Kind k);

struct Event {
  Kind kind;
  const char* name = "";    // static string: op, kernel or node name
  const char* entry = "";   // static string: the dispatcher entry that ran the op
  const char* detail = "";  // static string: e.g. the dispatch key
  Device device = Device(kCPU);
  int64_t bytes = 0;
  int64_t value = 0;
  const void* ptr = nullptr;
  int32_t rank = -1;  // the distributed rank that published it; -1: none (stamped on delivery)
};

using Callback = std::function<void(const Event&)>;

// Returns a handle for unsubscribe(). Callbacks run synchronously on the publishing
// thread; they must not throw (an exception is swallowed and counted in dropped()).
int subscribe(Callback cb);
void unsubscribe(int handle);

namespace detail {
extern std::atomic<int> g_num_subscribers;
void publish_slow(const Event& e);
}  // namespace detail

inline bool enabled() { return detail::g_num_subscribers.load(std::memory_order_relaxed) > 0; }
inline void publish(const Event& e) {
  if (enabled()) detail::publish_slow(e);
}
int64_t dropped();

// The rank that events published from this thread are tagged with, so the viewer can draw
// one timeline per rank (issue 11). A process of a multi-process job has one rank; with
// the threads backend each rank is a thread of one process, so a thread may override the
// process's rank. Delivery stamps current_rank() into every event whose rank is -1.
void set_process_rank(int rank);  // -1: the process has no rank
void set_thread_rank(int rank);   // overrides the process's rank on this thread; -1 clears it
int current_rank();               // this thread's rank if set, else the process's (or -1)

// RAII: tags this thread's events with `rank` for its lifetime, then restores the old one.
class ThreadRankGuard {
 public:
  explicit ThreadRankGuard(int rank);
  ~ThreadRankGuard();
  ThreadRankGuard(const ThreadRankGuard&) = delete;
  ThreadRankGuard& operator=(const ThreadRankGuard&) = delete;

 private:
  int previous_;
};

// RAII subscription for tests and tools: unsubscribes when it goes out of scope.
class Subscription {
 public:
  explicit Subscription(Callback cb) : handle_(subscribe(std::move(cb))) {}
  ~Subscription() { unsubscribe(handle_); }
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

 private:
  int handle_;
};

}  // namespace glass::events
