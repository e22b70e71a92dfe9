// core/cpu/gemm.h — C = alpha·A·B + beta·C on the CPU, as a ladder of five versions.
//
// Every version computes the same thing and is checked against v1, the oracle
// (tests/core/cpu/gemm_test.cpp). Each rung changes one idea; the slower ones are kept
// because the differences between them are the lesson.
//
// matmul ladder (float32, square n, GFLOP/s, median of 3; 2-core Xeon VM with AVX-512,
// g++ 12 -O3 -march=native; OpenBLAS 0.3.21 measured in the same run; bench/RESULTS.md)
//                                        n=512    n=1024          n=2048
//                                        1 thr    1 thr  2 thr    1 thr  2 thr
//   v1 naive i-j-k .................      2.0        -      -        -      -   the oracle
//   v2 i-k-j loop order ............     24.6        -      -        -      -
//   v3 cache blocking + packing ....     38.4     34.9      -     34.7      -
//   v4 6×4-vector register tile ....    144.2    136.5      -    138.9      -
//   v5 v4 + thread pool ............    149.9    136.4  258.8    131.3  269.4
//   OpenBLAS cblas_sgemm ...........    133.2    137.2  273.3    139.2  277.5
// (v1 and v2 are not run past 512; v1–v4 are single-threaded by design.)
// float64, n=1024, best of 5 outside the benchmark: v4 60 GFLOP/s on 1 thread, v5 123
// on 2 (OpenBLAS cblas_dgemm: 65, 129).
//
// Note [GEMM strides]
// Every matrix comes with a row stride and a column stride, in elements (BLIS style):
// element (i, j) of A is A[i * rsA + j * csA]. A row-major M×K matrix has (rsA, csA) =
// (K, 1); its transpose, read in place, is (1, K); a column slice keeps the parent's
// strides. So transposed and sliced operands need no copy: the packing step of v3–v5
// reads any strides, and everything after it runs on packed, contiguous panels.
// Strides may be any values >= 0; C must not alias A or B.
//
// beta == 0 means C is write-only: it is never read, so NaN or garbage in C is ignored
// (as in BLAS and torch.addmm). K == 0 gives C = beta·C.
#pragma once

#include <cstdint>

namespace glass::cpu {

// C[M,N] = alpha * A[M,K] · B[K,N] + beta * C[M,N], using the version chosen below.
// A: (M, K) with strides (rsA, csA); B: (K, N) with (rsB, csB); C: (M, N) with (rsC, csC).
template <class T>
void gemm(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA, int64_t csA,
          const T* B, int64_t rsB, int64_t csB, T beta, T* C, int64_t rsC, int64_t csC);

enum class GemmVersion : int {
  kNaive = 1,        // v1: i-j-k dot products straight from the strided inputs
  kLoopOrder = 2,    // v2: i-k-j order, so the inner loop streams rows of B and C
  kBlocked = 3,      // v3: MC/KC/NC cache blocking, A and B packed into panels
  kMicroKernel = 4,  // v4: v3 with an MR×NR register-blocked vector micro-kernel
  kThreaded = 5,     // v5: v4 with the M or N panels split over glass::parallel_for
};

// Process-wide switch used by gemm(). Default kThreaded; the environment variable
// GLASS_GEMM_VERSION=1..5, read once at first use, overrides the default.
void set_gemm_version(GemmVersion v);
GemmVersion get_gemm_version();

// Direct entry points, for tests and benchmarks. Same contract as gemm().
// Instantiated for float, double, int32_t and int64_t.
template <class T>
void gemm_v1_naive(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA, int64_t csA,
                   const T* B, int64_t rsB, int64_t csB, T beta, T* C, int64_t rsC, int64_t csC);
template <class T>
void gemm_v2_loop_order(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA,
                        int64_t csA, const T* B, int64_t rsB, int64_t csB, T beta, T* C,
                        int64_t rsC, int64_t csC);
template <class T>
void gemm_v3_blocked(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA, int64_t csA,
                     const T* B, int64_t rsB, int64_t csB, T beta, T* C, int64_t rsC, int64_t csC);
template <class T>
void gemm_v4_microkernel(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA,
                         int64_t csA, const T* B, int64_t rsB, int64_t csB, T beta, T* C,
                         int64_t rsC, int64_t csC);
template <class T>
void gemm_v5_threaded(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsA,
                      int64_t csA, const T* B, int64_t rsB, int64_t csB, T beta, T* C, int64_t rsC,
                      int64_t csC);

}  // namespace glass::cpu
