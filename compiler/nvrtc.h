// compiler/nvrtc.h — NVRTC, the CUDA compiler as a library, found at run time.
//
// On a GPU the compiler's generated kernels (cuda_pointwise.h) are compiled by NVRTC into a
// CUBIN for the device's architecture, which the CUDA runtime loads (cuda/runtime.h,
// module_load): no nvcc at run time, no link to libcuda. libnvrtc is opened with dlopen,
// so glasstorch builds and starts without the CUDA toolkit; where it is missing, fused groups
// on a GPU run as eager ops and nvrtc_unavailable() says why.
//
// NVRTC compiles device code with no standard library of its own. The kernels' headers
// (cuda/kernel.h, cuda/kernels/pointwise_ops.cuh, core/scalar_ops.h) use a handful of
// std names; nvrtc_compile supplies them as small headers of its own (<cstdint>,
// <type_traits>, <limits>, ...), holding just those names — what jitify does for NVRTC.
//
// Invariant: nvrtc_compile returns a CUBIN only for a source NVRTC accepted; anything else
// is a glass::Error with NVRTC's log and the numbered source. A cached CUBIN is one NVRTC
// made from the same source with the same version, options and headers.
#pragma once

#include <string>

namespace glass::compiler {

// Why NVRTC cannot be used in this process ("" when it can): no libnvrtc.so found.
std::string nvrtc_unavailable();
// "13.0": the version of the libnvrtc that was found, for messages; "" if none.
std::string nvrtc_version();

// CUDA C++ -> CUBIN for compute capability major.minor (sm_90 for 9.0), the project's
// headers found under include_dir (the folder holding cuda/ and core/).
std::string nvrtc_compile(const std::string& source, const std::string& name, int major, int minor,
                          const std::string& include_dir);

// The same through the on-disk cache (kernel_cache.h, load_or_build): keyed by the source,
// NVRTC's version, the options, the standard headers supplied and `headers_key` (what the
// project's headers under include_dir are, when the folder's name does not already say), so
// a later process loads the CUBIN instead of compiling it.
std::string nvrtc_compile_cached(const std::string& source, const std::string& name, int major,
                                 int minor, const std::string& include_dir,
                                 const std::string& headers_key);

}  // namespace glass::compiler
