// core/dispatcher.cpp — the thread-local dispatch state.
#include "core/dispatcher.h"

namespace glass {

const char* to_string(DispatchKey k) {
  switch (k) {
    case DispatchKey::Trace: return "Trace";
    case DispatchKey::Autograd: return "Autograd";
    case DispatchKey::Backend: return "Backend";
  }
  return "?";
}

namespace dispatch {
ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}
}  // namespace dispatch

}  // namespace glass
