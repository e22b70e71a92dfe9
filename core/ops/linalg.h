// core/ops/linalg.h — matrix products.
//
// matmul follows NumPy: 1-D x 1-D is a dot product (0-dim result); a 1-D operand is
// treated as a row (left) or column (right) vector and the added dim is removed again;
// N-D operands are stacks of matrices in their last two dims, with the leading "batch"
// dims broadcast against each other. mm, bmm and addmm are the strict 2-D / 3-D forms.
// Every product runs on the gemm ladder of core/cpu/gemm.h on the CPU.
#pragma once

#include "core/dispatcher.h"
#include "core/tensor.h"

namespace glass {

Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);   // (M, K) @ (K, N)
Tensor bmm(const Tensor& a, const Tensor& b);  // (B, M, K) @ (B, K, N)
// beta * self + alpha * (mat1 @ mat2); self broadcasts to (M, N).
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1);

namespace ops {
extern Op<Tensor(const Tensor&, const Tensor&)> mm;
extern Op<Tensor(const Tensor&, const Tensor&)> bmm;
extern Op<Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&)> addmm;
}  // namespace ops

}  // namespace glass
