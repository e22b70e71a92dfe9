// cuda/copy.h — copies that cross a device boundary (host <-> device, device <-> device).
//
// The backend's cross_device_copy entry (core/device_kernels.h). See Note [When a copy
// makes the host wait] in copy.cpp for exactly when the calling thread blocks.
#pragma once

#include "core/tensor.h"

namespace glass::cuda {

// dst and src: same shape, different devices, at least one of them CUDA; any dtypes
// and strides.
void copy_between_devices(const Tensor& dst, const Tensor& src, bool non_blocking);

}  // namespace glass::cuda
