// cuda/kernels/bmm.cu — the kCUDA bmm entry: out = beta·out + alpha·a@b on the gemm ladder.
//
// core/device_kernels.h hands over a: (B, M, K), b: (B, K, N), out: (B, M, N) with any
// strides and one dtype. This file picks the rung (cuda::get_gemm_version(), gemm.h),
// turns the tensors into a GemmProblem — device addresses and strides in elements — and
// queues it on the current stream, in batches of at most the grid's z limit.
//
// Note [when bmm copies an operand]
// v1–v4 index every operand through its strides, so transposed, sliced and expanded
// operands go in as they are: no copy. v5 reads rows of A and B as 16-byte vectors, which
// needs a unit column stride and aligned rows. An operand that has neither, but whose
// contiguous copy would (its row length is a multiple of the vector width) — most often
// a transposed weight, x @ W.t() — is copied first: the copy reads it once, while the
// kernel rereads every element of A once per 128 columns of C and of B once per 128 rows,
// each time with scalar, uncoalesced loads. (PyTorch does the same before cuBLAS, for the
// layouts cuBLAS cannot take.) An operand whose rows could not be aligned even when
// contiguous gains nothing from a copy, and v5 reads it in place with scalar loads.
//
// Invariant: nothing here blocks the host; a temporary copy is freed when this returns,
// which is safe because the caching allocator reuses it only for later work on this
// stream (as in PyTorch).
#include <algorithm>

#include "core/ops/factories.h"
#include "core/scalar_type.h"
#include "cuda/kernels/gemm_common.cuh"
#include "cuda/kernels/kernels.h"
#include "cuda/stream.h"

namespace glass::cuda::GLASS_KERNEL_NS {
namespace {

MatrixStrides strides_of(const Tensor& t) { return {t.stride(0), t.stride(1), t.stride(2)}; }

// `x` itself, or a contiguous copy of it when that lets v5 read its rows as vectors
// (Note [when bmm copies an operand]).
template <class T>
Tensor with_vector_rows(const Tensor& x) {
  if (rows_are_vectors(x.data_ptr<T>(), strides_of(x), x.size(0), x.size(1), x.size(2))) return x;
  if (x.size(2) % kVecWidth<T> != 0) return x;  // its copy's rows would not be aligned either
  Tensor copy = empty(x.sizes(), x.options());
  glass::detail::copy_into(copy, x, /*non_blocking=*/false);
  return copy;
}

template <class T>
void run_rung(GemmVersion version, const GemmProblem<T>& p) {
  switch (version) {
    case GemmVersion::kNaive: return gemm_v1_naive(p);
    case GemmVersion::kCoalesced: return gemm_v2_coalesced(p);
    case GemmVersion::kSharedTiles: return gemm_v3_shared_tiles(p);
    case GemmVersion::kRegisterTiles: return gemm_v4_register_tiles(p);
    case GemmVersion::kVectorized: return gemm_v5_vectorized(p);
  }
  GLASS_INTERNAL_ASSERT(false, "bmm: unknown gemm version ", static_cast<int>(version));
}

}  // namespace

void launch_bmm(const Tensor& a_in, const Tensor& b_in, const Tensor& out, const Scalar& beta,
                const Scalar& alpha) {
  const int64_t batch = a_in.size(0), M = a_in.size(1), K = a_in.size(2), N = b_in.size(2);
  if (batch == 0 || M == 0 || N == 0) return;
  const GemmVersion version = get_gemm_version();
  dispatch_numeric(a_in.dtype(), "bmm", [&]<class T>() {
    Tensor a = a_in, b = b_in;
    if (version == GemmVersion::kVectorized && K > 0) {
      a = with_vector_rows<T>(a_in);
      b = with_vector_rows<T>(b_in);
    }
    const CUDAStream stream = getCurrentCUDAStream(static_cast<DeviceIndex>(out.device().index()));
    GemmProblem<T> p;
    p.M = M, p.N = N, p.K = K;
    p.alpha = alpha.to<T>(), p.beta = beta.to<T>();
    p.sa = strides_of(a), p.sb = strides_of(b), p.sc = strides_of(out);
    p.stream = stream;
    // The batch goes on blockIdx.z, which stops at the device's max grid z (65535).
    const int64_t max_z = runtime().properties(runtime().stream_device(stream)).max_grid_dim.z;
    for (int64_t z0 = 0; z0 < batch; z0 += max_z) {
      p.batch = std::min(max_z, batch - z0);
      // K == 0: a and b hold no elements (and maybe no memory); the rungs never read them.
      p.a = K == 0 ? nullptr : a.data_ptr<T>() + z0 * p.sa.batch;
      p.b = K == 0 ? nullptr : b.data_ptr<T>() + z0 * p.sb.batch;
      p.c = out.data_ptr<T>() + z0 * p.sc.batch;
      run_rung(version, p);
    }
  });
}

}  // namespace glass::cuda::GLASS_KERNEL_NS
