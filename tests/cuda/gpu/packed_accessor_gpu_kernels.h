// tests/cuda/gpu/packed_accessor_gpu_kernels.h — a kernel compiled by nvcc that reads and
// writes tensors through DeviceAccessor, for packed_accessor_gpu_test.cpp. Invariant: the
// launcher queues its kernel on the current stream of the tensors' device and returns.
#pragma once

#include "core/tensor.h"

namespace gpu_test {

// y[i][j] = s * x[i][j] + i for x, y float 2-D CUDA tensors of one shape, any strides.
void scale_rows(const glass::Tensor& x, const glass::Tensor& y, float s);

}  // namespace gpu_test
