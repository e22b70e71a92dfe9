// tests/viewer/stride_picture_test.cpp — view recipes, the address formula over whole views,
// and the stride picture: its DOT and where Graphviz puts its arrows.
//
// References are lesson 02's hand-worked numbers (x = arange(12).view({3, 4}), whose values
// are their own storage indices): x.t()[1][2] is storage cell 0 + 1*1 + 2*4 = 9, row 1
// and column 2 of x share cell 6, and so on.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops/factories.h"
#include "viewer/layout.h"
#include "viewer/stride_dot.h"
#include "viewer/stride_map.h"
#include "viewer/view_recipe.h"

namespace glass::viz {
namespace {

using Sizes = std::vector<int64_t>;

Tensor lesson_x() { return arange(12).view({3, 4}); }

Sizes sizes_of(const Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }
Sizes strides_of(const Tensor& t) { return {t.strides().begin(), t.strides().end()}; }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ViewRecipe, ParsesCodeAndGivesItBack) {
  std::vector<ViewStep> steps = parse_view_recipe(" t().slice(0, 0, 3,2) . expand({2, 3,4})");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].op, "t");
  EXPECT_EQ(steps[1].args, (std::vector<Sizes>{{0}, {0}, {3}, {2}}));
  EXPECT_EQ(recipe_code(steps), ".t().slice(0, 0, 3, 2).expand({2, 3, 4})");
  EXPECT_TRUE(parse_view_recipe("").empty());
  EXPECT_EQ(recipe_code(parse_view_recipe(".select(1, -1)")), ".select(1, -1)");
}

TEST(ViewRecipe, AppliesLesson02sTable) {
  // Lesson 02, section 3: each view's sizes, strides and offset, worked by hand.
  struct Row {
    const char* recipe;
    Sizes sizes, strides;
    int64_t offset;
  };
  const Row rows[] = {
      {"transpose(0, 1)", {4, 3}, {1, 4}, 0},
      {"unsqueeze(0).expand({2, 3, 4})", {2, 3, 4}, {0, 4, 1}, 0},
      {"slice(0, 0, 3, 2)", {2, 4}, {8, 1}, 0},
      {"slice(1, 1, 4, 2)", {3, 2}, {4, 2}, 1},
      {"select(1, 2)", {3}, {4}, 2},
      {"narrow(1, 1, 2)", {3, 2}, {4, 1}, 1},
      {"diagonal(1)", {3}, {5}, 1},
      {"as_strided({2, 2}, {1, 6}, 3)", {2, 2}, {1, 6}, 3},
      {"view({2, 6}).movedim(0, 1)", {6, 2}, {1, 6}, 0},
      {"unfold(1, 2, 2)", {3, 2, 2}, {4, 2, 1}, 0},
  };
  const Tensor x = lesson_x();
  for (const Row& r : rows) {
    SCOPED_TRACE(r.recipe);
    Tensor v = apply_views(x, parse_view_recipe(r.recipe));
    EXPECT_EQ(sizes_of(v), r.sizes);
    EXPECT_EQ(strides_of(v), r.strides);
    EXPECT_EQ(v.storage_offset(), r.offset);
    EXPECT_TRUE(v.is_alias_of(x));
  }
  // Both ways of writing a list give the same view.
  Tensor y = arange(24).view({2, 3, 4});
  EXPECT_EQ(strides_of(apply_views(y, parse_view_recipe("permute({2, 0, 1})"))), (Sizes{1, 12, 4}));
  EXPECT_EQ(strides_of(apply_views(y, parse_view_recipe("permute(2, 0, 1)"))), (Sizes{1, 12, 4}));
}

TEST(ViewRecipe, BadTextSaysWhereAndBadViewsSayWhat) {
  EXPECT_NE(error_of([] { parse_view_recipe("t(.slice(0, 0, 2)"); }).find("at position 2"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_view_recipe("slice(0, {1, 2"); }).find("to close the list"),
            std::string::npos);
  const Tensor x = lesson_x();
  std::string unknown = error_of([&] { apply_views(x, parse_view_recipe("reshape({12})")); });
  EXPECT_NE(unknown.find("'reshape' is not a view op"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("slice(dim, start, end[, step])"), std::string::npos) << unknown;
  EXPECT_NE(error_of([&] {
              apply_views(x, parse_view_recipe("slice(0)"));
            }).find("slice takes (dim, start, end[, step]), got .slice(0)"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { apply_views(x, parse_view_recipe("as_strided(2, 2)")); }).find("braced lists"),
      std::string::npos);
  EXPECT_NE(error_of([&] {
              apply_views(x, parse_view_recipe("transpose({0}, 1)"));
            }).find("must be an integer"),
            std::string::npos);
  // A view core refuses is core's error, naming the problem.
  EXPECT_NE(error_of([&] { apply_views(x, parse_view_recipe("transpose(0, 5)")); }), "(no error)");
}

TEST(ViewRecipe, ParsesSizes) {
  EXPECT_EQ(parse_sizes("3,4"), (Sizes{3, 4}));
  EXPECT_EQ(parse_sizes("2x3x4"), (Sizes{2, 3, 4}));
  EXPECT_NE(error_of([] { parse_sizes("3,,4"); }).find("'' is not a size"), std::string::npos);
  EXPECT_NE(error_of([] { parse_sizes("3,-1"); }).find("'-1' is not a size"), std::string::npos);
  Tensor x = numbered_tensor("3x4", 64);  // lesson 02's x: each value its storage index
  EXPECT_EQ(storage_cells(x), (Sizes{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(values_of(storage_view(x.t())), values_of(x.reshape({12})));
  EXPECT_NE(error_of([] { numbered_tensor("100", 64); }).find("make 100 elements; at most 64"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              numbered_tensor("99999999999,99999999999", 64);
            }).find("more elements than int64 can count"),
            std::string::npos);
}

TEST(StrideMap, EveryElementsCellAndWhoReadsIt) {
  const Tensor x = lesson_x();
  EXPECT_EQ(storage_cells(x.t()), (Sizes{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(storage_cells(x.slice(1, 1, 4, 2)), (Sizes{1, 3, 5, 7, 9, 11}));
  EXPECT_EQ(address_formula(x.t(), {1, 2}), "0 + 1*1 + 2*4 = 9");
  EXPECT_EQ(address_formula(x.slice(1, 1, 4, 2), {2, 1}), "1 + 2*4 + 1*2 = 11");
  EXPECT_EQ(address_formula(x, {0, -1}), "0 + 0*4 + 3*1 = 3");  // -1: the last column
  EXPECT_NE(error_of([&] {
              address_formula(x, {3, 0});
            }).find("out of range for dim 0 of size 3"),
            std::string::npos);
  // expand's stride 0: every cell is read by both leading indices.
  EXPECT_EQ(reads_per_cell(x.unsqueeze(0).expand({2, 3, 4})), Sizes(12, 2));
  EXPECT_EQ(reads_per_cell(x.select(0, 1)), (Sizes{0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0}));
  // Row 1 and column 2 meet at x[1][2], storage cell 6; rows 0 and 2 never meet.
  EXPECT_EQ(shared_cells(x.select(0, 1), x.select(1, 2)), (Sizes{6}));
  EXPECT_TRUE(shared_cells(x.select(0, 0), x.select(0, 2)).empty());
  EXPECT_TRUE(shared_cells(x, x.clone()).empty());  // a copy is another storage
  EXPECT_EQ(unravel(7, {3, 4}), (Sizes{1, 3}));
  EXPECT_EQ(values_of(x.t().select(0, 1)), (std::vector<double>{1, 5, 9}));
  EXPECT_EQ(storage_elements(x.select(0, 1)), 12);
}

TEST(StrideDot, ArrowsRunFromEachElementToItsStorageCell) {
  const Tensor x = lesson_x();
  std::string dot = stride_to_dot({{"x.t()", x.t()}}, {.highlight = Sizes{1, 2}});
  EXPECT_EQ(count(dot, " -> storage:"), 12u);
  EXPECT_NE(dot.find("v0:\"e1_2\":c -> storage:s9:n [color=\"#d62728\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("v0:\"e0_1\":c -> storage:s4:n"), std::string::npos);
  EXPECT_NE(dot.find("= 0 + 1*1 + 2*4 = 9"), std::string::npos);  // the legend's formula
  EXPECT_NE(dot.find("sizes [4, 3]  strides [1, 4]  offset 0"), std::string::npos);
  // Without arrows, only the highlighted element keeps one.
  std::string quiet =
      stride_to_dot({{"x.t()", x.t()}}, {.highlight = Sizes{1, 2}, .arrows = false});
  EXPECT_EQ(count(quiet, " -> storage:"), 1u);
}

TEST(StrideDot, MarksAliasingAndRepeatedReads) {
  const Tensor x = lesson_x();
  std::string two = stride_to_dot({{"row", x.select(0, 1)}, {"col", x.select(1, 2)}});
  EXPECT_EQ(count(two, "BGCOLOR=\"#cbb4e0\""), 1u);  // cell 6, read by both
  EXPECT_NE(two.find("they alias"), std::string::npos);
  EXPECT_NE(two.find("{ rank=same; v0; v1; }"), std::string::npos);
  std::string expanded = stride_to_dot({{"e", x.unsqueeze(0).expand({2, 3, 4})}});
  EXPECT_EQ(count(expanded, "BORDER=\"3\""), 12u);
  EXPECT_NE(expanded.find("[1, :, :]"), std::string::npos);  // one block per leading index
  EXPECT_EQ(expanded.find("they alias"), std::string::npos);
}

TEST(StrideDot, RefusesWhatItCannotDraw) {
  const Tensor x = lesson_x();
  EXPECT_NE(error_of([&] {
              stride_to_dot({{"x", x}, {"c", x.clone()}});
            }).find("'c' does not share the storage of 'x'"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              stride_to_dot({{"big", arange(100)}});
            }).find("'big' has 100 elements; a picture shows at most 64"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              stride_to_dot({{"x", x}}, {.highlight = Sizes{3, 0}});
            }).find("out of range"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              stride_to_dot({{"x", x}}, {.highlight = Sizes{1}});
            }).find("2 dims"),
            std::string::npos);
  EXPECT_NE(error_of([] { stride_to_dot({}); }).find("at least one view"), std::string::npos);
}

TEST(StrideDot, HighlightsOnlyWhenAskedAndAZeroDimElementToo) {
  const Tensor x = lesson_x();
  // A 0-dim view has the index {}: without a highlight nothing is red, with one it is.
  std::string plain = stride_to_dot({{"x[1][2]", x.select(0, 1).select(0, 2)}});
  EXPECT_EQ(plain.find("#d62728"), std::string::npos);
  std::string lit =
      stride_to_dot({{"x[1][2]", x.select(0, 1).select(0, 2)}}, {.highlight = Sizes{}});
  EXPECT_NE(lit.find("v0:\"e\":c -> storage:s6:n [color=\"#d62728\""), std::string::npos) << lit;
  EXPECT_NE(lit.find("= 6 = 6"), std::string::npos);  // offset 6, no index terms
  // Negative entries count from the end: [-1, -1] of x.t() is [3, 2], storage cell 11.
  std::string last = stride_to_dot({{"x.t()", x.t()}}, {.highlight = Sizes{-1, -1}});
  EXPECT_NE(last.find("v0:\"e3_2\":c -> storage:s11:n [color=\"#d62728\""), std::string::npos);
}

TEST(StrideDot, GraphvizLandsEachArrowOnTheRightStorageCell) {
  // The strip's cells are equal columns of the storage node's box, so the arrow tip of
  // element k must lie in column storage_cells[k] — for a transpose, a slice with a step
  // and an expand.
  const Tensor x = lesson_x();
  for (const char* recipe : {"t()", "slice(1, 1, 4, 2)", "unsqueeze(0).expand({2, 3, 4})"}) {
    SCOPED_TRACE(recipe);
    Tensor v = apply_views(x, parse_view_recipe(recipe));
    Layout l = layout(stride_to_dot({{recipe, v}}));
    const NodeBox* strip = l.node("storage");
    ASSERT_NE(strip, nullptr);
    const double cell = strip->width / 12, left = strip->center.x - strip->width / 2;
    Sizes cells = storage_cells(v);
    ASSERT_EQ(l.edges.size(), cells.size());
    for (size_t k = 0; k < cells.size(); ++k) {
      ASSERT_TRUE(l.edges[k].end_arrow.has_value());
      const double tip = l.edges[k].end_arrow->x;
      EXPECT_GE(tip, left + static_cast<double>(cells[k]) * cell - 0.5) << "element " << k;
      EXPECT_LE(tip, left + static_cast<double>(cells[k] + 1) * cell + 0.5) << "element " << k;
      EXPECT_LT(std::abs(l.edges[k].end_arrow->y - (strip->center.y - strip->height / 2)), 2.0);
    }
  }
}

}  // namespace
}  // namespace glass::viz
