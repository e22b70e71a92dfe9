// autograd/anomaly_mode.h — find the op whose backward produced NaN.
//
// With anomaly mode on, every recorded node remembers which forward op made it and on
// what inputs, and the engine checks each gradient a node returns: the first NaN stops
// backward with an error that names the node and that forward op. It costs a check per
// gradient, so it is off by default (as in PyTorch: torch.autograd.detect_anomaly).
#pragma once

#include <string>

namespace glass::autograd {

struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Turns anomaly detection on for a scope (libtorch: torch::autograd::DetectAnomalyGuard).
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : prev_(AnomalyMode::is_enabled()) { AnomalyMode::set_enabled(true); }
  ~DetectAnomalyGuard() { AnomalyMode::set_enabled(prev_); }
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace glass::autograd
