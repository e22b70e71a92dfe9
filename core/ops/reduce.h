// core/ops/reduce.h — reductions, softmax and their composites.
//
// A reduction over dims D of x produces x's shape with D removed (or kept as size 1
// with keepdim = true). An empty dim list means "every dim". The primitives are
// reduce (sum, prod, amax, amin through TensorIterator), max_dim (values + indices)
// and softmax; mean, var, std, logsumexp and norm are written with them, so autograd
// differentiates them for free. Empty inputs follow PyTorch: sum is 0, prod is 1,
// mean is nan, and max/min/amax/amin over an empty dim are errors.
#pragma once

#include <optional>
#include <tuple>

#include "core/device_kernels.h"
#include "core/dispatcher.h"
#include "core/tensor.h"

namespace glass {

Tensor sum(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor sum(const Tensor& x, IntArrayRef dim, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& x, IntArrayRef dim, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& x, std::optional<ScalarType> dtype = std::nullopt);
Tensor amax(const Tensor& x, IntArrayRef dim = {}, bool keepdim = false);
Tensor amin(const Tensor& x, IntArrayRef dim = {}, bool keepdim = false);
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// unbiased = true divides by N - 1 (Bessel's correction), as PyTorch's default.
Tensor var(const Tensor& x, IntArrayRef dim = {}, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& x, IntArrayRef dim = {}, bool unbiased = true, bool keepdim = false);
Tensor logsumexp(const Tensor& x, IntArrayRef dim, bool keepdim = false);
Tensor norm(const Tensor& x, const Scalar& p = 2, IntArrayRef dim = {}, bool keepdim = false);
// Numerically stable: exp(x - max) / sum(exp(x - max)) along dim.
Tensor softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);

namespace ops {
extern Op<Tensor(ReduceOp, const Tensor&, IntArrayRef, bool, std::optional<ScalarType>)> reduce;
extern Op<std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool, bool)>
    max_dim;                                              // (x, dim, keepdim, is_max)
extern Op<Tensor(const Tensor&, int64_t, bool)> softmax;  // (x, dim, log)
}  // namespace ops

}  // namespace glass
