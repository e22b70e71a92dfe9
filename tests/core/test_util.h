// tests/core/test_util.h — shared helpers for the core tests.
//
// The independent reference for every op test is `ref_at`: it reads one element through
// the seed's address formula (offset + sum index*stride) straight from the storage
// bytes, without using any op under test. Random layouts come from `strided_variant`,
// which makes the same logical values live in a transposed, step-2-sliced, expanded or
// offset layout, so each op is checked on every kind of non-contiguous input.
//
// Device tensors (the device-parameterised suites, device_test.h) are read the same way:
// `host` copies a device tensor's whole storage to the CPU once and views the copy with
// the tensor's sizes, strides and offset, so the address formula still does the reading.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <glass/glass.h>

namespace glass::testing {

// t itself on the CPU; for a device tensor, a CPU tensor with the same sizes, strides and
// storage offset over a host copy of t's entire storage. One device-to-host copy (a sync
// point) per call: take it once, then read as many elements as needed.
inline Tensor host(const Tensor& t) {
  if (t.is_cpu()) return t;
  NoGradGuard no_grad;  // reading values is not part of any graph
  int64_t storage_elems = static_cast<int64_t>(t.storage().nbytes()) / t.element_size();
  Tensor storage = t.detach().as_strided({storage_elems}, {1}, 0).cpu();
  return storage.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

// Element `index` of t, as double, via the address formula.
inline double ref_at(const Tensor& device_or_cpu, IntArrayRef index) {
  Tensor t = host(device_or_cpu);
  int64_t off = glass::storage_index(t.sizes(), t.strides(), t.storage_offset(), index);
  const char* base = static_cast<const char*>(t.storage().data());
  return dispatch_dtype(t.dtype(), "ref_at", [&]<class T>() {
    return static_cast<double>(reinterpret_cast<const T*>(base)[off]);
  });
}

// Calls f(index) for every index of `sizes` in row-major order.
inline void for_each_index(IntArrayRef sizes,
                           const std::function<void(const std::vector<int64_t>&)>& f) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(idx);
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
}

// All elements in row-major order, read through the address formula.
inline std::vector<double> values(const Tensor& device_or_cpu) {
  Tensor t = host(device_or_cpu);
  std::vector<double> out;
  for_each_index(t.sizes(), [&](const std::vector<int64_t>& i) { out.push_back(ref_at(t, i)); });
  return out;
}

// PyTorch's assert_close defaults: float32 rtol 1.3e-6, atol 1e-5; float64 1e-7, 1e-7.
inline double default_rtol(ScalarType t) { return t == kFloat64 ? 1e-7 : 1.3e-6; }
inline double default_atol(ScalarType t) { return t == kFloat64 ? 1e-7 : 1e-5; }

inline ::testing::AssertionResult close(const Tensor& actual, const std::vector<double>& expected,
                                        double rtol = -1, double atol = -1) {
  if (rtol < 0) rtol = default_rtol(actual.dtype());
  if (atol < 0) atol = default_atol(actual.dtype());
  std::vector<double> a = values(actual);
  if (a.size() != expected.size())
    return ::testing::AssertionFailure()
           << "numel " << a.size() << " vs expected " << expected.size();
  for (size_t i = 0; i < a.size(); ++i) {
    bool both_nan = std::isnan(a[i]) && std::isnan(expected[i]);
    bool same_inf = std::isinf(a[i]) && a[i] == expected[i];
    if (both_nan || same_inf) continue;
    if (!(std::abs(a[i] - expected[i]) <= atol + rtol * std::abs(expected[i])))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a[i] << " vs expected " << expected[i] << " (rtol "
             << rtol << ", atol " << atol << ")";
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult close(const Tensor& actual, const Tensor& expected,
                                        double rtol = -1, double atol = -1) {
  if (actual.sizes() != expected.sizes())
    return ::testing::AssertionFailure()
           << "shape " << actual.sizes() << " vs expected " << expected.sizes();
  return close(actual, values(expected), rtol, atol);
}

enum class Layout { Contiguous, Transposed, Strided, Expanded, Offset };
inline const char* to_string(Layout l) {
  switch (l) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Transposed: return "transposed";
    case Layout::Strided: return "sliced with step 2";
    case Layout::Expanded: return "expanded (stride 0)";
    case Layout::Offset: return "offset view";
  }
  return "?";
}
inline constexpr Layout kAllLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Strided,
                                         Layout::Expanded, Layout::Offset};

// A tensor with the same values as `src` (shape S, dim >= 1) in the given layout.
inline Tensor strided_variant(const Tensor& src, Layout layout) {
  switch (layout) {
    case Layout::Contiguous: return src.contiguous();
    case Layout::Transposed: {
      if (src.dim() < 2) return strided_variant(src, Layout::Strided);
      return src.transpose(0, -1).contiguous().transpose(0, -1);  // column-major storage
    }
    case Layout::Strided: {  // every other element of a twice-as-long buffer
      Shape big = src.sizes().vec();
      big.back() *= 2;
      Tensor b = zeros(big, src.options());
      Tensor v = b.slice(-1, 0, std::nullopt, 2);
      v.copy_(src);
      return v;
    }
    case Layout::Expanded: {  // only possible where the values repeat: use dim 0 of size 1
      Tensor first = src.narrow(0, 0, 1).contiguous();
      Shape s = src.sizes().vec();
      return first.expand(s);
    }
    case Layout::Offset: {
      Tensor b = empty({src.numel() + 5}, src.options());
      Tensor v = b.narrow(0, 5, src.numel()).view(src.sizes());
      v.copy_(src);
      return v;
    }
  }
  return src;
}

// A random CPU tensor (fixed seed) with values in [lo, hi); device suites move it with on().
inline Tensor random_tensor(IntArrayRef shape, ScalarType dtype, uint64_t seed, double lo = -2,
                            double hi = 2) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t = empty(shape, TensorOptions(kFloat64));
  double* p = t.data_ptr<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(gen);
  if (!is_floating_type(dtype)) {
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = std::floor(p[i] * 3);
  }
  return t.to(dtype);
}

}  // namespace glass::testing

// Expects `stmt` to throw glass::Error whose message contains every given substring.
#define EXPECT_GLASS_ERROR(stmt, ...)                                              \
  do {                                                                             \
    try {                                                                          \
      stmt;                                                                        \
      ADD_FAILURE() << "expected glass::Error from: " #stmt;                       \
    } catch (const ::glass::Error& e) {                                            \
      for (const char* needle : {__VA_ARGS__})                                     \
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)           \
            << "message of " #stmt " lacks \"" << needle << "\":\n  " << e.what(); \
    }                                                                              \
  } while (0)
