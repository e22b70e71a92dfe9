// glass/glass.h — the whole public API of glasstorch in one include.
//
// A first program (compare it with the same lines in libtorch: only the namespace
// differs):
//
//   #include <glass/glass.h>
//   #include <iostream>
//
//   int main() {
//     glass::manual_seed(0);
//     glass::Tensor x = glass::arange(6, glass::kFloat).view({2, 3});  // storage: 0 1 2 3 4 5
//     glass::Tensor t = x.t();                // a view: sizes [3, 2], strides [1, 3], no copy
//     std::cout << t.is_alias_of(x) << "\n";  // 1: same storage
//     glass::Tensor y = x + glass::tensor({10., 20., 30.});  // broadcast [2,3] + [3]
//     std::cout << y << "\n";
//     // tensor([[10., 21., 32.],
//     //         [13., 24., 35.]])
//     std::cout << glass::storage_index(t, {2, 1}) << "\n";  // 0 + 2*1 + 1*3 = 5
//     std::cout << x.matmul(t) << "\n";                     // (2x3) @ (3x2)
//   }
//
// Layers (each its own library; see ARCHITECTURE.md): core — storage, strides,
// broadcasting, dtypes, the dispatcher and the CPU kernels — autograd (reverse mode:
// x.requires_grad_(), y.backward(), x.grad(); forward mode in autograd/forward_ad.h) and nn
// (Module, Linear, losses, optimizers, DataLoader, safetensors checkpoints) exist today.
#pragma once

#include "autograd/anomaly_mode.h"
#include "autograd/custom_function.h"
#include "autograd/engine.h"
#include "autograd/forward_ad.h"
#include "autograd/gradcheck.h"
#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/allocator.h"
#include "core/array_ref.h"
#include "core/deterministic.h"
#include "core/device.h"
#include "core/device_guard.h"
#include "core/device_kernels.h"
#include "core/dispatcher.h"
#include "core/error.h"
#include "core/events.h"
#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/ops/compare.h"
#include "core/ops/factories.h"
#include "core/ops/indexing.h"
#include "core/ops/join.h"
#include "core/ops/linalg.h"
#include "core/ops/pointwise.h"
#include "core/ops/random.h"
#include "core/ops/reduce.h"
#include "core/ops/views.h"
#include "core/parallel.h"
#include "core/print.h"
#include "core/scalar.h"
#include "core/scalar_type.h"
#include "core/shape.h"
#include "core/storage.h"
#include "core/tensor.h"
#include "core/tensor_accessor.h"
#include "core/tensor_impl.h"
#include "core/tensor_iterator.h"
#include "core/tensor_options.h"
#include "core/type_promotion.h"
#include "cuda/cuda.h"
#include "nn/data/dataloader.h"
#include "nn/data/dataset.h"
#include "nn/data/fashion_mnist.h"
#include "nn/data/idx.h"
#include "nn/data/tensor_dataset.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/module.h"
#include "nn/modules/activation.h"
#include "nn/modules/container.h"
#include "nn/modules/dropout.h"
#include "nn/modules/embedding.h"
#include "nn/modules/layer_norm.h"
#include "nn/modules/linear.h"
#include "nn/optim/adam.h"
#include "nn/optim/adamw.h"
#include "nn/optim/optimizer.h"
#include "nn/optim/sgd.h"
#include "nn/serialize/checkpoint.h"
