// core/grad_mode.h — the thread-local switch that says whether ops record autograd graphs.
//
// It lives in core, not autograd, because the dispatcher reads it to decide whether the
// Autograd key applies to a call (PyTorch keeps it in c10 for the same reason).
// Invariant: guards restore the previous state on scope exit, so they nest.
#pragma once

namespace glass {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Sets grad mode for a scope and restores the previous value at its end.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) {
    GradMode::set_enabled(enabled);
  }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

// libtorch's `torch::NoGradGuard no_grad;` — nothing in its scope records a graph.
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

}  // namespace glass
