// lessons/02_storage_and_strides/exercises/wrong_answers.cpp — the deliberately wrong answers
// of wrong_answers.h: each passes the value checks of its exercise but calls what the
// exercise bans (or breaks the contract where the library is more lenient), and
// exercises_test.cpp asserts its grader rejects it.
#include "wrong_answers.h"

#include <vector>

namespace glass::lesson02::wrong {

namespace {

// A helper, so the test shows the symbol check following calls through one.
Tensor copy_by_library(const Tensor& t) { return t.contiguous(); }

}  // namespace

int64_t storage_address_by_library(IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                                   IntArrayRef index) {
  return glass::storage_index(sizes, strides, offset, index);
}

Tensor make_contiguous_by_copy(const Tensor& t) { return empty(t.sizes(), t.options()).copy_(t); }

// (It also returns t itself when t is contiguous already: no copy at all.)
Tensor make_contiguous_by_contiguous(const Tensor& t) { return copy_by_library(t); }

Tensor make_contiguous_by_clone(const Tensor& t) {
  auto copy = [](const Tensor& x) { return x.clone(); };
  return copy(t);
}

Tensor make_contiguous_by_op(const Tensor& t) { return ops::clone(t); }

namespace {

int64_t count(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// Row-major strides for `shape`, each times `step`.
Shape packed(IntArrayRef shape, int64_t step) {
  Shape out(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 0;) {
    out[d] = step;
    step *= shape[d];
  }
  return out;
}

// The chunk walk of the reference, with dims of size 1 kept in when `keep_size_one`.
std::optional<Shape> chunks(IntArrayRef sizes, IntArrayRef strides, IntArrayRef shape,
                            bool keep_size_one) {
  if (count(sizes) != count(shape)) throw Error("find_view_strides(): element counts differ");
  Shape out(shape.size(), 1);
  if (count(sizes) == 0) return out;
  std::vector<int64_t> os, ost;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (keep_size_one || sizes[d] != 1) {
      os.push_back(sizes[d]);
      ost.push_back(strides[d]);
    }
  int64_t new_d = static_cast<int64_t>(shape.size()) - 1;
  for (int64_t last = static_cast<int64_t>(os.size()) - 1; last >= 0;) {
    int64_t first = last, chunk_numel = os[last];
    while (first > 0 && ost[first - 1] == ost[first] * os[first]) chunk_numel *= os[--first];
    int64_t view_numel = 1;
    while (new_d >= 0 && view_numel < chunk_numel) {
      out[new_d] = view_numel * ost[last];
      view_numel *= shape[new_d--];
    }
    if (view_numel != chunk_numel) return std::nullopt;
    last = first - 1;
  }
  return out;
}

}  // namespace

std::optional<Shape> find_view_strides_by_library(IntArrayRef sizes, IntArrayRef strides,
                                                  IntArrayRef shape) {
  if (count(sizes) != count(shape)) throw Error("find_view_strides(): element counts differ");
  std::optional<DimVector> found = glass::view_strides(sizes, strides, shape);
  if (!found) return std::nullopt;
  return Shape(found->begin(), found->end());
}

std::optional<Shape> find_view_strides_by_view(IntArrayRef sizes, IntArrayRef strides,
                                               IntArrayRef shape) {
  if (count(sizes) != count(shape)) throw Error("find_view_strides(): element counts differ");
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 0) extent += (sizes[d] - 1) * strides[d];
  Tensor t = empty({extent}).as_strided(sizes, strides, 0);
  try {
    return t.view(shape).strides().vec();
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<Shape> find_view_strides_only_contiguous(IntArrayRef sizes, IntArrayRef strides,
                                                       IntArrayRef shape) {
  if (count(sizes) != count(shape)) throw Error("find_view_strides(): element counts differ");
  Shape want = packed(sizes, 1);
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] != 1 && strides[d] != want[d]) return std::nullopt;
  return packed(shape, 1);
}

std::optional<Shape> find_view_strides_one_chunk(IntArrayRef sizes, IntArrayRef strides,
                                                 IntArrayRef shape) {
  if (count(sizes) != count(shape)) throw Error("find_view_strides(): element counts differ");
  return packed(shape, strides.empty() ? 1 : strides.back());
}

std::optional<Shape> find_view_strides_size_one_breaks(IntArrayRef sizes, IntArrayRef strides,
                                                       IntArrayRef shape) {
  return chunks(sizes, strides, shape, /*keep_size_one=*/true);
}

}  // namespace glass::lesson02::wrong
