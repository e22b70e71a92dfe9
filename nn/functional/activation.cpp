// nn/functional/activation.cpp — thin forwards to core's ops (see activation.h).
#include "nn/functional/activation.h"

#include "core/ops/pointwise.h"
#include "core/ops/reduce.h"

namespace glass::nn::functional {

Tensor relu(const Tensor& x) { return glass::relu(x); }
Tensor gelu(const Tensor& x, const std::string& approximate) { return glass::gelu(x, approximate); }
Tensor tanh(const Tensor& x) { return glass::tanh(x); }
Tensor sigmoid(const Tensor& x) { return glass::sigmoid(x); }
Tensor softmax(const Tensor& x, int64_t dim) { return glass::softmax(x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return glass::log_softmax(x, dim); }

}  // namespace glass::nn::functional
