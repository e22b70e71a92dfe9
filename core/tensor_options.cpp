// core/tensor_options.cpp — the process-wide default dtype.
#include "core/tensor_options.h"

#include <atomic>

namespace glass {
namespace {
std::atomic<ScalarType> g_default_dtype{kFloat32};
}

ScalarType get_default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(ScalarType t) {
  GLASS_CHECK(is_floating_type(t),
              "set_default_dtype(): only floating-point types are supported "
              "as the default type, got ",
              to_string(t));
  g_default_dtype.store(t);
}

}  // namespace glass
