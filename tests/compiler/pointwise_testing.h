// tests/compiler/pointwise_testing.h — what the pointwise tests of both devices share: the
// comparison of a compiled group's result with eager mode's, and random programs.
#pragma once

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compiler/pointwise.h"
#include "core/generator.h"
#include "core/ops/random.h"
#include "core/tensor.h"

namespace glass::compiler {

// |x - y| <= atol + rtol * |y| everywhere, NaNs in the same places; "" or the worst element.
inline std::string close(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.sizes() != want.sizes()) return "sizes differ";
  if (got.dtype() != want.dtype())
    return std::string("dtypes differ: ") + to_string(got.dtype()) + " vs " +
           to_string(want.dtype());
  Tensor g = got.to(kDouble).contiguous().reshape({-1}),
         w = want.to(kDouble).contiguous().reshape({-1});
  const double* gp = g.data_ptr<double>();
  const double* wp = w.data_ptr<double>();
  for (int64_t i = 0; i < g.numel(); ++i) {
    if (std::isnan(gp[i]) || std::isnan(wp[i])) {
      if (std::isnan(gp[i]) != std::isnan(wp[i]))
        return "element " + std::to_string(i) + ": " + std::to_string(gp[i]) + " vs " +
               std::to_string(wp[i]);
      continue;
    }
    if (gp[i] == wp[i]) continue;  // also equal infinities
    if (!(std::abs(gp[i] - wp[i]) <= atol + rtol * std::abs(wp[i])))
      return "element " + std::to_string(i) + ": " + std::to_string(gp[i]) + " vs " +
             std::to_string(wp[i]);
  }
  return "";
}

inline PointwiseProgram random_program(std::mt19937& rng, ScalarType dtype, int n_inputs) {
  PointwiseProgram p;
  std::vector<int> values;
  for (int k = 0; k < n_inputs; ++k) values.push_back(p.input(k, dtype));
  const UnaryOp unaries[] = {UnaryOp::Neg,     UnaryOp::Abs,   UnaryOp::Exp,  UnaryOp::Log,
                             UnaryOp::Sqrt,    UnaryOp::Sin,   UnaryOp::Cos,  UnaryOp::Tanh,
                             UnaryOp::Sigmoid, UnaryOp::Relu,  UnaryOp::Gelu, UnaryOp::GeluTanh,
                             UnaryOp::Sign,    UnaryOp::Log1p, UnaryOp::Rsqrt};
  const BinaryOp binaries[] = {BinaryOp::Add, BinaryOp::Sub,     BinaryOp::Mul,
                               BinaryOp::Div, BinaryOp::Maximum, BinaryOp::Minimum};
  const int n_ops = 1 + static_cast<int>(rng() % 8);
  for (int op = 0; op < n_ops; ++op) {
    const int x = values[rng() % values.size()];
    const int y = values[rng() % values.size()];
    int v;
    switch (rng() % 5) {
      case 0:
      case 1: v = p.unary(unaries[rng() % std::size(unaries)], p.unary(UnaryOp::Tanh, x)); break;
      case 2: v = p.binary(binaries[rng() % std::size(binaries)], x, y); break;
      case 3:
        v = p.binary(binaries[rng() % 3], x, p.scalar(0.25 * static_cast<double>(rng() % 9) - 1));
        break;
      default:  // sometimes masking with -inf, as attention does
        v = p.where(p.binary(BinaryOp::Lt, x, y), p.clamp(x, -0.5, 2.0),
                    rng() % 4 ? y : p.scalar(-std::numeric_limits<double>::infinity()));
        break;
    }
    values.push_back(v);
  }
  p.set_output(values.back());
  return p;
}

// Inputs for a random program: each of shape [3, 8], a broadcast row [8], a transposed
// [8, 3] (so not contiguous), or a broadcast column [3, 1], on `device`.
inline std::vector<Tensor> random_inputs(std::mt19937& rng, Generator& gen, int n_inputs,
                                         ScalarType dtype, Device device) {
  std::vector<Tensor> xs;
  for (int k = 0; k < n_inputs; ++k) {
    switch (rng() % 4) {
      case 0: xs.push_back(randn({3, 8}, gen).to(dtype).to(device)); break;
      case 1: xs.push_back(randn({8}, gen).to(dtype).to(device)); break;
      case 2: xs.push_back(randn({8, 3}, gen).to(dtype).to(device).t()); break;
      default: xs.push_back(randn({3, 1}, gen).to(dtype).to(device)); break;
    }
  }
  return xs;
}

}  // namespace glass::compiler
