// viewer/view_recipe.cpp — parsing and applying view recipes (view_recipe.h).
//
// The parser is a hand-written scanner over a tiny grammar:
//   recipe := ('.'? call)*        call := name '(' [arg (',' arg)*] ')'
//   arg    := integer | '{' [integer (',' integer)*] '}'
// Applying a step calls the Tensor method of the same name, so the view arithmetic (and
// its error messages) is core's, never re-derived here.
#include "viewer/view_recipe.h"

#include <cctype>
#include <charconv>
#include <sstream>

#include "core/error.h"
#include "core/ops/factories.h"

namespace glass::viz {

namespace {

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  bool done() {
    skip_space();
    return pos_ >= text_.size();
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c, const char* what) {
    if (!accept(c)) fail(std::string("expected '") + c + "' " + what);
  }
  std::string name() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    if (pos_ == start) fail("expected the name of a view op");
    return std::string(text_.substr(start, pos_ - start));
  }
  int64_t integer() {
    skip_space();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
    if (ec != std::errc()) fail("expected an integer");
    pos_ = static_cast<size_t>(end - text_.data());
    return v;
  }
  [[noreturn]] void fail(const std::string& what) const {
    detail::throw_error(detail::str_cat("view recipe '", text_, "': ", what, " at position ", pos_,
                                        " (write views as code, e.g. \"t().slice(0, 0, 3, 2)\")"));
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  std::string_view text_;
  size_t pos_ = 0;
};

// The arguments as one list: either a single braced list or plain integers, as in
// permute({2, 0, 1}) and permute(2, 0, 1).
std::vector<int64_t> as_list(const ViewStep& s) {
  if (s.args.size() == 1 && s.braced[0]) return s.args[0];
  std::vector<int64_t> out;
  for (size_t i = 0; i < s.args.size(); ++i) {
    GLASS_CHECK(!s.braced[i], "view recipe: ", s.op, "() takes one list of integers, as in ", s.op,
                "({2, 3, 4}), got ", s.code());
    out.push_back(s.args[i][0]);
  }
  return out;
}

// The i-th argument, which must be a plain integer.
int64_t scalar(const ViewStep& s, size_t i) {
  GLASS_CHECK(!s.braced[i], "view recipe: argument ", i + 1, " of ", s.code(),
              " must be an integer, not a list");
  return s.args[i][0];
}

void check_arity(const ViewStep& s, size_t lo, size_t hi, const char* signature) {
  GLASS_CHECK(s.args.size() >= lo && s.args.size() <= hi, "view recipe: ", s.op, " takes ",
              signature, ", got ", s.code());
}

}  // namespace

std::string ViewStep::code() const {
  std::string s = "." + op + "(";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    s += braced[i] ? "{" + join_ints(args[i]) + "}" : std::to_string(args[i][0]);
  }
  return s + ")";
}

const std::vector<std::string>& view_recipe_ops() {
  static const std::vector<std::string> ops = {
      "t()",
      "transpose(dim0, dim1)",
      "permute({dims...})",
      "slice(dim, start, end[, step])",
      "select(dim, index)",
      "narrow(dim, start, length)",
      "expand({sizes...})",
      "view({sizes...})",
      "unsqueeze(dim)",
      "squeeze(dim)",
      "movedim(source, destination)",
      "diagonal([offset[, dim1, dim2]])",
      "unfold(dim, size, step)",
      "as_strided({sizes}, {strides}[, offset])",
  };
  return ops;
}

std::vector<ViewStep> parse_view_recipe(std::string_view recipe) {
  Scanner in(recipe);
  std::vector<ViewStep> steps;
  while (!in.done()) {
    in.accept('.');
    ViewStep step;
    step.op = in.name();
    in.expect('(', ("after '" + step.op + "'").c_str());
    if (!in.accept(')')) {
      do {
        if (in.accept('{')) {
          std::vector<int64_t> list;
          if (!in.accept('}')) {
            do list.push_back(in.integer());
            while (in.accept(','));
            in.expect('}', "to close the list");
          }
          step.args.push_back(std::move(list));
          step.braced.push_back(true);
        } else {
          step.args.push_back({in.integer()});
          step.braced.push_back(false);
        }
      } while (in.accept(','));
      in.expect(')', ("to close " + step.op + "(").c_str());
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

Tensor apply_view(const Tensor& t, const ViewStep& s) {
  const std::string& op = s.op;
  if (op == "t") {
    check_arity(s, 0, 0, "no arguments");
    return t.t();
  }
  if (op == "transpose") {
    check_arity(s, 2, 2, "(dim0, dim1)");
    return t.transpose(scalar(s, 0), scalar(s, 1));
  }
  if (op == "permute") return t.permute(as_list(s));
  if (op == "expand") return t.expand(as_list(s));
  if (op == "view") return t.view(as_list(s));
  if (op == "slice") {
    check_arity(s, 3, 4, "(dim, start, end[, step])");
    return t.slice(scalar(s, 0), scalar(s, 1), scalar(s, 2), s.args.size() == 4 ? scalar(s, 3) : 1);
  }
  if (op == "select") {
    check_arity(s, 2, 2, "(dim, index)");
    return t.select(scalar(s, 0), scalar(s, 1));
  }
  if (op == "narrow") {
    check_arity(s, 3, 3, "(dim, start, length)");
    return t.narrow(scalar(s, 0), scalar(s, 1), scalar(s, 2));
  }
  if (op == "unsqueeze" || op == "squeeze") {
    check_arity(s, 1, 1, "(dim)");
    return op == "unsqueeze" ? t.unsqueeze(scalar(s, 0)) : t.squeeze(scalar(s, 0));
  }
  if (op == "movedim") {
    check_arity(s, 2, 2, "(source, destination)");
    return t.movedim(scalar(s, 0), scalar(s, 1));
  }
  if (op == "diagonal") {
    GLASS_CHECK(s.args.size() == 0 || s.args.size() == 1 || s.args.size() == 3,
                "view recipe: diagonal takes ([offset[, dim1, dim2]]), got ", s.code());
    if (s.args.size() == 3) return t.diagonal(scalar(s, 0), scalar(s, 1), scalar(s, 2));
    return t.diagonal(s.args.empty() ? 0 : scalar(s, 0));
  }
  if (op == "unfold") {
    check_arity(s, 3, 3, "(dim, size, step)");
    return t.unfold(scalar(s, 0), scalar(s, 1), scalar(s, 2));
  }
  if (op == "as_strided") {
    check_arity(s, 2, 3, "({sizes}, {strides}[, offset])");
    GLASS_CHECK(s.braced[0] && s.braced[1], "view recipe: as_strided's sizes and strides are ",
                "braced lists, as in as_strided({2, 2}, {1, 6}, 3), got ", s.code());
    if (s.args.size() == 3) return t.as_strided(s.args[0], s.args[1], scalar(s, 2));
    return t.as_strided(s.args[0], s.args[1]);
  }
  std::ostringstream known;
  for (const std::string& o : view_recipe_ops()) known << "\n  " << o;
  detail::throw_error(
      detail::str_cat("view recipe: '", op, "' is not a view op; the views are:", known.str()));
}

Tensor apply_views(Tensor t, const std::vector<ViewStep>& steps) {
  for (const ViewStep& s : steps) t = apply_view(t, s);
  return t;
}

std::string join_ints(const std::vector<int64_t>& v, std::string_view sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(v[i]);
  }
  return s;
}

std::string recipe_code(const std::vector<ViewStep>& steps) {
  std::string s;
  for (const ViewStep& step : steps) s += step.code();
  return s;
}

namespace {

// Comma (or 'x') separated integers; `what` names them in the error.
std::vector<int64_t> parse_ints(std::string_view text, const char* what, const char* example,
                                bool allow_negative) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of(",x", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(pos, end - pos);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    int64_t v = -1;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    GLASS_CHECK(ec == std::errc() && p == part.data() + part.size() && (allow_negative || v >= 0),
                what, " '", text, "': '", part, "' is not ", allow_negative ? "an index" : "a size",
                " (write ", what, " as ", example, ")");
    out.push_back(v);
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::vector<int64_t> parse_sizes(std::string_view text) {
  return parse_ints(text, "sizes", "3,4 or 3x4", false);
}

Tensor numbered_tensor(std::string_view text, int64_t max_elements) {
  std::vector<int64_t> sizes = parse_sizes(text);
  int64_t n = 1;
  for (int64_t size : sizes)
    GLASS_CHECK(!__builtin_mul_overflow(n, size, &n), "sizes '", text,
                "': more elements than int64 can count");
  GLASS_CHECK(n <= max_elements, "sizes '", text, "' make ", n, " elements; at most ", max_elements,
              " can be shown");
  return arange(n).view(sizes);
}

std::vector<int64_t> parse_index(std::string_view text) {
  if (text.find_first_not_of(' ') == std::string_view::npos) return {};
  return parse_ints(text, "index", "1,2 or -1,0", true);
}

}  // namespace glass::viz
