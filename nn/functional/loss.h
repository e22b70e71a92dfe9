// nn/functional/loss.h — the losses: regression (mse_loss), classification over C classes
// (nll_loss, cross_entropy) and independent binary labels (binary_cross_entropy_with_logits).
//
// Every loss computes one value per element or sample and then applies `reduction`, with
// PyTorch's semantics: None keeps the per-element values, Sum adds them, Mean divides
// the sum by the number of elements — except for the class losses with a `weight` or
// ignored targets, whose Mean divides by the total weight of the targets that count
// (so a batch's loss does not depend on how many of its targets were padding).
//
// Class losses take integer class indices: input (N, C) with target (N), input (C) with
// a 0-dim target, or input (N, C, d1, ..., dk) with target (N, d1, ..., dk) (a class per
// position, e.g. per token); every target lies in [0, C) or equals ignore_index.
#pragma once

#include <cstdint>

#include "core/tensor.h"

namespace glass::nn::functional {

enum class Reduction { None, Mean, Sum };

// (input - target)², reduced. input, target: the same shape.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);

// -log_probs[n, target[n]] · weight[target[n]], reduced; targets equal to ignore_index
// contribute 0 and do not count in the mean.
// log_probs: (N, C) or (C) or (N, C, d...) · target: Long (N) or () or (N, d...) · weight: (C).
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight = {},
                int64_t ignore_index = -100, Reduction reduction = Reduction::Mean);

// nll_loss(log_softmax(logits, class dim)): stable for any logits (no exp overflows).
// label_smoothing = ε mixes the one-hot target with the uniform distribution:
//   (1 - ε) · nll_loss + ε / C · (reduced -Σ_c weight[c] · log_softmax[n, c]),
// which is PyTorch's formula (torch.nn.CrossEntropyLoss).
Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight = {},
                     int64_t ignore_index = -100, Reduction reduction = Reduction::Mean,
                     double label_smoothing = 0.0);

// -[pos_weight · y · log σ(x) + (1 - y) · log(1 - σ(x))] · weight, reduced, computed as
//   (1 - y) · x + (1 + (pos_weight - 1) · y) · log(1 + exp(-x))
// with log(1 + exp(-x)) evaluated so that no exp overflows: finite for any x.
// input, target: the same shape · weight, pos_weight: broadcastable to it (pos_weight is
// usually (C), one weight per label) or undefined.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = {}, const Tensor& pos_weight = {},
                                        Reduction reduction = Reduction::Mean);

}  // namespace glass::nn::functional
