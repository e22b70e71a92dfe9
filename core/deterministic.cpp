// core/deterministic.cpp — the process-wide deterministic-algorithms flag.
#include "core/deterministic.h"

#include <atomic>

namespace glass {
namespace {
std::atomic<bool> g_deterministic{false};
}  // namespace

void use_deterministic_algorithms(bool mode) {
  g_deterministic.store(mode, std::memory_order_relaxed);
}

bool are_deterministic_algorithms_enabled() {
  return g_deterministic.load(std::memory_order_relaxed);
}

}  // namespace glass
