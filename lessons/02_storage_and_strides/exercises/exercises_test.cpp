// lessons/02_storage_and_strides/exercises/exercises_test.cpp — grades lesson 02's
// exercises against the library itself: your address must equal glass::storage_index,
// your slice must equal Tensor::slice and allocate nothing, your copy must hold the same
// bytes as contiguous(), your stride search must succeed and fail where view() does, with
// view()'s strides. Built against solution.cpp or student.cpp (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../../common/answer_symbols.h"
#include "exercises.h"
#include "wrong_answers.h"

namespace glass::lesson02 {
namespace {

// Every index of `sizes`, in row-major order.
std::vector<std::vector<int64_t>> all_indices(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<std::vector<int64_t>> out;
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    out.push_back(index);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// The layouts the lesson walks through, each a view of an arange storage (so a wrong
// address reads a visibly wrong value).
std::vector<std::pair<std::string, Tensor>> lesson_views() {
  Tensor x = arange(12).view({3, 4});
  Tensor y = arange(24).view({2, 3, 4});
  return {
      {"x", x},
      {"x.t()", x.t()},
      {"y.permute({2, 0, 1})", y.permute({2, 0, 1})},
      {"x.unsqueeze(0).expand({2, 3, 4})", x.unsqueeze(0).expand({2, 3, 4})},
      {"x.slice(0, 0, 3, 2)", x.slice(0, 0, 3, 2)},
      {"x.slice(1, 1, 4, 2)", x.slice(1, 1, 4, 2)},
      {"x.select(1, 2)", x.select(1, 2)},
      {"x.unsqueeze(1)", x.unsqueeze(1)},
      {"x.narrow(1, 1, 2)", x.narrow(1, 1, 2)},
      {"x.diagonal(1)", x.diagonal(1)},
      {"y.select(2, 3).t()", y.select(2, 3).t()},
      {"x.as_strided({2, 2}, {1, 6}, 3)", x.as_strided({2, 2}, {1, 6}, 3)},
      {"0-dim x[1][2]", x.select(0, 1).select(0, 2)},
      {"empty x.slice(0, 1, 1)", x.slice(0, 1, 1)},
  };
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() &&
         std::memcmp(a.data_ptr(), b.data_ptr(), static_cast<size_t>(a.nbytes())) == 0;
}

// ---- exercise 1 ------------------------------------------------------------------------

TEST(Exercise1StorageAddress, WorkedExamplesFromTheReadme) {
  EXPECT_EQ(storage_address({3, 4}, {4, 1}, 0, {1, 2}), 6);   // x[1][2]
  EXPECT_EQ(storage_address({4, 3}, {1, 4}, 0, {1, 2}), 9);   // x.t()[1][2]
  EXPECT_EQ(storage_address({2, 4}, {8, 1}, 0, {1, 2}), 10);  // x.slice(0, 0, 3, 2)[1][2]
  EXPECT_EQ(storage_address({3, 2}, {4, 2}, 1, {2, 1}), 11);  // x.slice(1, 1, 4, 2)[2][1]
  EXPECT_EQ(storage_address({}, {}, 7, {}), 7);               // a 0-dim tensor: just the offset
}

TEST(Exercise1StorageAddress, MatchesTheLibraryOnEveryElementOfEveryView) {
  for (const auto& [name, v] : lesson_views()) {
    for (const auto& index : all_indices(v.sizes())) {
      EXPECT_EQ(storage_address(v.sizes(), v.strides(), v.storage_offset(), index),
                glass::storage_index(v, index))
          << name << " at index " << IntArrayRef(index);
    }
  }
}

TEST(Exercise1StorageAddress, MatchesTheLibraryOnRandomLayouts) {
  std::mt19937 rng(2);  // fixed seed: the same layouts on every run
  for (int trial = 0; trial < 200; ++trial) {
    int ndim = std::uniform_int_distribution<int>(0, 4)(rng);
    std::vector<int64_t> sizes, strides;
    for (int d = 0; d < ndim; ++d) {
      sizes.push_back(std::uniform_int_distribution<int64_t>(1, 4)(rng));
      strides.push_back(std::uniform_int_distribution<int64_t>(0, 30)(rng));
    }
    int64_t offset = std::uniform_int_distribution<int64_t>(0, 10)(rng);
    for (const auto& index : all_indices(sizes))
      ASSERT_EQ(storage_address(sizes, strides, offset, index),
                glass::storage_index(sizes, strides, offset, index))
          << "sizes " << IntArrayRef(sizes) << " strides " << IntArrayRef(strides) << " offset "
          << offset << " index " << IntArrayRef(index);
  }
}

using StorageAddressFn = int64_t (*)(IntArrayRef, IntArrayRef, int64_t, IntArrayRef);

// "" or the first index into a [3, 4] tensor of strides [4, 1] that `fn` does not reject.
std::string grade_rejects_bad_indices(StorageAddressFn fn) {
  const std::vector<std::pair<std::vector<int64_t>, std::string>> bad = {
      {{1}, "too few entries"},
      {{1, 2, 0}, "too many entries"},
      {{3, 0}, "row 3 of 3"},
      {{0, 4}, "column 4 of 4"},
      {{-1, 0}, "row -1: negative indices are outside [0, size), not counted from the end"},
      {{0, -1}, "column -1: negative indices are outside [0, size), not counted from the end"},
      {{-3, -4}, "row -3, column -4"}};
  for (const auto& [index, what] : bad) {
    try {
      fn({3, 4}, {4, 1}, 0, index);
      std::ostringstream os;
      os << "index " << IntArrayRef(index) << " (" << what << ") did not throw";
      return os.str();
    } catch (const Error&) {
    }
  }
  return "";
}

TEST(Exercise1StorageAddress, RejectsIndicesThatDoNotFit) {
  // A valid call must work first, or a function that always throws would pass this test.
  ASSERT_NO_THROW(storage_address({3, 4}, {4, 1}, 0, {2, 3}));
  EXPECT_EQ(grade_rejects_bad_indices(storage_address), "");
}

TEST(Exercise1StorageAddress, TheGraderRejectsTheLibrarysWrapAround) {
  // glass::storage_index counts a negative index from the end, as Python does: right on
  // every valid index, wrong on the contract's negative ones.
  const std::string why = grade_rejects_bad_indices(wrong::storage_address_by_library);
  EXPECT_NE(why.find("negative indices"), std::string::npos) << why;
}

// ---- exercise 2 ------------------------------------------------------------------------

TEST(Exercise2StridedSlice, EqualsTensorSliceForEveryDimStartEndAndStep) {
  for (const auto& [name, v] : lesson_views()) {
    for (int64_t dim = 0; dim < v.dim(); ++dim) {
      int64_t n = v.size(dim);
      for (int64_t start = 0; start <= n; ++start) {
        for (int64_t end = start; end <= n; ++end) {
          for (int64_t step = 1; step <= 3; ++step) {
            Tensor want = v.slice(dim, start, end, step);
            Tensor got = strided_slice(v, dim, start, end, step);
            std::string what = name + ".slice(" + std::to_string(dim) + ", " +
                               std::to_string(start) + ", " + std::to_string(end) + ", " +
                               std::to_string(step) + ")";
            ASSERT_EQ(got.sizes(), want.sizes()) << what;
            ASSERT_EQ(got.strides(), want.strides()) << what;
            ASSERT_EQ(got.storage_offset(), want.storage_offset()) << what;
            ASSERT_TRUE(got.is_alias_of(v)) << what << " must share the storage of " << name;
          }
        }
      }
    }
  }
}

TEST(Exercise2StridedSlice, AllocatesNothing) {
  Tensor x = arange(12).view({3, 4});
  int64_t before = cpu_memory_stats().num_allocs;
  Tensor s = strided_slice(x, 1, 1, 4, 2);
  EXPECT_EQ(cpu_memory_stats().num_allocs, before) << "a slice must not allocate a storage";
  // Writing through the slice is seen in x: proof that no copy was made.
  s.fill_(-1);
  EXPECT_EQ(x.select(0, 2).select(0, 3).item<int64_t>(), -1);
}

TEST(Exercise2StridedSlice, RejectsBadArguments) {
  Tensor x = arange(12).view({3, 4});
  ASSERT_NO_THROW(strided_slice(x, 1, 0, 4, 1));       // so that always throwing does not pass
  EXPECT_THROW(strided_slice(x, 2, 0, 1, 1), Error);   // no dim 2
  EXPECT_THROW(strided_slice(x, -1, 0, 1, 1), Error);  // negative dims are not part of the contract
  EXPECT_THROW(strided_slice(x, 1, 0, 5, 1), Error);   // end past the size
  EXPECT_THROW(strided_slice(x, 1, 3, 2, 1), Error);   // start after end
  EXPECT_THROW(strided_slice(x, 1, -1, 2, 1), Error);  // negative start
  EXPECT_THROW(strided_slice(x, 1, 0, 4, 0), Error);   // step 0
}

// ---- exercise 3 ------------------------------------------------------------------------

TEST(Exercise3MakeContiguous, EqualsContiguousForEveryView) {
  for (const auto& [name, v] : lesson_views()) {
    Tensor got = make_contiguous(v);
    ASSERT_EQ(got.sizes(), v.sizes()) << name;
    EXPECT_EQ(got.dtype(), v.dtype()) << name;
    EXPECT_TRUE(got.is_contiguous()) << name;
    EXPECT_FALSE(got.is_alias_of(v)) << name << ": the result needs a storage of its own";
    EXPECT_TRUE(same_bytes(got, v.contiguous())) << name << ": values differ from contiguous()\n"
                                                 << got << "\nexpected\n"
                                                 << v.contiguous();
  }
}

TEST(Exercise3MakeContiguous, WorksForEveryDtype) {
  Tensor base = arange(12).view({3, 4});
  for (ScalarType dtype : {kFloat, kDouble, kInt, kLong}) {
    Tensor v = base.to(dtype).t().slice(0, 0, 4, 2);
    EXPECT_TRUE(same_bytes(make_contiguous(v), v.contiguous())) << to_string(dtype);
  }
  Tensor mask = (base > 4).t();  // Bool: one byte per element
  EXPECT_TRUE(same_bytes(make_contiguous(mask), mask.contiguous()));
}

TEST(Exercise3MakeContiguous, CopiesEvenAContiguousTensor) {
  Tensor x = arange(6).view({2, 3});
  Tensor c = make_contiguous(x);
  EXPECT_FALSE(c.is_alias_of(x));
  c.fill_(0);
  EXPECT_EQ(x.select(0, 1).select(0, 2).item<int64_t>(), 5) << "writing the copy changed x";
}

// ---- exercise 4 ------------------------------------------------------------------------

// What the library says: t.view(shape)'s strides, or nullopt when view() refuses.
std::optional<Shape> library_view(const Tensor& t, IntArrayRef shape) {
  try {
    return t.view(shape).strides().vec();
  } catch (const Error&) {
    return std::nullopt;
  }
}

struct ViewCase {
  std::string name;  // how the layout was made
  Tensor t;
  Shape shape;
};

std::string describe(const std::optional<Shape>& strides) {
  std::ostringstream os;
  if (strides) {
    os << "strides " << IntArrayRef(*strides);
  } else {
    os << "no view";
  }
  return os.str();
}

using FindViewStridesFn = std::optional<Shape> (*)(IntArrayRef, IntArrayRef, IntArrayRef);

// "" or the first case where `fn` and view() disagree: on whether there is a view, or on
// the stride of a dim of size > 1 (no stride matters when t has no elements).
std::string grade_view_strides(FindViewStridesFn fn, const std::vector<ViewCase>& cases) {
  for (const ViewCase& c : cases) {
    const std::optional<Shape> want = library_view(c.t, c.shape);
    const std::optional<Shape> got = fn(c.t.sizes(), c.t.strides(), c.shape);
    bool same = want.has_value() == got.has_value();
    if (same && got && c.t.numel() > 0) {
      same = got->size() == c.shape.size();
      for (size_t d = 0; same && d < c.shape.size(); ++d)
        same = c.shape[d] == 1 || (*got)[d] == (*want)[d];
    }
    if (!same) {
      std::ostringstream os;
      os << c.name << ": sizes " << c.t.sizes() << " strides " << c.t.strides() << " viewed as "
         << IntArrayRef(c.shape) << ": you say " << describe(got) << ", view() says "
         << describe(want);
      return os.str();
    }
  }
  return "";
}

// Random layouts, each made the way a program makes one (transposes, sliced steps,
// expanded and unsqueezed dims, a size-1 dim with an odd stride), each asked for shapes
// that merge its dims, split them, or factor its element count at random.
std::vector<ViewCase> random_view_cases() {
  std::mt19937 rng(4);  // fixed seed: the same cases on every run
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::vector<ViewCase> cases;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<int64_t> sizes;
    for (int64_t d = pick(1, 4); d > 0; --d) sizes.push_back(pick(1, 4));
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    Tensor t = arange(n).view(sizes);
    std::string name = "arange(" + std::to_string(n) + ").view(...)";
    for (int64_t op = pick(1, 4); op > 0; --op) {
      const int64_t d = pick(0, t.dim() - 1), e = pick(0, t.dim() - 1);
      switch (pick(0, 4)) {
        case 0:
          t = t.transpose(d, e);
          name += ".transpose(" + std::to_string(d) + ", " + std::to_string(e) + ")";
          break;
        case 1: {
          const int64_t start = pick(0, t.size(d) / 2), step = pick(1, 3);
          t = t.slice(d, start, t.size(d), step);
          name += ".slice(" + std::to_string(d) + ", " + std::to_string(start) + ", end, " +
                  std::to_string(step) + ")";
          break;
        }
        case 2:
          if (t.dim() < 5) {
            t = t.unsqueeze(d);
            name += ".unsqueeze(" + std::to_string(d) + ")";
          }
          break;
        case 3:
          if (t.size(d) == 1) {
            std::vector<int64_t> to = t.sizes().vec();
            to[d] = pick(2, 3);
            t = t.expand(to);
            name += ".expand(...)";
          }
          break;
        case 4:
          if (t.size(d) == 1) {
            std::vector<int64_t> strides = t.strides().vec();
            strides[d] = pick(0, 50);  // never read: any stride gives the same addresses
            t = t.as_strided(t.sizes(), strides, t.storage_offset());
            name += ".as_strided(stride " + std::to_string(strides[d]) + " on size-1 dim)";
          }
          break;
      }
    }
    const std::vector<int64_t> now = t.sizes().vec();
    // Merge two neighbouring dims, split one in two, and two shapes factored at random.
    std::vector<Shape> shapes;
    if (now.size() >= 2) {
      const size_t d = static_cast<size_t>(pick(0, static_cast<int64_t>(now.size()) - 2));
      Shape merged(now.begin(), now.begin() + d);
      merged.push_back(now[d] * now[d + 1]);
      merged.insert(merged.end(), now.begin() + d + 2, now.end());
      shapes.push_back(merged);
    }
    for (size_t d = 0; d < now.size(); ++d)
      for (int64_t f = 2; f < now[d]; ++f)
        if (now[d] % f == 0) {
          Shape split(now.begin(), now.begin() + d);
          split.push_back(f);
          split.push_back(now[d] / f);
          split.insert(split.end(), now.begin() + d + 1, now.end());
          shapes.push_back(split);
          break;
        }
    for (int k = 0; k < 2; ++k) {
      Shape factored(static_cast<size_t>(pick(1, 4)), 1);
      int64_t rest = t.numel();
      if (rest == 0) factored[0] = 0;
      for (int64_t f = 2; rest > 1;) {
        if (rest % f != 0) {
          ++f;
          continue;
        }
        factored[static_cast<size_t>(pick(0, static_cast<int64_t>(factored.size()) - 1))] *= f;
        rest /= f;
      }
      shapes.push_back(factored);
    }
    shapes.push_back(now);
    for (const Shape& shape : shapes) cases.push_back({name, t, shape});
  }
  return cases;
}

TEST(Exercise4FindViewStrides, WorkedExamplesFromTheReadme) {
  EXPECT_EQ(find_view_strides({3, 4}, {4, 1}, {12}), Shape({1}));             // x.view({12})
  EXPECT_EQ(find_view_strides({3, 4}, {4, 1}, {2, 6}), Shape({6, 1}));        // x.reshape({2, 6})
  EXPECT_EQ(find_view_strides({4, 3}, {1, 4}, {12}), std::nullopt);           // x.t() flattened
  EXPECT_EQ(find_view_strides({2, 4}, {8, 1}, {2, 2, 2}), Shape({8, 2, 1}));  // rows, split
  EXPECT_EQ(find_view_strides({2, 4}, {8, 1}, {8}), std::nullopt);  // rows, merged over the gap
  EXPECT_EQ(find_view_strides({3, 4}, {0, 1}, {3, 2, 2}), Shape({0, 2, 1}));  // expanded rows
  EXPECT_EQ(find_view_strides({3, 4}, {0, 1}, {12}), std::nullopt);
  const std::optional<Shape> t_col = find_view_strides({4, 3}, {1, 4}, {4, 3, 1});
  ASSERT_TRUE(t_col.has_value()) << "x.t().view({4, 3, 1}) only adds a dim of size 1";
  EXPECT_EQ((*t_col)[0], 1);
  EXPECT_EQ((*t_col)[1], 4);
}

TEST(Exercise4FindViewStrides, AgreesWithViewOnRandomLayouts) {
  const std::vector<ViewCase> cases = random_view_cases();
  int views = 0;
  for (const ViewCase& c : cases) views += library_view(c.t, c.shape).has_value();
  // Both answers are common, or the grader would prove little.
  ASSERT_GT(views, 300) << views << " of " << cases.size();
  ASSERT_GT(static_cast<int>(cases.size()) - views, 100) << views << " of " << cases.size();
  EXPECT_EQ(grade_view_strides(find_view_strides, cases), "");
}

TEST(Exercise4FindViewStrides, ZeroDimAndEmptyTensors) {
  const std::vector<ViewCase> cases = {
      {"0-dim", arange(5).select(0, 3), {1, 1}},
      {"0-dim", arange(5).select(0, 3), {}},
      {"a [1] of stride 5", arange(5).as_strided({1}, {5}, 2), {1, 1, 1}},
      {"empty", arange(12).view({3, 4}).slice(0, 1, 1), {0}},
      {"empty, transposed", arange(12).view({3, 4}).slice(0, 1, 1).t(), {2, 0, 2}},
      {"empty, same shape", arange(12).view({3, 4}).slice(1, 2, 2), {3, 0}},
  };
  EXPECT_EQ(grade_view_strides(find_view_strides, cases), "");
}

TEST(Exercise4FindViewStrides, RejectsShapesThatDoNotFit) {
  ASSERT_NO_THROW(find_view_strides({3, 4}, {4, 1}, {4, 3}));      // so that always throwing fails
  EXPECT_THROW(find_view_strides({3, 4}, {4, 1}, {5, 3}), Error);  // 15 elements, not 12
  EXPECT_THROW(find_view_strides({3, 4}, {4, 1}, {-1, 12}), Error);  // no -1 in this contract
  EXPECT_THROW(find_view_strides({3, 4}, {4, 1}, {-2, -6}), Error);  // negative sizes
  EXPECT_THROW(find_view_strides({3, 4}, {4, 1, 1}, {12}), Error);   // three strides, two sizes
}

TEST(Exercise4FindViewStrides, TheGraderRejectsEachWrongRule) {
  const std::vector<ViewCase> cases = random_view_cases();
  EXPECT_NE(grade_view_strides(wrong::find_view_strides_only_contiguous, cases), "");
  EXPECT_NE(grade_view_strides(wrong::find_view_strides_one_chunk, cases), "");
  EXPECT_NE(grade_view_strides(wrong::find_view_strides_size_one_breaks, cases), "");
  // The library's own answers, passed through: right values, caught by the symbol check.
  EXPECT_EQ(grade_view_strides(wrong::find_view_strides_by_library, cases), "");
  EXPECT_EQ(grade_view_strides(wrong::find_view_strides_by_view, cases), "");
}

// ---- the bans: what the compiled answers call ---------------------------------------------

// Exercise 4 must find the strides itself: not by asking view(), reshape() or the
// library's stride search.
const std::vector<std::string> kBans4 = {
    "glass::view_strides(",    "glass::Tensor::view(",       "glass::Tensor::view_as(",
    "glass::Tensor::reshape(", "glass::Tensor::reshape_as(", "glass::reshape(",
    "glass::flatten(",         "glass::Tensor::flatten(",    "glass::ops::view"};

// "" or "exercise N must not call X. " for each banned call the exercise's function in
// `object` (answers or wrong answers) makes, itself or through its helpers and lambdas.
// Exercise 3 may call exercise 1's storage_address, so exercise 1's ban reaches it too.
std::string banned_calls(const std::string& object, const std::string& ns) {
  using lessons::exercise_calls_banned;
  return exercise_calls_banned(object, 1, ns + "storage_address(", {"glass::storage_index("}) +
         exercise_calls_banned(object, 2, ns + "strided_slice(",
                               {"glass::Tensor::slice(", "glass::Tensor::narrow(",
                                "glass::ops::slice", "glass::narrow(", "glass::slice("}) +
         exercise_calls_banned(
             object, 3, ns + "make_contiguous",
             {"glass::storage_index(", "glass::Tensor::contiguous(", "glass::Tensor::clone(",
              "glass::Tensor::copy_(", "glass::Tensor::to(", "glass::Tensor::reshape(",
              "glass::clone(", "glass::reshape(", "glass::ops::clone", "glass::ops::copy_",
              "glass::ops::to_copy",
              // the copies below the dispatcher, and the other functions that make one
              "glass::detail::copy_into(", "glass::to_copy(", "glass::Tensor::pin_memory("}) +
         exercise_calls_banned(object, 4, ns + "find_view_strides(", kBans4);
}

TEST(Lesson02Bans, TheAnswersCallNoBannedFunction) {
  EXPECT_EQ(banned_calls(GLASS_LESSON02_ANSWERS_OBJECT, "glass::lesson02::"), "")
      << GLASS_LESSON02_ANSWERS_OBJECT;
}

TEST(Lesson02Bans, TheSymbolCheckCatchesEachBannedCall) {
  using lessons::exercise_calls_banned;
  const std::string object = GLASS_LESSON02_WRONG_OBJECT;
  const std::string wrong = "glass::lesson02::wrong::";
  const std::string by_library = exercise_calls_banned(
      object, 1, wrong + "storage_address_by_library(", {"glass::storage_index("});
  EXPECT_TRUE(by_library.starts_with("exercise 1 must not call glass::storage_index("))
      << by_library;
  const std::vector<std::string> copies = {"glass::Tensor::contiguous(", "glass::Tensor::clone(",
                                           "glass::Tensor::copy_("};
  for (const char* fn : {"make_contiguous_by_copy(", "make_contiguous_by_contiguous(",
                         "make_contiguous_by_clone("}) {
    const std::string found = exercise_calls_banned(object, 3, wrong + fn, copies);
    EXPECT_TRUE(found.starts_with("exercise 3 must not call glass::Tensor::")) << fn << found;
  }
  EXPECT_NE(exercise_calls_banned(object, 3, wrong + "make_contiguous_by_contiguous(", copies)
                .find("contiguous() const"),
            std::string::npos)
      << "a banned call in a helper counts";
  // The dispatcher's Op objects (core/ops/*.h) are variables, not functions: calling one
  // refers to it, and the check names it.
  const std::string by_op =
      exercise_calls_banned(object, 3, wrong + "make_contiguous_by_op(", {"glass::ops::clone"});
  EXPECT_EQ(by_op, "exercise 3 must not call glass::ops::clone. ");
  const std::string search =
      exercise_calls_banned(object, 4, wrong + "find_view_strides_by_library(", kBans4);
  EXPECT_TRUE(search.starts_with("exercise 4 must not call glass::view_strides(")) << search;
  const std::string by_view =
      exercise_calls_banned(object, 4, wrong + "find_view_strides_by_view(", kBans4);
  EXPECT_TRUE(by_view.starts_with("exercise 4 must not call glass::Tensor::view(")) << by_view;
}

}  // namespace
}  // namespace glass::lesson02
