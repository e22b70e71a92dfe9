// lessons/12_the_compiler/exercises/exercises_test.cpp — grades lesson 12's exercises.
// Invariant: an answer passes only if its own code did the work, the way the exercise asks:
//  - exercise 1 must find exactly the chains the test works out by hand, on graphs traced from
//    small functions (a plain chain, a result read twice, a result returned and read, a
//    binary op or a view in between);
//  - exercise 2's record() and accepts() must accept a later call exactly when the contract
//    says, over pairs of calls that differ in one thing each (values, sizes with the same
//    element count, dtype, requires_grad, the number of tensors, grad mode, strides);
//  - exercise 3 is compiled with fullgraph (a graph break is an error) and one compiled
//    function is called with sums of both signs and several shapes: each result must equal
//    branchy()'s, from one trace per shape;
//  - the compiled answers may not call what the exercises ban: `nm -u` on their object file
//    (compiler/passes.h, CompiledFunction), and the relocations of exercise 3's function
//    section (objdump -r) must reach no item() or printing. (A read through data_ptr<T>(),
//    inline, leaves no call to see: the grader's calls with both signs catch it.)
// Each grader is a function returning "" or what was wrong, and each is shown rejecting the
// deliberately wrong answers of wrong_answers.h.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "../../common/answer_symbols.h"
#include "compiler/kernel_cache.h"
#include "compiler/tracer.h"
#include "exercises.h"
#include "wrong_answers.h"

namespace glass::lesson12 {
namespace {

using lessons::banned_among;
using lessons::exercise_calls_banned;
using lessons::undefined_symbols;

std::string show(const std::vector<std::vector<int>>& chains) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < chains.size(); ++i) {
    os << (i ? ", " : "") << "[";
    for (size_t j = 0; j < chains[i].size(); ++j) os << (j ? ", " : "") << chains[i][j];
    os << "]";
  }
  return os.str() + "]";
}

// [SECTION] exercise 1: unary chains ----------------------------------------------------------

using ChainsFn = std::function<std::vector<std::vector<int>>(const compiler::Graph&)>;

struct ChainCase {
  const char* what;
  std::function<std::vector<Tensor>(const Tensor&)> fn;
  std::vector<std::vector<int>> want;  // node indices, worked out from the trace by hand
};

std::vector<ChainCase> chain_cases() {
  return {
      {"x.exp().relu().sigmoid()",
       [](const Tensor& x) { return std::vector<Tensor>{x.exp().relu().sigmoid()}; },
       {{0, 1, 2}}},
      {"y = x.exp(); return y.sin() + y  (y is read twice)",
       [](const Tensor& x) {
         Tensor y = x.exp();
         return std::vector<Tensor>{y.sin() + y};
       },
       {}},
      {"a = x.exp().cos(); return (a, a.relu().tanh())  (a is returned)",
       [](const Tensor& x) {
         Tensor a = x.exp().cos();
         return std::vector<Tensor>{a, a.relu().tanh()};
       },
       {{0, 1}, {2, 3}}},
      {"n = x.neg(); e = x.abs().exp(); return n + e",
       [](const Tensor& x) {
         Tensor n = x.neg();
         Tensor e = x.abs().exp();
         return std::vector<Tensor>{n + e};
       },
       {{1, 2}}},
      {"(x.exp() * 2).relu().sigmoid()  (a binary op between)",
       [](const Tensor& x) { return std::vector<Tensor>{(x.exp() * 2).relu().sigmoid()}; },
       {{2, 3}}},
      {"x.t().exp().relu().abs()  (a view first)",
       [](const Tensor& x) { return std::vector<Tensor>{x.t().exp().relu().abs()}; },
       {{1, 2, 3}}},
      {"x.sin() * x.cos()  (nothing to chain)",
       [](const Tensor& x) { return std::vector<Tensor>{x.sin() * x.cos()}; },
       {}},
      {"y = x.exp(); return cat({y, y.relu()})  (y is read by cat too, in a list)",
       [](const Tensor& x) {
         Tensor y = x.exp();
         return std::vector<Tensor>{cat({y, y.relu()}, 0)};
       },
       {}},
      {"x.exp().relu_().sin()  (relu_ writes in place: not a unary node)",
       [](const Tensor& x) { return std::vector<Tensor>{x.exp().relu_().sin()}; },
       {}},
  };
}

std::string grade_chains(const ChainsFn& fn) {
  Tensor x = randn({3, 4});
  for (const ChainCase& c : chain_cases()) {
    compiler::TraceResult r = compiler::trace({x}, [&] { return c.fn(x); });
    std::vector<std::vector<int>> got;
    try {
      got = fn(r.graph);
    } catch (const std::exception& e) {
      return std::string(c.what) + ": " + e.what();
    }
    if (got != c.want)
      return std::string(c.what) + ": got " + show(got) + ", want " + show(c.want) +
             " (maximal chains of >= 2 unary nodes whose inner results nothing else reads and "
             "the function does not return), in the graph\n" +
             r.graph.to_string();
  }
  return "";
}

TEST(Lesson12UnaryChains, UnaryChainsFindsEveryChainAndNoMore) {
  EXPECT_EQ(grade_chains(unary_chains), "");
}

TEST(Lesson12UnaryChains, TheGraderRejectsWrongPasses) {
  const std::string readers = grade_chains(wrong::chains_ignore_other_readers);
  EXPECT_NE(readers.find("read twice"), std::string::npos) << readers;
  const std::string outputs = grade_chains(wrong::chains_through_outputs);
  EXPECT_NE(outputs.find("is returned"), std::string::npos) << outputs;
  const std::string single = grade_chains(wrong::chains_of_one);
  EXPECT_NE(single.find("want"), std::string::npos) << single;
}

// [SECTION] exercise 2: a guard ---------------------------------------------------------------

using RecordFn = std::function<Guard(const std::vector<Tensor>&)>;
using AcceptsFn = std::function<bool(const Guard&, const std::vector<Tensor>&)>;

struct GuardCase {
  const char* what;
  std::function<std::vector<Tensor>()> traced, later;
  bool later_without_grad;  // the later call runs under NoGradGuard
  bool want;
  bool traced_without_grad = false;  // the trace ran under NoGradGuard
};

std::vector<GuardCase> guard_cases() {
  auto two = [] { return std::vector<Tensor>{randn({2, 3}), randn({3})}; };
  return {
      {"new values, same everything else", two, two, false, true},
      {"sizes [3, 2] where the trace had [2, 3] (same element count)", two,
       [] {
         return std::vector<Tensor>{randn({3, 2}), randn({3})};
       },
       false, false},
      {"float64 where the trace had float32", two,
       [] {
         return std::vector<Tensor>{randn({2, 3}, kFloat64), randn({3})};
       },
       false, false},
      {"an input that requires grad where the trace's did not", two,
       [] {
         return std::vector<Tensor>{randn({2, 3}).requires_grad_(true), randn({3})};
       },
       false, false},
      {"one tensor fewer", two,
       [] {
         return std::vector<Tensor>{randn({2, 3})};
       },
       false, false},
      {"grad mode off where the trace ran with it on", two, two, true, false},
      {"a transposed input of the same sizes (strides do not matter)", two,
       [] {
         return std::vector<Tensor>{randn({3, 2}).t(), randn({3})};
       },
       false, true},
      {"the second tensor of sizes [4] where the trace had [3]", two,
       [] {
         return std::vector<Tensor>{randn({2, 3}), randn({4})};
       },
       false, false},
      {"the second tensor int64 where the trace had float32", two,
       [] {
         return std::vector<Tensor>{randn({2, 3}), arange(3)};
       },
       false, false},
      {"one tensor more", two,
       [] {
         return std::vector<Tensor>{randn({2, 3}), randn({3}), randn({3})};
       },
       false, false},
      {"an input that no longer requires grad, where the trace's did",
       [] {
         return std::vector<Tensor>{randn({2, 3}).requires_grad_(true), randn({3})};
       },
       two, false, false},
      {"grad mode on where the trace ran with it off", two, two, false, false, true},
  };
}

std::string grade_guard(const RecordFn& record_fn, const AcceptsFn& accepts_fn) {
  for (const GuardCase& c : guard_cases()) {
    bool got = false;
    try {
      Guard g;
      if (c.traced_without_grad) {
        NoGradGuard no_grad;
        g = record_fn(c.traced());
      } else {
        g = record_fn(c.traced());
      }
      std::vector<Tensor> later = c.later();
      if (c.later_without_grad) {
        NoGradGuard no_grad;
        got = accepts_fn(g, later);
      } else {
        got = accepts_fn(g, later);
      }
    } catch (const std::exception& e) {
      return std::string(c.what) + ": " + e.what();
    }
    if (got != c.want)
      return std::string(c.what) + ": accepts() said " + (got ? "yes" : "no") + ", want " +
             (c.want ? "yes" : "no");
  }
  return "";
}

TEST(Lesson12Guard, AcceptsExactlyTheCallsTheTraceHolds) {
  EXPECT_EQ(grade_guard(record, accepts), "");
}

TEST(Lesson12Guard, TheGraderRejectsWrongGuards) {
  const std::string numel = grade_guard(record, wrong::accepts_same_numel);
  EXPECT_NE(numel.find("same element count"), std::string::npos) << numel;
  const std::string dtype = grade_guard(record, wrong::accepts_any_dtype);
  EXPECT_NE(dtype.find("float64"), std::string::npos) << dtype;
  const std::string grad = grade_guard(record, wrong::accepts_any_grad_mode);
  EXPECT_NE(grad.find("grad mode off"), std::string::npos) << grad;
}

// [SECTION] exercise 3: remove a graph break ----------------------------------------------------

using UnaryFn = std::function<Tensor(const Tensor&)>;

Tensor branchy(const Tensor& x) {
  if (x.sum().item<double>() > 0) return x * 2;
  return x * -0.5;
}

std::string grade_branch_free(const UnaryFn& fn) {
  auto f = compile([&fn](const Tensor& x) { return fn(x); }, CompileOptions().set_fullgraph(true));
  Generator gen = make_generator(Device(kCPU), 12);
  int64_t shapes = 0;
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{5}, {3, 4}}) {
    ++shapes;
    Tensor noise = randn(shape, gen);
    noise = noise - noise.mean();  // sums to (about) zero, elements of both signs
    // Last, a sum of exactly 0 (-k..k): branchy() takes x * -0.5 there (its test is sum > 0).
    const int64_t n = noise.numel();
    Tensor zero_sum = (arange(n).to(kFloat) - static_cast<double>(n - 1) / 2).view(shape);
    for (double sign : {1.0, -1.0, 1.0, 0.0}) {
      Tensor x = sign == 0.0 ? zero_sum : noise + 0.5 * sign;  // the sum's sign: `sign`
      Tensor got;
      try {
        got = f(x);
      } catch (const std::exception& e) {
        return std::string("compiled with fullgraph: ") + e.what();
      }
      Tensor want = branchy(x);
      if (!got.defined() || got.sizes() != want.sizes() || !allclose(got, want)) {
        std::ostringstream os;
        os << "an input whose sum is "
           << (sign > 0   ? "positive"
               : sign < 0 ? "negative"
                          : "exactly zero")
           << ", after a compiled call with the other sign: got "
           << (got.defined() ? got : Tensor()) << ", want " << want
           << " (the branch must be chosen at each call, by the sum, inside the graph)";
        return os.str();
      }
    }
  }
  if (f.stats().traces != shapes)
    return "the function was traced " + std::to_string(f.stats().traces) +
           " times for 2 shapes: one trace per shape must serve both signs";
  return "";
}

class Lesson12BranchFree : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("GLASS_CACHE_DIR", GLASS_TEST_CACHE_DIR, 1); }
  void TearDown() override { ::unsetenv("GLASS_CACHE_DIR"); }
};

TEST_F(Lesson12BranchFree, CompilesWithFullgraphAndChoosesAtEachCall) {
  EXPECT_EQ(grade_branch_free(branch_free), "");
}

TEST_F(Lesson12BranchFree, TheGraderRejectsWrongRewrites) {
  const std::string item = grade_branch_free(wrong::branch_by_item);
  EXPECT_NE(item.find("graph break: item()"), std::string::npos) << item;
  const std::string data = grade_branch_free(wrong::branch_by_data_ptr);
  EXPECT_NE(data.find("chosen at each call"), std::string::npos) << data;
  const std::string zero = grade_branch_free(wrong::branch_at_zero_too);
  EXPECT_NE(zero.find("exactly zero"), std::string::npos) << zero;
  const std::string each = grade_branch_free(wrong::branch_per_element);
  EXPECT_NE(each.find("want"), std::string::npos) << each;
}

// [SECTION] the bans: what the compiled answers call ---------------------------------------------

std::string banned_calls(const std::string& object) {
  return banned_among(
      undefined_symbols(object),
      {{"glass::compiler::find_fusion_groups(", "exercise 1 bans compiler::find_fusion_groups"},
       {"glass::compiler::eliminate_", "exercise 1 bans the passes of compiler/passes.h"},
       {"glass::compiler::fold_constants(", "exercise 1 bans the passes of compiler/passes.h"},
       {"glass::compiler::bypass_detaches(", "exercise 1 bans the passes of compiler/passes.h"},
       {"glass::compiler::nodes_run_alone(", "exercise 1 bans the passes of compiler/passes.h"},
       {"glass::compiler::CompiledFunction::", "exercise 2 bans compiler::CompiledFunction"}});
}

std::string exercise_3_reads(const std::string& object, const std::string& function) {
  return exercise_calls_banned(
      object, 3, function,
      {"glass::Tensor::item(", "glass::Tensor::data_ptr(", "glass::operator<<(",
       "glass::to_string(glass::Tensor", "glass::Tensor::accessor"});
}

TEST(Lesson12Bans, TheAnswersCallNoBannedFunction) {
  EXPECT_EQ(banned_calls(GLASS_LESSON12_ANSWERS_OBJECT), "") << GLASS_LESSON12_ANSWERS_OBJECT;
  EXPECT_EQ(exercise_3_reads(GLASS_LESSON12_ANSWERS_OBJECT, "glass::lesson12::branch_free("), "");
}

TEST(Lesson12Bans, TheChecksCatchEachBannedCall) {
  const std::string found = banned_calls(GLASS_LESSON12_WRONG_OBJECT);
  EXPECT_NE(found.find("bans compiler::find_fusion_groups"), std::string::npos) << found;
  EXPECT_NE(found.find("bans compiler::CompiledFunction"), std::string::npos) << found;
  const std::string item =
      exercise_3_reads(GLASS_LESSON12_WRONG_OBJECT, "glass::lesson12::wrong::branch_by_item(");
  EXPECT_NE(item.find("must not call glass::Tensor::item("), std::string::npos) << item;
  // data_ptr<float>() is inline, so no call is left to see: the grader's two signs catch
  // that read instead (TheGraderRejectsWrongRewrites).
  EXPECT_EQ(
      exercise_3_reads(GLASS_LESSON12_WRONG_OBJECT, "glass::lesson12::wrong::branch_per_element("),
      "");
}

}  // namespace
}  // namespace glass::lesson12
