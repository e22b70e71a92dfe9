// cuda/backend.h — registering the CUDA backend with core.
//
// cuda/cuda.h calls register_backend() from an inline variable, so every program that
// includes it (glass/glass.h does) has kCUDA's kernels, allocators and device guard
// registered before main() — even though glass_cuda is a static library, whose unused
// objects a linker would otherwise drop.
#pragma once

namespace glass::cuda::detail {

// Idempotent and cheap: fills core's registries for kCUDA; chooses no runtime.
bool register_backend();

}  // namespace glass::cuda::detail
