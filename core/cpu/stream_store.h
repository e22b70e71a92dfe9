// core/cpu/stream_store.h — writing a long contiguous result without reading it first.
//
// Note [Streaming stores]
// A plain store to a line that is not in cache first *reads* the line (write-allocate),
// so `c = a + b` over 64 MiB moves four streams (a, b, c read, c written) where memcpy,
// which uses non-temporal stores at that size, moves two per buffer. When one contiguous
// run writes at least kStreamBytes (twice a core's L2: the result could not stay cached
// anyway), a kernel computes blocks into a small stack buffer — still vectorized — and
// copies each block out with streaming stores, which write whole lines without reading
// them. Measured on 16M floats: c = a + b from 0.77 to 1.09x memcpy at 1 thread and
// 0.75 to 0.89x at 2 (bench/RESULTS.md); the 6-op chain did not change.
//
// Used by eager's loops (cpu_loop.h) and embedded in every kernel the compiler generates
// (compiler/CMakeLists.txt), so it includes nothing from the project.
#pragma once

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include <cstdint>
#include <cstring>

namespace glass::cpu::stream {

inline constexpr int64_t kStreamBytes = 4 << 20;  // per run; see the note above
inline constexpr int64_t kBlockBytes = 8192;      // the stack buffer, well inside L1

// Copies `bytes` (a multiple of 64) from src to a 64-byte-aligned dst with non-temporal
// stores, using the widest vectors the build targets.
inline void stream_copy(char* dst, const char* src, int64_t bytes) {
#if defined(__AVX512F__)
  for (int64_t i = 0; i < bytes; i += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i),
                        _mm512_load_si512(reinterpret_cast<const __m512i*>(src + i)));
#elif defined(__AVX__)
  for (int64_t i = 0; i < bytes; i += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i)));
#elif defined(__SSE2__)
  for (int64_t i = 0; i < bytes; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm_load_si128(reinterpret_cast<const __m128i*>(src + i)));
#else
  std::memcpy(dst, src, static_cast<size_t>(bytes));
#endif
}

inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();  // streaming stores are weakly ordered: publish them before returning
#endif
}

}  // namespace glass::cpu::stream
