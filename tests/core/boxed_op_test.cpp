// tests/core/boxed_op_test.cpp — every op's boxed form (Note [Boxed ops]): the registry and
// schemas, a boxed call against the typed one, and the trace fallback, which must see every
// op a function runs (factories, fills, item) with its arguments.
#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/dispatcher.h"
#include "core/ops/compare.h"
#include "core/ops/indexing.h"
#include "core/ops/join.h"
#include "core/ops/linalg.h"
#include "core/ops/random.h"
#include "core/ops/read_value.h"
#include "core/ops/reduce.h"
#include "core/print.h"
#include "test_util.h"

namespace glass {
namespace {

TEST(BoxedOps, EveryCoreOpIsRegisteredWithItsSchema) {
  std::set<std::string> names;
  for (const BoxedOp* op : dispatch::registered_ops()) names.insert(op->name());
  for (const char* want : {"unary",      "unary_",     "binary",       "binary_",       "clamp",
                           "clamp_",     "where",      "masked_fill_", "copy_",         "fill_",
                           "to_copy",    "copy_into",  "fill_into",    "empty_strided", "view",
                           "as_strided", "transpose",  "permute",      "expand",        "slice",
                           "select",     "squeeze",    "unsqueeze",    "diagonal",      "unfold",
                           "alias",      "t",          "clone",        "reduce",        "max_dim",
                           "softmax",    "mm",         "bmm",          "addmm",         "cat",
                           "index",      "index_put_", "gather",       "scatter_add_",  "nonzero",
                           "uniform_",   "normal_",    "random_",      "randperm",      "item",
                           "print"})
    EXPECT_TRUE(names.count(want)) << want << " is not registered";
  EXPECT_EQ(ops::binary.schema(), "binary(BinaryOp, Tensor, Tensor) -> Tensor");
  EXPECT_EQ(ops::binary_.schema(), "binary_(BinaryOp, Tensor(a!), Tensor) -> Tensor(a!)");
  EXPECT_EQ(ops::clamp.schema(), "clamp(Tensor, Scalar?, Scalar?) -> Tensor");
  EXPECT_EQ(ops::max_dim.schema(), "max_dim(Tensor, int, bool, bool) -> (Tensor, Tensor)");
  EXPECT_EQ(ops::fill_into.schema(), "fill_into(Tensor(a!), Scalar) -> ()");
  EXPECT_EQ(ops::item.schema(), "item(Tensor) -> Scalar");
  EXPECT_TRUE(ops::binary_.mutates_argument(1));
  EXPECT_FALSE(ops::binary_.mutates_argument(2));
  EXPECT_TRUE(ops::view.has_tag(kViewOp));
  EXPECT_TRUE(ops::uniform_.has_tag(kRandomOp));
  EXPECT_TRUE(ops::empty_strided.has_tag(kFactoryOp));
  EXPECT_TRUE(ops::item.has_tag(kReadsValueOp));
  EXPECT_EQ(dispatch::find_op("addmm"), &ops::addmm);
  EXPECT_EQ(dispatch::find_op("no_such_op"), nullptr);
}

TEST(BoxedOps, ABoxedCallComputesWhatTheTypedCallDoes) {
  Tensor a = tensor({{1., 2.}, {3., 4.}}), b = tensor({10., 20.});
  dispatch::Stack s{BinaryOp::Mul, a, b};
  ops::binary.call_boxed(s);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(equal(s[0].tensor(), a * b));

  dispatch::Stack v{a, std::vector<int64_t>{4}};  // an IntArrayRef argument is owned by the IValue
  ops::view.call_boxed(v);
  EXPECT_EQ(v[0].tensor().sizes(), IntArrayRef({4}));

  dispatch::Stack m{a, int64_t{1}, false, true};  // max: a tuple result is its elements
  ops::max_dim.call_boxed(m);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(equal(m[0].tensor(), tensor({2., 4.})));

  Tensor x = zeros({2});
  dispatch::Stack w{BinaryOp::Add, x, tensor({1., 1.})};  // in place: writes the caller's tensor
  ops::binary_.call_boxed(w);
  EXPECT_TRUE(equal(x, tensor({1., 1.})));
  EXPECT_TRUE(w[0].tensor().is_same(x));

  dispatch::Stack it{tensor({7.})};
  ops::item.call_boxed(it);
  EXPECT_EQ(it[0].get<Scalar>().toDouble(), 7.0);
}

TEST(BoxedOps, WrongArgumentsAreClearErrors) {
  dispatch::Stack few{BinaryOp::Mul, ones({2})};
  EXPECT_GLASS_ERROR(ops::binary.call_boxed(few), "binary()", "needs 3 arguments");
  dispatch::Stack wrong{BinaryOp::Mul, ones({2}), int64_t{3}};
  EXPECT_GLASS_ERROR(ops::binary.call_boxed(wrong), "asked for a Tensor but it holds a int");
}

// A fallback that records each op's name and arguments, then runs it.
std::vector<std::string> g_seen;
void recording_fallback(const BoxedOp& op, dispatch::Stack& stack) {
  std::ostringstream line;
  line << op.name() << "(";
  for (size_t i = 0; i < stack.size(); ++i) line << (i ? ", " : "") << stack[i];
  line << ")";
  g_seen.push_back(line.str());
  op.redispatch_boxed(DispatchKey::Trace, stack);
}

class TraceFallback : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = dispatch::trace_fallback();
    dispatch::set_trace_fallback(&recording_fallback);
    g_seen.clear();
  }
  void TearDown() override { dispatch::set_trace_fallback(previous_); }
  dispatch::TraceFallback previous_ = nullptr;
};

TEST_F(TraceFallback, SeesFactoriesFillsAndItemButNotWhatOpsDoInside) {
  Tensor x = ones({3});
  Scalar total;
  {
    dispatch::TracingGuard tracing;
    Tensor z = zeros({2, 3});            // empty_strided + fill_into
    Tensor s = (x * 2).softmax(0);       // binary, softmax (its exp and sum stay inside)
    total = (z.sum() + s.sum()).item();  // reduce, reduce, binary, item
  }
  EXPECT_NEAR(total.toDouble(), 1.0, 1e-6);
  std::vector<std::string> names;
  for (const std::string& line : g_seen) names.push_back(line.substr(0, line.find('(')));
  EXPECT_EQ(names, (std::vector<std::string>{"empty_strided", "fill_into", "binary", "softmax",
                                             "reduce", "reduce", "binary", "item"}))
      << ::testing::PrintToString(g_seen);
  EXPECT_EQ(g_seen[0], "empty_strided([2, 3], [3, 1], Float, cpu, false)");
  EXPECT_EQ(g_seen[1], "fill_into(Tensor[2, 3]:Float, 0)");
}

TEST_F(TraceFallback, ANumberInAnOpIsAnArgumentNotAFactoryCall) {
  Tensor x = ones({3});
  {
    dispatch::TracingGuard tracing;
    (void)(x * 0.5);
  }
  ASSERT_EQ(g_seen.size(), 1u) << ::testing::PrintToString(g_seen);
  EXPECT_EQ(g_seen[0], "binary(mul, Tensor[3]:Float, Tensor[]:Double)");
}

TEST_F(TraceFallback, ALiteralTensorIsACopyOfAConstantAndRandintAnOp) {
  {
    dispatch::TracingGuard tracing;
    (void)tensor({1., 2.});
    (void)randint(0, 5, {4});
    (void)randperm(3);
  }
  std::vector<std::string> names;
  for (const std::string& line : g_seen) names.push_back(line.substr(0, line.find('(')));
  EXPECT_EQ(names, (std::vector<std::string>{"to_copy", "empty_strided", "random_", "randperm"}))
      << ::testing::PrintToString(g_seen);
}

TEST_F(TraceFallback, PrintingIsAnOpThatReadsValues) {
  std::ostringstream os;
  {
    dispatch::TracingGuard tracing;
    os << ones({1});
  }
  ASSERT_FALSE(g_seen.empty());
  EXPECT_EQ(g_seen.back().substr(0, 5), "print");
}

}  // namespace
}  // namespace glass
