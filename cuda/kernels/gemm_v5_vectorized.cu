// cuda/kernels/gemm_v5_vectorized.cu — v5: 128×128 tiles, 8×8 per thread, 16-byte loads.
//
// v4 with two changes. (1) Bigger blocks of C per thread (8×8 of a 128×128 tile): 16
// shared loads now feed 64 multiply-adds. (2) Loads move 16 bytes — a Vec of 4 floats
// (2 doubles) — where the memory allows it: from global memory when an operand's rows
// are contiguous and 16-byte aligned (the host checks: vec_a, vec_b), and from B's tile
// in shared memory, which is laid out as Vecs. A GPU then issues one load instruction
// where v4 issued four (CUDA's float4 loads; PyTorch's aligned_vector). A's tile stays
// scalar: it is transposed on the way in, one element per store, so that no two threads
// write parts of one Vec. Where a row is not aligned, or a vector would cross the edge
// of the matrix, the same Vec is filled by scalar loads — correct for any strides.
//
// A thread's 8 rows are W-element runs spaced 16·W apart (W = elements per Vec), and so
// are its columns: a warp's reads of a tile row are neighbouring Vecs.
//
// Invariant: each element of C still sums its products in increasing k (v1's order).
#include "cuda/kernels/gemm_common.cuh"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

template <class T>
constexpr int kW = kVecWidth<T>;  // elements per Vec: 4 floats, 2 doubles

template <class T>
struct alignas(kVecBytes) Vec {
  T lane[kW<T>];
};

constexpr int kThreads = 16;         // the block is kThreads × kThreads
constexpr int kTM = 8, kTN = 8;      // the block of C one thread computes
constexpr int kBM = kThreads * kTM;  // 128 rows of C per block
constexpr int kBN = kThreads * kTN;  // 128 columns
constexpr int kBK = 8;               // k per staged tile

// W consecutive elements of row `row` of X, from column `col` on, 0 outside rows × cols.
// One 16-byte load when the host said the rows allow it (`vec`) and the run is inside.
template <class T>
__device__ __forceinline__ Vec<T> load_run(gptr<const T> X, int64_t rs, int64_t cs, int64_t rows,
                                           int64_t cols, int64_t row, int64_t col, bool vec) {
  if (vec && row < rows && col + kW<T> <= cols)
    return gptr_cast<const Vec<T>>(X + (row * rs + col))[0];
  Vec<T> v;
  for (int w = 0; w < kW<T>; ++w)
    v.lane[w] = row < rows && col + w < cols ? X[row * rs + (col + w) * cs] : T(0);
  return v;
}

template <class T>
__global__ void gemm_v5_vectorized_kernel(GemmShape s, T alpha, gptr<const T> A, bool vec_a,
                                          gptr<const T> B, bool vec_b, T beta, gptr<T> C) {
  constexpr int W = kW<T>;
  GLASS_SHARED(T[kBM], As, kBK);           // As[k][m]: A's tile, transposed
  GLASS_SHARED(Vec<T>[kBN / W], Bs, kBK);  // Bs[k][n / W]: B's tile, in Vecs
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kThreads + tx;
  const int64_t i0 = int64_t(blockIdx.x) * kBM, j0 = int64_t(blockIdx.y) * kBN;
  const int64_t z = blockIdx.z;
  const gptr<const T> a = A + z * s.a.batch;
  const gptr<const T> b = B + z * s.b.batch;

  T acc[kTM][kTN] = {};
  for (int64_t k0 = 0; k0 < s.K; k0 += kBK) {
    // A: runs along k (a row of A), scattered into the transposed tile.
    for (int e = tid; e < kBM * kBK / W; e += kThreads * kThreads) {
      const int m = e / (kBK / W), k = e % (kBK / W) * W;
      const Vec<T> run =
          load_run<T>(a + k0 * s.a.col, s.a.row, s.a.col, s.M, s.K - k0, i0 + m, k, vec_a);
      for (int w = 0; w < W; ++w) As[k + w][m] = run.lane[w];
    }
    // B: runs along n (a row of B), stored as they are.
    for (int e = tid; e < kBK * kBN / W; e += kThreads * kThreads) {
      const int k = e / (kBN / W), n = e % (kBN / W) * W;
      Bs[k][n / W] =
          load_run<T>(b + j0 * s.b.col, s.b.row, s.b.col, s.K, s.N - j0, k0 + k, n, vec_b);
    }
    __syncthreads();
    for (int k = 0; k < kBK; ++k) {
      T a_reg[kTM];
      Vec<T> b_reg[kTN / W];
      for (int r = 0; r < kTM; ++r) a_reg[r] = As[k][(r / W * kThreads + ty) * W + r % W];
      for (int g = 0; g < kTN / W; ++g) b_reg[g] = Bs[k][g * kThreads + tx];
      for (int r = 0; r < kTM; ++r)
        for (int c = 0; c < kTN; ++c) acc[r][c] += a_reg[r] * b_reg[c / W].lane[c % W];
    }
    __syncthreads();
  }
  for (int r = 0; r < kTM; ++r) {
    const int64_t i = i0 + (r / W * kThreads + ty) * W + r % W;
    for (int c = 0; c < kTN; ++c) {
      const int64_t j = j0 + (c / W * kThreads + tx) * W + c % W;
      if (i < s.M && j < s.N)
        gemm_store(C + z * s.c.batch + i * s.c.row + j * s.c.col, alpha, acc[r][c], beta, s.K);
    }
  }
}

}  // namespace

template <class T>
void gemm_v5_vectorized(const GemmProblem<T>& p) {
  const std::string name = gemm_kernel_name<T>("gemm_v5_vectorized");
  const bool vec_a = rows_are_vectors(p.a, p.sa, p.batch, p.M, p.K);
  const bool vec_b = rows_are_vectors(p.b, p.sb, p.batch, p.K, p.N);
  launch_kernel(name.c_str(), gemm_v5_vectorized_kernel<T>,
                Dim3(unsigned(ceil_div(p.M, kBM)), unsigned(ceil_div(p.N, kBN)), unsigned(p.batch)),
                Dim3(kThreads, kThreads), 0, p.stream, shape_of(p), p.alpha, gptr<const T>(p.a),
                vec_a, gptr<const T>(p.b), vec_b, p.beta, gptr<T>(p.c));
}

GLASS_GEMM_RUNG_INSTANTIATE(gemm_v5_vectorized);

}  // namespace glass::cuda::GLASS_KERNEL_NS
