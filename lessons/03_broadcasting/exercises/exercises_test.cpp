// lessons/03_broadcasting/exercises/exercises_test.cpp — grades lesson 03's exercises
// against the library: your shape must equal glass::broadcast_shapes (and fail where it
// fails), your strides must equal expand()'s, your addition must equal a + b exactly, your
// dtype must equal glass::result_type's.
// Built against solution.cpp or student.cpp (GLASS_EXERCISES).
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../../common/answer_symbols.h"
#include "exercises.h"
#include "wrong_answers.h"

namespace glass::lesson03 {
namespace {

std::optional<Shape> library_shape(IntArrayRef a, IntArrayRef b) {
  try {
    return broadcast_shapes(a, b);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<Shape> your_shape(IntArrayRef a, IntArrayRef b) {
  try {
    return broadcast_shape(a, b);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::vector<float> values(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// A Float tensor of `sizes` whose values are distinct, so a misread element shows.
Tensor distinct(IntArrayRef sizes, float scale) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return arange(n, kFloat).mul(scale).add(0.5).reshape(sizes);
}

// ---- exercise 1 ------------------------------------------------------------------------

TEST(Exercise1BroadcastShape, ExamplesFromTheReadme) {
  EXPECT_EQ(broadcast_shape({2, 3}, {3}), Shape({2, 3}));
  EXPECT_EQ(broadcast_shape({3, 1}, {1, 4}), Shape({3, 4}));
  EXPECT_EQ(broadcast_shape({5, 1, 4}, {3, 1}), Shape({5, 3, 4}));
  EXPECT_EQ(broadcast_shape({}, {2, 3}), Shape({2, 3}));
  EXPECT_EQ(broadcast_shape({4, 1}, {4}), Shape({4, 4}));
  EXPECT_EQ(broadcast_shape({2, 3, 4}, {3, 1, 1, 4}), Shape({3, 2, 3, 4}));
  EXPECT_EQ(broadcast_shape({0, 3}, {1, 3}), Shape({0, 3}));  // 1 stretches to 0 as well
  EXPECT_THROW(broadcast_shape({2, 3}, {4}), Error);
  EXPECT_THROW(broadcast_shape({2, 3}, {3, 3}), Error);
  EXPECT_THROW(broadcast_shape({0}, {2}), Error);
}

TEST(Exercise1BroadcastShape, AgreesWithTheLibraryOnRandomPairs) {
  std::mt19937 rng(3);  // fixed seed: the same pairs on every run
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int failing = 0;
  for (int trial = 0; trial < 500; ++trial) {
    Shape a, b;
    for (int d = pick(0, 4); d > 0; --d) a.push_back(pick(1, 3));
    for (int d = pick(0, 4); d > 0; --d) b.push_back(pick(1, 3));
    std::optional<Shape> want = library_shape(a, b);
    failing += !want;
    ASSERT_EQ(your_shape(a, b), want) << IntArrayRef(a) << " and " << IntArrayRef(b);
    ASSERT_EQ(your_shape(b, a), want)
        << "broadcasting is symmetric: " << IntArrayRef(b) << " and " << IntArrayRef(a);
  }
  EXPECT_GT(failing, 0) << "the random pairs should include incompatible ones";
}

// ---- exercise 2 ------------------------------------------------------------------------

TEST(Exercise2BroadcastStrides, EqualsExpandsStrides) {
  Tensor x = arange(12, kFloat).view({3, 4});
  const std::vector<std::pair<Tensor, Shape>> cases = {
      {x, {3, 4}},
      {x, {2, 3, 4}},
      {x.select(1, 0).view({3, 1}), {2, 3, 4}},
      {x.select(0, 1), {3, 4}},
      {x.t(), {2, 4, 3}},
      {x.t().slice(1, 0, 3, 2), {4, 2}},
      {x.select(0, 0).select(0, 0), {2, 3}},  // 0-dim: every stride 0
      {x.view({3, 1, 4}), {3, 5, 4}},
      {x.view({3, 1, 4}), {3, 1, 4}},  // a size-1 dim kept at size 1 keeps its stride
      {x.slice(0, 0, 1), {0, 4}},      // size 1 stretched to 0
  };
  for (const auto& [t, shape] : cases) {
    EXPECT_EQ(broadcast_strides(t, shape), t.expand(shape).strides().vec())
        << "sizes " << t.sizes() << " strides " << t.strides() << " to " << IntArrayRef(shape);
  }
}

TEST(Exercise2BroadcastStrides, RejectsShapesItCannotReach) {
  Tensor x = arange(12, kFloat).view({3, 4});
  ASSERT_NO_THROW(broadcast_strides(x, {2, 3, 4}));      // so that always throwing does not pass
  EXPECT_THROW(broadcast_strides(x, {4}), Error);        // fewer dims than x
  EXPECT_THROW(broadcast_strides(x, {3, 5}), Error);     // 4 is not 5 and not 1
  EXPECT_THROW(broadcast_strides(x, {2, 4, 4}), Error);  // 3 is not 4 and not 1
}

// ---- exercise 3 ------------------------------------------------------------------------

TEST(Exercise3BroadcastAdd, EqualsThePlusOperator) {
  Tensor x = distinct({2, 3}, 1);
  Tensor row = distinct({3}, 10);
  Tensor col = distinct({3, 1}, 100);
  Tensor cube = distinct({2, 3, 4}, 1);
  const std::vector<std::pair<Tensor, Tensor>> cases = {
      {x, row},
      {col, distinct({1, 4}, 7)},
      {cube, col},
      {cube, distinct({4}, 3)},
      {distinct({}, 1), x},                                      // 0-dim + [2, 3]
      {x.t(), distinct({2}, 5)},                                 // a transposed operand
      {cube.slice(2, 0, 4, 2), x.select(1, 1).view({2, 1, 1})},  // strided operands
      {row.expand({2, 3}), x},  // an operand that is already expanded
      {x, x},
      {distinct({0, 3}, 1), row},  // an empty result
  };
  for (const auto& [a, b] : cases) {
    Tensor got = broadcast_add(a, b);
    Tensor want = a + b;
    ASSERT_EQ(got.sizes(), want.sizes()) << a.sizes() << " + " << b.sizes();
    EXPECT_EQ(got.dtype(), kFloat);
    EXPECT_EQ(values(got), values(want)) << a.sizes() << " + " << b.sizes() << "\n"
                                         << got << "\nexpected\n"
                                         << want;
  }
}

TEST(Exercise3BroadcastAdd, AgreesWithThePlusOperatorOnRandomShapes) {
  std::mt19937 rng(4);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 100; ++trial) {
    Shape out;
    for (int d = pick(0, 4); d > 0; --d) out.push_back(pick(1, 4));
    // Each operand keeps a suffix of the dims and turns some of them into 1.
    auto operand = [&](float scale) {
      Shape s(out.begin() + pick(0, static_cast<int>(out.size())), out.end());
      for (int64_t& d : s)
        if (pick(0, 2) == 0) d = 1;
      return distinct(s, scale);
    };
    Tensor a = operand(1), b = operand(1000);
    ASSERT_EQ(values(broadcast_add(a, b)), values(a + b)) << a.sizes() << " + " << b.sizes();
  }
}

TEST(Exercise3BroadcastAdd, RejectsWhatItCannotAdd) {
  ASSERT_NO_THROW(broadcast_add(distinct({2, 3}, 1), distinct({3}, 1)));  // see above
  EXPECT_THROW(broadcast_add(distinct({2, 3}, 1), distinct({4}, 1)), Error);
  EXPECT_THROW(broadcast_add(arange(3), distinct({3}, 1)), Error);  // Long is not Float
}

// ---- exercise 4 ------------------------------------------------------------------------

// The tensor `o` describes, for the library: a Number is a 0-dim tensor marked as a
// wrapped number, which is what the library makes of the 2.5 in t * 2.5.
Tensor tensor_for(const Operand& o) {
  Tensor t = o.tier == Tier::Dims ? empty({2}, o.dtype) : empty({}, o.dtype);
  if (o.tier == Tier::Number) t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

std::string describe(const std::vector<Operand>& operands) {
  std::ostringstream os;
  for (size_t i = 0; i < operands.size(); ++i) {
    const char* tier = operands[i].tier == Tier::Dims      ? " [2]"
                       : operands[i].tier == Tier::ZeroDim ? " 0-dim"
                                                           : " number";
    os << (i ? ", " : "") << operands[i].dtype << tier;
  }
  return os.str();
}

using ResultTypeFn = ScalarType (*)(const std::vector<Operand>&);

// "" or the first list of operands, among every list of one, two and three of the 14
// kinds (5 dtypes in each tensor tier; a number is Bool, Long, Float or Double, never
// Int32, as in C++ and Python), on which `fn` disagrees with glass::result_type.
std::string grade_result_type(ResultTypeFn fn) {
  std::vector<Operand> kinds;
  for (Tier tier : {Tier::Dims, Tier::ZeroDim, Tier::Number})
    for (ScalarType dtype : {kBool, kInt, kLong, kFloat, kDouble})
      if (!(tier == Tier::Number && dtype == kInt)) kinds.push_back({dtype, tier});
  std::vector<std::vector<Operand>> lists;
  for (const Operand& a : kinds) {
    lists.push_back({a});
    for (const Operand& b : kinds) {
      lists.push_back({a, b});
      for (const Operand& c : kinds) lists.push_back({a, b, c});
    }
  }
  for (const std::vector<Operand>& operands : lists) {
    std::vector<Tensor> tensors;
    for (const Operand& o : operands) tensors.push_back(tensor_for(o));
    const ScalarType want = glass::result_type(tensors), got = fn(operands);
    if (got != want) {
      std::ostringstream os;
      os << "result_type(" << describe(operands) << ") is " << got << ", expected " << want;
      return os.str();
    }
  }
  return "";
}

// Sets the default dtype for one test, and puts the old one back.
class DefaultDtype {
 public:
  explicit DefaultDtype(ScalarType t) : old_(get_default_dtype()) { set_default_dtype(t); }
  ~DefaultDtype() { set_default_dtype(old_); }
  DefaultDtype(const DefaultDtype&) = delete;
  DefaultDtype& operator=(const DefaultDtype&) = delete;

 private:
  ScalarType old_;
};

TEST(Exercise4ResultType, ExamplesFromTheReadme) {
  EXPECT_EQ(result_type({{kLong, Tier::Dims}, {kLong, Tier::Number}}), kLong);     // * 2
  EXPECT_EQ(result_type({{kLong, Tier::Dims}, {kDouble, Tier::Number}}), kFloat);  // * 2.5
  EXPECT_EQ(result_type({{kFloat, Tier::Dims}, {kDouble, Tier::ZeroDim}}), kFloat);
  EXPECT_EQ(result_type({{kLong, Tier::Dims}, {kDouble, Tier::ZeroDim}}), kDouble);
  EXPECT_EQ(result_type({{kFloat, Tier::Dims}, {kDouble, Tier::Dims}}), kDouble);
  EXPECT_EQ(result_type({{kInt, Tier::Dims}, {kLong, Tier::ZeroDim}}), kInt);
  EXPECT_EQ(result_type({{kBool, Tier::Dims}, {kLong, Tier::Number}}), kLong);  // mask + 1
  EXPECT_EQ(result_type({{kDouble, Tier::ZeroDim}, {kDouble, Tier::Number}}), kDouble);
}

TEST(Exercise4ResultType, MatchesTheLibraryOnEveryListOfOneTwoAndThreeOperands) {
  EXPECT_EQ(grade_result_type(result_type), "");
}

TEST(Exercise4ResultType, AFloatingNumberCountsAsTheDefaultDtype) {
  DefaultDtype double_by_default(kDouble);
  EXPECT_EQ(result_type({{kLong, Tier::Dims}, {kFloat, Tier::Number}}), kDouble);
  EXPECT_EQ(grade_result_type(result_type), "") << "with get_default_dtype() = Double";
}

TEST(Exercise4ResultType, RejectsAnEmptyList) {
  ASSERT_NO_THROW(result_type({{kBool, Tier::Dims}}));  // so that always throwing does not pass
  EXPECT_THROW(result_type({}), Error);
}

TEST(Exercise4ResultType, TheGraderRejectsEachWrongRule) {
  EXPECT_NE(grade_result_type(wrong::result_type_ignoring_tiers), "");
  EXPECT_NE(grade_result_type(wrong::result_type_number_keeps_its_dtype), "");
  EXPECT_NE(grade_result_type(wrong::result_type_by_dtype_not_category), "");
  // The library's own answer, passed through: right values, caught by the symbol check.
  EXPECT_EQ(grade_result_type(wrong::result_type_by_library), "");
}

// ---- the bans: what the compiled answers call ---------------------------------------------

// What each exercise must not call. Exercise 3 may call exercises 1 and 2, so their bans
// reach it too. Exercise 4 may use promote_types, the rule inside one tier (constexpr,
// compiled inline: no symbol check could see it anyway); the tiers are the exercise.
// TensorIterator (section 4) broadcasts and promotes: it answers every exercise here.
const std::vector<std::string> kBans1 = {"glass::broadcast_shapes(", "glass::broadcast_tensors(",
                                         "glass::Tensor::expand(",   "glass::Tensor::expand_as(",
                                         "glass::ops::expand",       "glass::TensorIteratorConfig",
                                         "glass::TensorIterator::",  "glass::kernels_for("};
const std::vector<std::string> kBans2 = kBans1;
const std::vector<std::string> kBans4 = {"glass::result_type(", "glass::TensorIteratorConfig",
                                         "glass::TensorIterator::"};
std::vector<std::string> bans3() {
  std::vector<std::string> bans = kBans1;
  for (const char* op : {"glass::operator+(", "glass::operator-(", "glass::Tensor::add(",
                         "glass::Tensor::add_(", "glass::Tensor::sub(", "glass::Tensor::sub_(",
                         "glass::add(", "glass::sub(", "glass::add_out(", "glass::ops::binary"})
    bans.push_back(op);
  return bans;
}

// "" or "exercise N must not call X. " for each banned call the exercise's function in
// `object` makes, itself or through its helpers and lambdas.
std::string banned_calls(const std::string& object, const std::string& ns) {
  using lessons::exercise_calls_banned;
  return exercise_calls_banned(object, 1, ns + "broadcast_shape(", kBans1) +
         exercise_calls_banned(object, 2, ns + "broadcast_strides(", kBans2) +
         exercise_calls_banned(object, 3, ns + "broadcast_add(", bans3()) +
         exercise_calls_banned(object, 4, ns + "result_type(", kBans4);
}

TEST(Lesson03Bans, TheAnswersCallNoBannedFunction) {
  EXPECT_EQ(banned_calls(GLASS_LESSON03_ANSWERS_OBJECT, "glass::lesson03::"), "")
      << GLASS_LESSON03_ANSWERS_OBJECT;
}

TEST(Lesson03Bans, TheSymbolCheckCatchesEachBannedCall) {
  using lessons::exercise_calls_banned;
  const std::string object = GLASS_LESSON03_WRONG_OBJECT;
  const std::string wrong = "glass::lesson03::wrong::";
  const std::string shape =
      exercise_calls_banned(object, 1, wrong + "broadcast_shape_by_library(", kBans1);
  EXPECT_TRUE(shape.starts_with("exercise 1 must not call glass::broadcast_shapes(")) << shape;
  const std::string strides =
      exercise_calls_banned(object, 2, wrong + "broadcast_strides_by_expand(", kBans2);
  EXPECT_TRUE(strides.starts_with("exercise 2 must not call glass::Tensor::expand(")) << strides;
  const std::string add =
      exercise_calls_banned(object, 3, wrong + "broadcast_add_by_plus(", bans3());
  EXPECT_TRUE(add.starts_with("exercise 3 must not call glass::operator+(")) << add;
  const std::string promotion =
      exercise_calls_banned(object, 4, wrong + "result_type_by_library(", kBans4);
  EXPECT_TRUE(promotion.starts_with("exercise 4 must not call glass::result_type(")) << promotion;
  // The wrong answers give the right values: only the symbol check tells them apart.
  EXPECT_EQ(wrong::broadcast_shape_by_library({2, 1, 4}, {3, 1}), Shape({2, 3, 4}));
  Tensor x = distinct({2, 3}, 1), row = distinct({3}, 10);
  EXPECT_EQ(wrong::broadcast_strides_by_expand(row, {2, 3}), Shape({0, 1}));
  EXPECT_EQ(values(wrong::broadcast_add_by_plus(x, row)), values(x + row));
}

}  // namespace
}  // namespace glass::lesson03
