// core/dispatcher.cpp — the thread-local dispatch state, the registry of boxed ops and the
// trace fallback.
#include "core/dispatcher.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

namespace glass {

const char* to_string(DispatchKey k) {
  switch (k) {
    case DispatchKey::Trace: return "Trace";
    case DispatchKey::Autograd: return "Autograd";
    case DispatchKey::Backend: return "Backend";
  }
  return "?";
}

namespace {

// Files register their ops during start-up, in no fixed order: the registry is a
// function-local static so it exists before the first of them.
struct Registry {
  std::mutex mutex;
  std::vector<const BoxedOp*> ops;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: ops outlive every static
  return *r;
}

std::atomic<dispatch::TraceFallback> g_trace_fallback{nullptr};

}  // namespace

namespace dispatch {
ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

bool register_ops(std::initializer_list<const BoxedOp*> ops) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const BoxedOp* op : ops)
    if (std::find(r.ops.begin(), r.ops.end(), op) == r.ops.end()) r.ops.push_back(op);
  return true;
}

std::vector<const BoxedOp*> registered_ops() {
  Registry& r = registry();
  std::vector<const BoxedOp*> ops;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    ops = r.ops;
  }
  std::stable_sort(ops.begin(), ops.end(), [](const BoxedOp* a, const BoxedOp* b) {
    return std::strcmp(a->name(), b->name()) < 0;
  });
  return ops;
}

const BoxedOp* find_op(std::string_view name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const BoxedOp* op : r.ops)
    if (name == op->name()) return op;
  return nullptr;
}

void set_trace_fallback(TraceFallback fallback) { g_trace_fallback.store(fallback); }
TraceFallback trace_fallback() { return g_trace_fallback.load(std::memory_order_relaxed); }
}  // namespace dispatch

}  // namespace glass
