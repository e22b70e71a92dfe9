// lessons/02_storage_and_strides/exercises/exercises_test.cpp — grades lesson 02's
// exercises against the library itself: your address must equal glass::storage_index,
// your slice must equal Tensor::slice and allocate nothing, your copy must hold the same
// bytes as contiguous(). Built against solution.cpp or student.cpp (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <cstring>
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

// ---- the bans: what the compiled answers call ---------------------------------------------

// "" or "exercise N must not call X. " for each banned call the exercise's function in
// `object` (answers or wrong answers) makes, itself or through its helpers and lambdas.
// Exercise 3 may call exercise 1's storage_address, so exercise 1's ban reaches it too.
std::string banned_calls(const std::string& object, const std::string& ns) {
  using lessons::exercise_calls_banned;
  return exercise_calls_banned(object, 1, ns + "storage_address(", {"glass::storage_index("}) +
         exercise_calls_banned(
             object, 2, ns + "strided_slice(",
             {"glass::Tensor::slice(", "glass::Tensor::narrow(", "glass::ops::slice"}) +
         exercise_calls_banned(
             object, 3, ns + "make_contiguous",
             {"glass::storage_index(", "glass::Tensor::contiguous(", "glass::Tensor::clone(",
              "glass::Tensor::copy_(", "glass::Tensor::to(", "glass::Tensor::reshape(",
              "glass::clone(", "glass::reshape(", "glass::ops::clone", "glass::ops::copy_",
              "glass::ops::to_copy"});
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
}

}  // namespace
}  // namespace glass::lesson02
