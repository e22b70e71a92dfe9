// autograd/anomaly_mode.cpp — the process-wide anomaly switch.
#include "autograd/anomaly_mode.h"

#include <atomic>

namespace glass::autograd {
namespace {
std::atomic<bool> g_anomaly{false};
}

bool AnomalyMode::is_enabled() { return g_anomaly.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool enabled) { g_anomaly.store(enabled); }

}  // namespace glass::autograd
