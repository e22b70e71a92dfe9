// tests/core/gemm_test.cpp — every rung of the gemm ladder against v1, the oracle.
//
// Each case builds A, B and C with a fixed seed in a chosen memory layout (row-major,
// transposed, or a strided slice of a bigger buffer), runs one version, and compares
// with gemm_v1_naive on the same inputs. Floats compare within a K-aware bound (the
// versions sum in different orders); integers and v4-vs-v5 compare exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/cpu/gemm.h"
#include "core/error.h"
#include "core/parallel.h"

namespace glass::cpu {
namespace {

// How a matrix sits in its buffer (Note [GEMM strides] in gemm.h).
enum class Layout { kRowMajor, kTransposed, kSlice };

const char* name(Layout l) {
  switch (l) {
    case Layout::kRowMajor: return "row-major";
    case Layout::kTransposed: return "transposed";
    case Layout::kSlice: return "slice";
  }
  return "?";
}

// A rows×cols matrix in a buffer. kSlice is every other column of a wider, padded
// row-major buffer, so neither stride is 1 and the element order is unusual.
template <class T>
struct Matrix {
  int64_t rows, cols, rs = 0, cs = 0;
  std::vector<T> buffer;

  Matrix(int64_t rows_, int64_t cols_, Layout layout) : rows(rows_), cols(cols_) {
    switch (layout) {
      case Layout::kRowMajor:
        rs = cols;
        cs = 1;
        break;
      case Layout::kTransposed:
        rs = 1;
        cs = rows;
        break;
      case Layout::kSlice:
        rs = 2 * cols + 3;
        cs = 2;
        break;
    }
    buffer.assign(std::max<int64_t>(1, rows * rs + cols * cs), T(0));
  }
  T* data() { return buffer.data(); }
  T& at(int64_t i, int64_t j) { return buffer[i * rs + j * cs]; }
};

template <class T>
void fill_random(Matrix<T>& m, std::mt19937& rng) {
  for (int64_t i = 0; i < m.rows; ++i) {
    for (int64_t j = 0; j < m.cols; ++j) {
      if constexpr (std::is_floating_point_v<T>) {
        m.at(i, j) = std::uniform_real_distribution<T>(-1, 1)(rng);
      } else {
        m.at(i, j) = std::uniform_int_distribution<T>(-9, 9)(rng);
      }
    }
  }
}

template <class T>
using GemmFn = void (*)(int64_t, int64_t, int64_t, T, const T*, int64_t, int64_t, const T*, int64_t,
                        int64_t, T, T*, int64_t, int64_t);

template <class T>
struct Version {
  const char* name;
  GemmFn<T> fn;
};

template <class T>
std::vector<Version<T>> fast_versions() {
  return {{"v2", gemm_v2_loop_order<T>},
          {"v3", gemm_v3_blocked<T>},
          {"v4", gemm_v4_microkernel<T>},
          {"v5", gemm_v5_threaded<T>}};
}

struct Case {
  int64_t M, N, K;
  Layout a = Layout::kRowMajor, b = Layout::kRowMajor, c = Layout::kRowMajor;
  double alpha = 1, beta = 0;
};

std::string describe(const Case& c) {
  return "M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) + " K=" + std::to_string(c.K) +
         " A " + name(c.a) + ", B " + name(c.b) + ", C " + name(c.c) +
         " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta);
}

// Runs `version` on the case and checks it against the oracle. With beta == 0 the C given
// to it is full of NaN (floats), which must not leak into the result.
template <class T>
void check_against_oracle(const Case& tc, const Version<T>& version, uint32_t seed) {
  SCOPED_TRACE(std::string(version.name) + ": " + describe(tc));
  std::mt19937 rng(seed);
  Matrix<T> A(tc.M, tc.K, tc.a), B(tc.K, tc.N, tc.b), C(tc.M, tc.N, tc.c);
  fill_random(A, rng);
  fill_random(B, rng);
  fill_random(C, rng);
  Matrix<T> expected = C;
  if constexpr (std::is_floating_point_v<T>) {
    if (tc.beta == 0)
      std::fill(C.buffer.begin(), C.buffer.end(), std::numeric_limits<T>::quiet_NaN());
  }
  const T alpha = static_cast<T>(tc.alpha), beta = static_cast<T>(tc.beta);
  gemm_v1_naive<T>(tc.M, tc.N, tc.K, alpha, A.data(), A.rs, A.cs, B.data(), B.rs, B.cs, beta,
                   expected.data(), expected.rs, expected.cs);
  version.fn(tc.M, tc.N, tc.K, alpha, A.data(), A.rs, A.cs, B.data(), B.rs, B.cs, beta, C.data(),
             C.rs, C.cs);

  // Summation order differs between versions: allow an error that grows with K.
  double tol = 0;
  if constexpr (std::is_floating_point_v<T>) {
    const double per_term = std::is_same_v<T, float> ? 1e-5 : 1e-13;
    tol = per_term * (std::max<int64_t>(tc.K, 1) * std::abs(tc.alpha) + std::abs(tc.beta));
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < tc.M && bad < 5; ++i) {
    for (int64_t j = 0; j < tc.N && bad < 5; ++j) {
      const double got = static_cast<double>(C.at(i, j));
      const double want = static_cast<double>(expected.at(i, j));
      // |a|, |b|, |c| <= 1 for floats, so the bound needs no max|a|·max|b| factor.
      if (!(std::abs(got - want) <= tol)) {
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got << ", oracle says " << want;
        ++bad;
      }
    }
  }
  // Elements of the buffer outside the matrix (padding of a slice) stay untouched.
  if (tc.c == Layout::kSlice && tc.M > 0 && tc.N > 0 && tc.beta != 0) {
    EXPECT_EQ(C.buffer[1], expected.buffer[1]) << "wrote between the columns of a slice";
  }
}

template <class T>
void check_all_versions(const Case& tc, uint32_t seed = 1) {
  for (const Version<T>& v : fast_versions<T>()) check_against_oracle<T>(tc, v, seed);
}

const int64_t kOddSizes[] = {1, 7, 17, 33, 65, 129};

template <class T>
class GemmFloatTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GemmFloatTest, FloatTypes);

TYPED_TEST(GemmFloatTest, OddSizesRowMajor) {
  for (int64_t M : kOddSizes) {
    for (int64_t N : kOddSizes) {
      for (int64_t K : kOddSizes) check_all_versions<TypeParam>({M, N, K});
    }
  }
}

// Sizes one below, at and above the register tile (6 × 16..64) and the cache blocks
// (KC = 2 KiB of k, MC = 384 rows, NC = 4096 columns), where edge handling lives.
TYPED_TEST(GemmFloatTest, TileAndBlockEdges) {
  const Case cases[] = {
      {5, 15, 3},    {6, 16, 4},    {7, 17, 5},  {6, 64, 8},    {12, 63, 9},   {13, 65, 10},
      {11, 129, 31}, {3, 8, 255},   {4, 9, 256}, {5, 33, 257},  {2, 31, 511},  {7, 64, 512},
      {9, 65, 513},  {3, 10, 1100}, {383, 6, 7}, {384, 7, 8},   {385, 9, 3},   {800, 5, 2},
      {3, 4095, 2},  {2, 4100, 3},  {1, 1, 1},   {1, 200, 300}, {200, 1, 300}, {100, 200, 1},
  };
  for (const Case& c : cases) check_all_versions<TypeParam>(c);
}

TYPED_TEST(GemmFloatTest, TransposedAndStridedOperands) {
  const Layout layouts[] = {Layout::kRowMajor, Layout::kTransposed, Layout::kSlice};
  for (Layout a : layouts) {
    for (Layout b : layouts) {
      for (Layout c : layouts) {
        check_all_versions<TypeParam>({33, 70, 17, a, b, c});
        check_all_versions<TypeParam>({7, 5, 130, a, b, c});
      }
    }
  }
}

TYPED_TEST(GemmFloatTest, AlphaBeta) {
  const double scales[][2] = {{1, 0}, {2.5, 0}, {1, 1}, {-0.5, 0.75}, {0, 2}, {3, -1}};
  for (const auto& s : scales) {
    check_all_versions<TypeParam>(
        {17, 65, 33, Layout::kRowMajor, Layout::kRowMajor, Layout::kRowMajor, s[0], s[1]});
    // K spanning two KC blocks: only the first may apply beta.
    check_all_versions<TypeParam>(
        {13, 70, 1030, Layout::kRowMajor, Layout::kTransposed, Layout::kSlice, s[0], s[1]});
  }
}

// Big enough for v5 to go parallel (both the split over M and the split over N).
TYPED_TEST(GemmFloatTest, ThreadedSizes) {
  const int saved = get_num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    check_all_versions<TypeParam>({300, 257, 130});
    check_all_versions<TypeParam>(
        {7, 4200, 600, Layout::kRowMajor, Layout::kRowMajor, Layout::kRowMajor, 1.5, 0.5});
  }
  set_num_threads(saved);
}

// v5 splits the same tiles over threads; each tile sums in the same order, so the
// result must match v4 bit for bit.
TYPED_TEST(GemmFloatTest, ThreadedMatchesSerialExactly) {
  using T = TypeParam;
  const int saved = get_num_threads();
  set_num_threads(2);
  for (const Case& tc : {Case{517, 300, 700}, Case{5, 5000, 300}}) {
    std::mt19937 rng(7);
    Matrix<T> A(tc.M, tc.K, tc.a), B(tc.K, tc.N, tc.b), C4(tc.M, tc.N, tc.c);
    fill_random(A, rng);
    fill_random(B, rng);
    Matrix<T> C5 = C4;
    gemm_v4_microkernel<T>(tc.M, tc.N, tc.K, T(1), A.data(), A.rs, A.cs, B.data(), B.rs, B.cs, T(0),
                           C4.data(), C4.rs, C4.cs);
    gemm_v5_threaded<T>(tc.M, tc.N, tc.K, T(1), A.data(), A.rs, A.cs, B.data(), B.rs, B.cs, T(0),
                        C5.data(), C5.rs, C5.cs);
    EXPECT_TRUE(C4.buffer == C5.buffer) << describe(tc);
  }
  set_num_threads(saved);
}

TYPED_TEST(GemmFloatTest, EmptyK) {
  // K == 0: C = beta * C, and beta == 0 clears NaN.
  for (double beta : {0.0, 1.0, -2.0}) {
    check_all_versions<TypeParam>(
        {9, 70, 0, Layout::kRowMajor, Layout::kRowMajor, Layout::kSlice, 1, beta});
  }
}

TYPED_TEST(GemmFloatTest, EmptyMOrNWritesNothing) {
  using T = TypeParam;
  T sentinel[4] = {1, 2, 3, 4};
  const T a[4] = {1, 1, 1, 1}, b[4] = {1, 1, 1, 1};
  for (const Version<T>& v : fast_versions<T>()) {
    v.fn(0, 2, 2, T(1), a, 2, 1, b, 2, 1, T(0), sentinel, 2, 1);
    v.fn(2, 0, 2, T(1), a, 2, 1, b, 2, 1, T(0), sentinel, 2, 1);
    v.fn(0, 0, 0, T(1), a, 2, 1, b, 2, 1, T(0), sentinel, 2, 1);
    EXPECT_EQ(sentinel[0], T(1)) << v.name;
    EXPECT_EQ(sentinel[3], T(4)) << v.name;
  }
}

template <class T>
class GemmIntTest : public ::testing::Test {};
using IntTypes = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(GemmIntTest, IntTypes);

TYPED_TEST(GemmIntTest, ExactAgainstOracle) {
  check_all_versions<TypeParam>({17, 65, 33});
  check_all_versions<TypeParam>(
      {7, 129, 520, Layout::kTransposed, Layout::kSlice, Layout::kRowMajor, 2, 3});
  check_all_versions<TypeParam>(
      {130, 7, 1, Layout::kSlice, Layout::kTransposed, Layout::kTransposed, -1, 0});
  check_all_versions<TypeParam>(
      {5, 6, 0, Layout::kRowMajor, Layout::kRowMajor, Layout::kRowMajor, 1, 2});
}

TEST(GemmVersionSwitch, SelectsTheVersionGemmRuns) {
  const GemmVersion saved = get_gemm_version();
  std::mt19937 rng(3);
  Matrix<float> A(40, 50, Layout::kRowMajor), B(50, 70, Layout::kRowMajor);
  fill_random(A, rng);
  fill_random(B, rng);
  Matrix<float> expected(40, 70, Layout::kRowMajor);
  gemm_v1_naive<float>(40, 70, 50, 1.f, A.data(), A.rs, A.cs, B.data(), B.rs, B.cs, 0.f,
                       expected.data(), expected.rs, expected.cs);
  for (int v = 1; v <= 5; ++v) {
    set_gemm_version(static_cast<GemmVersion>(v));
    EXPECT_EQ(static_cast<int>(get_gemm_version()), v);
    Matrix<float> C(40, 70, Layout::kRowMajor);
    gemm<float>(40, 70, 50, 1.f, A.data(), A.rs, A.cs, B.data(), B.rs, B.cs, 0.f, C.data(), C.rs,
                C.cs);
    for (size_t i = 0; i < C.buffer.size(); ++i) {
      ASSERT_NEAR(C.buffer[i], expected.buffer[i], 1e-5 * 50) << "version " << v;
    }
  }
  set_gemm_version(saved);
}

TEST(GemmVersionSwitch, RejectsUnknownVersions) {
  const GemmVersion saved = get_gemm_version();
  EXPECT_THROW(set_gemm_version(static_cast<GemmVersion>(0)), glass::Error);
  EXPECT_THROW(set_gemm_version(static_cast<GemmVersion>(6)), glass::Error);
  EXPECT_EQ(get_gemm_version(), saved);
}

}  // namespace
}  // namespace glass::cpu
