// tests/cuda/exec/packed_accessor_kernels.h — launchers of the accessor kernels
// (packed_accessor_kernels.cu), each queued on the current stream of x's device.
// Invariant: a launcher only makes the accessors and launches; it never waits or copies.
#pragma once

#include "core/tensor.h"

namespace exec_test {

// y[i][j] = s * x[i][j] + i for x, y float 2-D CUDA tensors of one shape, any strides.
void scale_rows(const glass::Tensor& x, const glass::Tensor& y, float s);
// y[0] = the element one past x's last: an out-of-bounds read, for the bounds check.
void read_past_the_end(const glass::Tensor& x, const glass::Tensor& y);

}  // namespace exec_test
