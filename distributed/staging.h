// distributed/staging.h — copies between the caller's tensors and what a transport takes.
//
// A transport moves the bytes of one contiguous buffer on its own device (CPU for gloo and
// threads). ProcessGroup stages anything else — a transposed view, a CUDA tensor on a CPU
// transport — through a contiguous copy, as PyTorch's gloo backend does for CUDA tensors.
// Invariant: a staged buffer is the caller's tensor itself whenever the transport can take
// it as it is, so the common case copies nothing.
#pragma once

#include "core/tensor.h"

namespace glass::distributed {

// True when `t` is contiguous and on `device`: the transport can use its memory directly.
bool transport_can_take(const Tensor& t, Device device);

// An input (or in-out) buffer: `t` itself, or a contiguous copy of it on `device`.
Tensor stage_in(const Tensor& t, Device device);
// An output buffer: `t` itself, or an uninitialized contiguous tensor shaped like it.
Tensor stage_out_buffer(const Tensor& t, Device device);
// Writes the transport's result back into the caller's tensor (nothing when they are one),
// without a version bump: a transport writing into the tensor itself makes none either.
void unstage(const Tensor& user, const Tensor& wire);

// float32, float64, int32 and int64: what every backend reduces and moves.
bool is_supported_dtype(ScalarType t);

}  // namespace glass::distributed
