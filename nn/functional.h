// nn/functional.h — the stateless half of nn: every layer's computation as a function.
//
// A module (nn/modules/) owns parameters and calls one of these in its forward; code
// that keeps its own tensors calls them directly. As in libtorch, write
//   namespace F = glass::nn::functional;
//   Tensor loss = F::cross_entropy(F::linear(x, w, b), labels);
// Nothing here keeps state, and all of it is differentiable through autograd.
#pragma once

#include "nn/functional/activation.h"     // relu, gelu, tanh, sigmoid, softmax, log_softmax
#include "nn/functional/dropout.h"        // dropout
#include "nn/functional/embedding.h"      // embedding
#include "nn/functional/linear.h"         // linear
#include "nn/functional/loss.h"           // mse_loss, nll_loss, cross_entropy, bce_with_logits
#include "nn/functional/normalization.h"  // layer_norm
