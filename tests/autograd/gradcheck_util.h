// tests/autograd/gradcheck_util.h — gradcheck / gradgradcheck as GoogleTest assertions.
//
// The reference is autograd::gradcheck (autograd/gradcheck.h): float64 central
// differences against the analytical Jacobian, PyTorch's default tolerances. On failure
// the assertion message carries the report with both Jacobians. `r` makes the float64
// random inputs they take.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include <glass/glass.h>

#include "core/test_util.h"

namespace glass::testing {

// A float64 CPU input of the given shape, values in [lo, hi) from a fixed seed; the
// device suites (core/device_test.h) move it with on(r(...)), and gradcheck then runs on
// that device. One letter on purpose: a single gradcheck call often lists several of them.
inline Tensor r(IntArrayRef shape, uint64_t seed, double lo = -2, double hi = 2) {
  return random_tensor(shape, kFloat64, seed, lo, hi);
}

using UnaryOutputFn = std::function<Tensor(const std::vector<Tensor>&)>;

inline ::testing::AssertionResult as_assertion(const autograd::GradcheckResult& r) {
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.report;
}

inline ::testing::AssertionResult gradcheck(const UnaryOutputFn& f, std::vector<Tensor> inputs) {
  return as_assertion(autograd::gradcheck(
      [&](const autograd::tensor_list& x) -> autograd::tensor_list { return {f(x)}; }, inputs));
}

inline ::testing::AssertionResult gradgradcheck(const UnaryOutputFn& f,
                                                std::vector<Tensor> inputs) {
  return as_assertion(autograd::gradgradcheck(
      [&](const autograd::tensor_list& x) -> autograd::tensor_list { return {f(x)}; }, inputs));
}

}  // namespace glass::testing
