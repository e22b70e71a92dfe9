// core/cpu/gemm_v3_blocked.cpp — v3: cache blocking and packing (GotoBLAS / BLIS).
//
// What changed: v2 streamed all of B from memory once per row of C. Here the loops are
// cut into blocks sized to the caches, and each block is copied ("packed") into the
// contiguous layout of Note [Packed panel layout] (gemm_impl.h) before use:
//
//   for jc in N step NC:            B panel KC×NC: packed once, reused for all of M (L3)
//     for pc in K step KC:
//       pack B[pc:+KC, jc:+NC]
//       for ic in M step MC:        A block MC×KC: packed once, reused for all of NC (L2)
//         pack A[ic:+MC, pc:+KC]
//         for jr in NC step NR:     B micro-panel KC×NR: reused for all of MC (L2)
//           for ir in MC step MR:
//             micro-kernel: C[ir:+MR, jr:+NR] (+)= A panel · B panel
//
// Packing also absorbs the strides: after it, every operand the inner loops touch is
// contiguous and aligned, whatever (rsA, csA, rsB, csB) were. The driver here is shared
// with v4 (a faster micro-kernel) and v5 (threads); v3's own micro-kernel is plain loops
// over an MR×NR accumulator array.
//
// Invariant: the first KC-slice of K applies the caller's beta, later slices add to C
// with beta = 1, so C is read only when the caller's beta is non-zero.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/allocator.h"
#include "core/cpu/gemm.h"
#include "core/cpu/gemm_impl.h"
#include "core/error.h"
#include "core/events.h"
#include "core/parallel.h"

namespace glass::cpu {
namespace detail {
namespace {

// A grow-only, 64-byte-aligned scratch buffer. Owned by one thread (thread_local below),
// kept between calls so steady-state gemm does not allocate. Its bytes come from the CPU
// allocator, so cpu_memory_stats() counts them: a few MiB per thread that ran a matmul,
// which a per-rank memory table must not leave out.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  ~ScratchBuffer() { release(); }

  template <class T>
  T* get(int64_t count) {
    const size_t bytes = (static_cast<size_t>(count) * sizeof(T) + 63) / 64 * 64;
    if (bytes > bytes_) {
      release();
      data_ = get_allocator(kCPU)->allocate(bytes);  // throws naming the size when it fails
      bytes_ = bytes;
      rank_ = events::current_rank();
    }
    return static_cast<T*>(data_);
  }

 private:
  void release() {
    if (data_ == nullptr) return;
    // At thread exit the thread's rank (threads backend) is already gone: the free event
    // belongs to the rank that allocated.
    events::ThreadRankGuard rank(rank_);
    get_allocator(kCPU)->deallocate(data_, bytes_);
    data_ = nullptr;
    bytes_ = 0;
  }

  void* data_ = nullptr;
  size_t bytes_ = 0;
  int rank_ = -1;  // events::current_rank() when data_ was allocated
};

// Packed B is written by the calling thread (or by all threads, in v5) and then read by
// all of them; packed A is private to the thread that packed it. Each thread that has
// run gemm keeps its buffers until it exits: up to KC×NC elements of B (8 MiB for
// float) on the calling thread and MC×KC of A (768 KiB) on every thread.
thread_local ScratchBuffer t_packed_a;
thread_local ScratchBuffer t_packed_b;

int64_t round_up(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// Packs the mb×kb block A (strides rsA, csA) into row panels of MR rows at dst,
// zero-padding the last panel.
template <class T>
void pack_a(int64_t mb, int64_t kb, const T* A, int64_t rsA, int64_t csA, int64_t mr, T* dst) {
  for (int64_t i0 = 0; i0 < mb; i0 += mr) {
    const int64_t rows = std::min(mr, mb - i0);
    T* panel = dst + i0 * kb;
    for (int64_t p = 0; p < kb; ++p) {
      const T* a = A + i0 * rsA + p * csA;
      for (int64_t i = 0; i < rows; ++i) panel[p * mr + i] = a[i * rsA];
      for (int64_t i = rows; i < mr; ++i) panel[p * mr + i] = T(0);
    }
  }
}

// Packs the column panels [panel_begin, panel_end) of the kb×nb block B into dst,
// zero-padding the last panel to NR columns.
template <class T>
void pack_b(int64_t kb, int64_t nb, const T* B, int64_t rsB, int64_t csB, int64_t nr,
            int64_t panel_begin, int64_t panel_end, T* dst) {
  for (int64_t panel_index = panel_begin; panel_index < panel_end; ++panel_index) {
    const int64_t j0 = panel_index * nr;
    const int64_t cols = std::min(nr, nb - j0);
    T* panel = dst + j0 * kb;
    for (int64_t p = 0; p < kb; ++p) {
      const T* b = B + p * rsB + j0 * csB;
      T* out = panel + p * nr;
      if (csB == 1) {
        std::memcpy(out, b, cols * sizeof(T));  // row-major B: each panel row is one copy
      } else {
        for (int64_t j = 0; j < cols; ++j) out[j] = b[j * csB];
      }
      for (int64_t j = cols; j < nr; ++j) out[j] = T(0);
    }
  }
}

// The two innermost loops: every MR×NR tile of C[0:mb, 0:nb] from a packed mb×kb block
// of A and a packed kb×nb block of B. The B micro-panel is the outer loop, so it is
// reused (from L2) by every A panel of the block before the next one is touched.
template <class T>
void macro_kernel(int64_t mb, int64_t nb, int64_t kb, const T* packed_a, const T* packed_b, T alpha,
                  T beta, T* C, int64_t rsC, int64_t csC, const GemmKernel<T>& kernel) {
  for (int64_t j0 = 0; j0 < nb; j0 += kernel.nr) {
    for (int64_t i0 = 0; i0 < mb; i0 += kernel.mr) {
      kernel.fn(kb, packed_a + i0 * kb, packed_b + j0 * kb, alpha, beta, C + i0 * rsC + j0 * csC,
                rsC, csC, std::min(kernel.mr, mb - i0), std::min(kernel.nr, nb - j0));
    }
  }
}

// v3's micro-kernel: the tile product as plain loops over an accumulator array, left to
// the compiler. The order is i, p, j so the innermost loop runs along a row of packed B
// and a row of acc, both contiguous, and vectorizes; but every multiply-add still loads
// its value of B, and the KC×NR micro-panel is re-read once per row of the tile. v4
// keeps the tile in registers and loads each B vector once for all MR rows.
// (Kept from an earlier attempt: in p, i, j order GCC 12 vectorized across p with
// shuffles instead, and the kernel ran 5× slower than v2.)
template <class T, int MR, int NR>
void plain_micro_kernel(int64_t kc, const T* a, const T* b, T alpha, T beta, T* c, int64_t rsC,
                        int64_t csC, int64_t m, int64_t n) {
  T acc[MR][NR] = {};
  for (int i = 0; i < MR; ++i) {
    for (int64_t p = 0; p < kc; ++p) {
      for (int j = 0; j < NR; ++j) acc[i][j] += a[p * MR + i] * b[p * NR + j];
    }
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T& out = c[i * rsC + j * csC];
      out = beta == T(0) ? alpha * acc[i][j] : alpha * acc[i][j] + beta * out;
    }
  }
}

}  // namespace

template <class T>
void gemm_blocked(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA, int64_t csA,
                  const T* B, int64_t rsB, int64_t csB, T beta, T* C, int64_t rsC, int64_t csC,
                  const GemmKernel<T>& kernel, bool threaded) {
  if (M == 0 || N == 0) return;
  if (K == 0) return scale_c(M, N, beta, C, rsC, csC);

  const int64_t mr = kernel.mr, nr = kernel.nr;
  T* packed_b = t_packed_b.get<T>(kernel.kc * round_up(std::min(kernel.nc, N), nr));

  for (int64_t jc = 0; jc < N; jc += kernel.nc) {
    const int64_t nb = std::min(kernel.nc, N - jc);
    const int64_t b_panels = (nb + nr - 1) / nr;

    for (int64_t pc = 0; pc < K; pc += kernel.kc) {
      const int64_t kb = std::min(kernel.kc, K - pc);
      const T beta_pc = pc == 0 ? beta : T(1);  // later K-slices accumulate into C
      const T* B_block = B + pc * rsB + jc * csB;
      const T* A_slice = A + pc * csA;
      T* C_panel = C + jc * csC;

      auto pack_b_panels = [&](int64_t begin, int64_t end) {
        pack_b(kb, nb, B_block, rsB, csB, nr, begin, end, packed_b);
      };

      // Computes C rows [m0, m1) × the B panels [p0, p1), blocking M by MC.
      auto compute = [&](int64_t m0, int64_t m1, int64_t p0, int64_t p1) {
        const int64_t n0 = p0 * nr, n1 = std::min(nb, p1 * nr);
        T* packed_a = t_packed_a.get<T>(round_up(kernel.mc, mr) * kb);
        for (int64_t ic = m0; ic < m1; ic += kernel.mc) {
          const int64_t mb = std::min(kernel.mc, m1 - ic);
          pack_a(mb, kb, A_slice + ic * rsA, rsA, csA, mr, packed_a);
          macro_kernel(mb, n1 - n0, kb, packed_a, packed_b + n0 * kb, alpha, beta_pc,
                       C_panel + ic * rsC + n0 * csC, rsC, csC, kernel);
        }
      };

      if (!threaded) {
        pack_b_panels(0, b_panels);
        compute(0, M, 0, b_panels);
        continue;
      }

      // v5: every thread packs a share of B, then (after parallel_for's implicit join)
      // every thread computes a share of C. Split along whichever side has more tiles,
      // so both threads have work even when C is a thin strip.
      parallel_for(0, b_panels, 1, pack_b_panels);
      const int64_t a_panels = (M + mr - 1) / mr;
      if (a_panels >= b_panels) {
        parallel_for(0, a_panels, 1, [&](int64_t begin, int64_t end) {
          compute(begin * mr, std::min(M, end * mr), 0, b_panels);
        });
      } else {
        parallel_for(0, b_panels, 1, [&](int64_t begin, int64_t end) {
          compute(0, M, begin, end);  // each thread packs all of A: cheap, since M is small
        });
      }
    }
  }
}

template void gemm_blocked<float>(int64_t, int64_t, int64_t, float, const float*, int64_t, int64_t,
                                  const float*, int64_t, int64_t, float, float*, int64_t, int64_t,
                                  const GemmKernel<float>&, bool);
template void gemm_blocked<double>(int64_t, int64_t, int64_t, double, const double*, int64_t,
                                   int64_t, const double*, int64_t, int64_t, double, double*,
                                   int64_t, int64_t, const GemmKernel<double>&, bool);
template void gemm_blocked<int32_t>(int64_t, int64_t, int64_t, int32_t, const int32_t*, int64_t,
                                    int64_t, const int32_t*, int64_t, int64_t, int32_t, int32_t*,
                                    int64_t, int64_t, const GemmKernel<int32_t>&, bool);
template void gemm_blocked<int64_t>(int64_t, int64_t, int64_t, int64_t, const int64_t*, int64_t,
                                    int64_t, const int64_t*, int64_t, int64_t, int64_t, int64_t*,
                                    int64_t, int64_t, const GemmKernel<int64_t>&, bool);

}  // namespace detail

// v3 uses the same tile shape and blocking as v4 (Note [Register tile]), so the two
// differ only in how the tile is computed.
template <class T>
void gemm_v3_blocked(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA, int64_t csA,
                     const T* B, int64_t rsB, int64_t csB, T beta, T* C, int64_t rsC, int64_t csC) {
  using Tile = detail::Tile<T>;
  const detail::GemmKernel<T> kernel =
      detail::tiled_kernel<T>(detail::plain_micro_kernel<T, Tile::kMR, Tile::kNR>);
  detail::gemm_blocked(M, N, K, alpha, A, rsA, csA, B, rsB, csB, beta, C, rsC, csC, kernel,
                       /*threaded=*/false);
}

GLASS_GEMM_INSTANTIATE(gemm_v3_blocked);

}  // namespace glass::cpu
