// nn/functional/activation.h — the activation functions as free functions (F::relu).
//
// Each forwards to the core op of the same name, which already has its backward formula;
// they live here too so that code written against libtorch's torch::nn::functional ports
// by renaming the namespace. Shapes: any; every output has its input's shape.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace glass::nn::functional {

Tensor relu(const Tensor& x);
// approximate: "none" is x·Φ(x) with the exact normal CDF; "tanh" is the GPT-2 formula
// 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))).
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
// Along `dim`, computed stably as exp(x - max) / sum(exp(x - max)).
Tensor softmax(const Tensor& x, int64_t dim);
// log(softmax(x)) without forming softmax: x - max - log(sum(exp(x - max))), finite even
// where softmax underflows to 0.
Tensor log_softmax(const Tensor& x, int64_t dim);

}  // namespace glass::nn::functional
