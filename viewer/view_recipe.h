// viewer/view_recipe.h — a chain of views written as code, parsed and applied.
//
//   auto steps = viz::parse_view_recipe("t().slice(1, 0, 4, 2)");
//   Tensor v = viz::apply_views(x, steps);        // x.t().slice(1, 0, 4, 2)
//
// The stride pictures (stride_dot.h), glass-dot's --view and the app's stride lab all take
// views in this form, so a figure, a command line and the lab's history read like the
// C++ a student would write. Every op accepted is a view (seed §II: it rewrites sizes,
// strides and offset, never copies), so the result always shares the input's storage —
// the invariant the pictures rely on. Bad text is a glass::Error that quotes the recipe
// and says where it went wrong; a bad argument is the op's own error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace glass::viz {

// One call: `op` and its arguments, each an integer or a braced list ("{2, 3, 4}"), kept
// as written so that code() gives the call back.
struct ViewStep {
  std::string op;
  std::vector<std::vector<int64_t>> args;  // a plain integer is a list of one
  std::vector<bool> braced;                // whether args[i] was written in braces

  // ".slice(1, 0, 4, 2)", ".expand({2, 3, 4})"
  std::string code() const;
};

// The ops a recipe may use, with the arguments each takes, one line each (for --help and
// the app's hint).
const std::vector<std::string>& view_recipe_ops();

// "t().slice(0, 0, 3, 2)" (a leading '.' is allowed, as is an empty recipe: no views).
std::vector<ViewStep> parse_view_recipe(std::string_view recipe);

// Applies one step / all of them in order; each result is a view of `t`.
Tensor apply_view(const Tensor& t, const ViewStep& step);
Tensor apply_views(Tensor t, const std::vector<ViewStep>& steps);

// The steps as code: ".t().slice(0, 0, 3, 2)".
std::string recipe_code(const std::vector<ViewStep>& steps);

// "1, 2, 3" (with `sep` between): how recipes, captions and the app write a list of ints.
std::string join_ints(const std::vector<int64_t>& v, std::string_view sep = ", ");

// "3,4" or "3x4" -> {3, 4}: a shape on a command line. Every size must be >= 0.
std::vector<int64_t> parse_sizes(std::string_view text);

// The tensor the stride pictures and the lab start from, given as "3,4": arange(n) viewed
// as those sizes, so each element's value is its own storage index. More than
// max_elements (or more than int64 can count) is a glass::Error before anything is
// allocated.
Tensor numbered_tensor(std::string_view sizes, int64_t max_elements);

// "1,2" or "-1,0" -> an element's index (negative entries count from the end, checked by
// whoever uses it); "" -> {} (the one element of a 0-dim tensor).
std::vector<int64_t> parse_index(std::string_view text);

}  // namespace glass::viz
