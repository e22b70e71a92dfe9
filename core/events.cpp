// core/events.cpp — subscriber list kept as an immutable snapshot, so publishing never
// holds the lock while a callback runs (a callback may itself subscribe or publish).
#include "core/events.h"

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace glass::events {

namespace detail {
std::atomic<int> g_num_subscribers{0};
}

namespace {
using List = std::vector<std::pair<int, Callback>>;
std::mutex g_mutex;
std::shared_ptr<const List> g_list = std::make_shared<List>();
int g_next_handle = 1;
std::atomic<int64_t> g_dropped{0};
std::atomic<int> g_process_rank{-1};
thread_local int t_thread_rank = -1;
}  // namespace

const char* to_string(Kind k) {
  switch (k) {
    case Kind::OpDispatched: return "op_dispatched";
    case Kind::KernelLaunched: return "kernel_launched";
    case Kind::Allocation: return "allocation";
    case Kind::Free: return "free";
    case Kind::GraphNodeCreated: return "graph_node_created";
    case Kind::BackwardNodeRun: return "backward_node_run";
    case Kind::BucketReady: return "bucket_ready";
    case Kind::CollectiveStep: return "collective_step";
    case Kind::FusionGroupEmitted: return "fusion_group_emitted";
    case Kind::ModuleEnter: return "module_enter";
    case Kind::ModuleExit: return "module_exit";
    case Kind::MessagePosted: return "message_posted";
    case Kind::MessageDone: return "message_done";
  }
  return "unknown";
}

int subscribe(Callback cb) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto next = std::make_shared<List>(*g_list);
  int handle = g_next_handle++;
  next->emplace_back(handle, std::move(cb));
  g_list = std::move(next);
  detail::g_num_subscribers.store(static_cast<int>(g_list->size()));
  return handle;
}

void unsubscribe(int handle) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto next = std::make_shared<List>();
  for (const auto& entry : *g_list)
    if (entry.first != handle) next->push_back(entry);
  g_list = std::move(next);
  detail::g_num_subscribers.store(static_cast<int>(g_list->size()));
}

int64_t dropped() { return g_dropped.load(); }

void set_process_rank(int rank) { g_process_rank.store(rank < 0 ? -1 : rank); }
void set_thread_rank(int rank) { t_thread_rank = rank < 0 ? -1 : rank; }
int current_rank() { return t_thread_rank >= 0 ? t_thread_rank : g_process_rank.load(); }

ThreadRankGuard::ThreadRankGuard(int rank) : previous_(t_thread_rank) { set_thread_rank(rank); }
ThreadRankGuard::~ThreadRankGuard() { t_thread_rank = previous_; }

void detail::publish_slow(const Event& published) {
  // Stamp the rank here rather than at every publish site: the copy is only paid when
  // somebody listens, and publishers need not know about distributed at all.
  Event e = published;
  if (e.rank < 0) e.rank = current_rank();
  std::shared_ptr<const List> list;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    list = g_list;
  }
  for (const auto& entry : *list) {
    try {
      entry.second(e);
    } catch (...) {
      g_dropped.fetch_add(1);
    }
  }
}

}  // namespace glass::events
