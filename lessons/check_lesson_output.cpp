// lessons/check_lesson_output.cpp — keeps each lesson's README equal to what its program
// prints.
//
//   check_lesson_output BINARY README.md            compare; exit 0 if equal, 1 with a diff
//   check_lesson_output BINARY README.md --update   rewrite the README's blocks instead
//
// The README quotes the program's output in one or more blocks, each a fenced code block
// between the lines <!-- output:begin --> and <!-- output:end -->. Invariant checked: the
// concatenation of the blocks' contents (without their fences) equals the program's
// stdout byte for byte. Exit code 2 means the check could not run (bad README, program
// failed to run or exited nonzero).
//
// A README whose numbers come out of a long floating-point computation (lesson 06 trains
// for 2,345 steps) may declare `<!-- output:tolerance 0.02 -->`: the text must still match
// exactly, but each number may differ from the quoted one by that fraction of itself. The
// kernels are compiled for the machine they run on (-march=native), and a CPU with other
// vector widths sums in another order; the last digits of a trained loss then move.
//
// --update splits the new output across the existing blocks: block 0 starts at the first
// line, and every later block starts at the first line, after the previous block's start,
// that equals the block's current first line (its header). Blocks whose header has
// disappeared must be fixed by hand.
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr const char* kBegin = "<!-- output:begin -->";
constexpr const char* kEnd = "<!-- output:end -->";
constexpr const char* kTolerance = "<!-- output:tolerance ";

struct Block {
  size_t content_begin;  // byte offsets of the text between the fences, in the README
  size_t content_end;
  size_t first_line;  // README line number (1-based) of the content's first line
  std::string content;
};

struct Failure {
  std::string message;
};

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) nl = s.size();
    lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Failure{"cannot read " + path};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Finds every quoted block. A block's content runs from the line after its opening fence
// (a line starting with ```) to the line before the closing fence (a line that is ```).
std::vector<Block> find_blocks(const std::string& readme) {
  std::vector<Block> blocks;
  size_t pos = 0;
  while ((pos = readme.find(kBegin, pos)) != std::string::npos) {
    size_t end_marker = readme.find(kEnd, pos);
    if (end_marker == std::string::npos)
      throw Failure{"an " + std::string(kBegin) + " has no matching " + kEnd};
    size_t open = readme.find("\n```", pos);
    if (open == std::string::npos || open > end_marker)
      throw Failure{"a quoted-output block has no opening ``` fence before its end marker"};
    size_t content_begin = readme.find('\n', open + 1);
    if (content_begin == std::string::npos) throw Failure{"README ends inside a block"};
    content_begin += 1;
    // The closing fence is "```" alone on its line; an empty block closes at once.
    size_t close = readme.compare(content_begin, 4, "```\n") == 0
                       ? content_begin
                       : readme.find("\n```\n", content_begin - 1);
    if (close == std::string::npos || close > end_marker)
      throw Failure{"a quoted-output block has no closing ``` fence before its end marker"};
    size_t content_end = close == content_begin ? close : close + 1;
    size_t first_line =
        1 + static_cast<size_t>(std::count(
                readme.begin(), readme.begin() + static_cast<long>(content_begin), '\n'));
    blocks.push_back({content_begin, content_end, first_line,
                      readme.substr(content_begin, content_end - content_begin)});
    pos = end_marker + std::string(kEnd).size();
  }
  if (blocks.empty()) throw Failure{"no " + std::string(kBegin) + " blocks found"};
  return blocks;
}

std::string run(const std::string& binary) {
  // Single quotes keep the shell from interpreting the path; a quote inside is spliced.
  std::string quoted = "'";
  for (char c : binary) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  FILE* pipe = popen(quoted.c_str(), "r");
  if (!pipe) throw Failure{"cannot start " + binary};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Failure{binary + " did not exit with status 0 (its output so far:\n" + out + ")"};
  return out;
}

// A line diff from the longest common subsequence, printed as unified-style hunks with
// two lines of context; want_line[i] is the README line of quoted line i. Quadratic,
// which is fine for lesson-sized outputs.
void print_diff(const std::vector<std::string>& want, const std::vector<size_t>& want_line,
                const std::vector<std::string>& got) {
  size_t n = want.size(), m = got.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] =
          want[i] == got[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  struct Edit {
    char kind;  // ' ' same, '-' only in the README, '+' only in the output
    size_t i, j;
  };
  std::vector<Edit> edits;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && want[i] == got[j])
      edits.push_back({' ', i++, j++});
    else if (j < m && (i == n || lcs[i][j + 1] > lcs[i + 1][j]))
      edits.push_back({'+', i, j++});
    else
      edits.push_back({'-', i++, j});
  }
  const size_t context = 2;
  size_t k = 0;
  while (k < edits.size()) {
    if (edits[k].kind == ' ') {
      ++k;
      continue;
    }
    // A hunk runs from `context` lines before its first change to `context` lines after
    // its last; changes closer than 2 * context lines apart share one hunk.
    size_t start = k >= context ? k - context : 0;
    size_t last_change = k;
    for (size_t e = k; e < edits.size() && e - last_change <= 2 * context; ++e)
      if (edits[e].kind != ' ') last_change = e;
    size_t end = std::min(edits.size(), last_change + context + 1);
    size_t i0 = edits[start].i;
    std::cout << "@@ README line "
              << (i0 < n  ? want_line[i0]
                  : n > 0 ? want_line[n - 1] + 1
                          : 0)
              << ", output line " << edits[start].j + 1 << " @@\n";
    for (size_t e = start; e < end; ++e) {
      const Edit& d = edits[e];
      std::cout << d.kind << (d.kind == '+' ? got[d.j] : want[d.i]) << "\n";
    }
    k = end;
  }
}

// The relative tolerance the README declares for its numbers, or 0 (exact).
double declared_tolerance(const std::string& readme) {
  size_t at = readme.find(kTolerance);
  if (at == std::string::npos) return 0;
  double tol = std::strtod(readme.c_str() + at + std::string(kTolerance).size(), nullptr);
  if (!(tol > 0 && tol < 1)) throw Failure{"output:tolerance must be a fraction in (0, 1)"};
  return tol;
}

// Lines equal except for numbers, each within `tol` of the quoted one (relative).
bool equal_within(const std::string& want, const std::string& got, double tol) {
  static const std::regex number(R"(-?\d+(\.\d+)?([eE][-+]?\d+)?)");
  std::vector<std::string> w = split_lines(want), g = split_lines(got);
  if (w.size() != g.size()) return false;
  for (size_t l = 0; l < w.size(); ++l) {
    // The text around the numbers must agree exactly...
    if (std::regex_replace(w[l], number, "#") != std::regex_replace(g[l], number, "#"))
      return false;
    // ...and the numbers, taken in order, closely.
    std::sregex_iterator a(w[l].begin(), w[l].end(), number), b(g[l].begin(), g[l].end(), number);
    for (std::sregex_iterator end; a != end && b != end; ++a, ++b) {
      double x = std::stod(a->str()), y = std::stod(b->str());
      if (std::abs(x - y) > tol * std::max(std::abs(x), std::abs(y))) return false;
    }
  }
  return true;
}

int check(const std::string& binary, const std::string& readme_path) {
  std::string readme = read_file(readme_path);
  std::string want;
  std::vector<size_t> want_line;
  for (const Block& b : find_blocks(readme)) {
    want += b.content;
    for (size_t l = 0; l < split_lines(b.content).size(); ++l)
      want_line.push_back(b.first_line + l);
  }
  std::string got = run(binary);
  if (want == got) return 0;
  double tol = declared_tolerance(readme);
  if (tol > 0 && equal_within(want, got, tol)) {
    std::cout << "equal within the declared tolerance (" << tol << " relative)\n";
    return 0;
  }
  std::cout << "The output of " << binary << "\ndiffers from the blocks quoted in " << readme_path
            << "\n--- README (quoted output)\n+++ program (actual stdout)\n";
  print_diff(split_lines(want), want_line, split_lines(got));
  if (split_lines(want) == split_lines(got))
    std::cout << "(they differ only in the final newline)\n";
  std::cout << "Fix the text or the program; `check_lesson_output BINARY README --update` "
               "copies the program's output into the README.\n";
  return 1;
}

int update(const std::string& binary, const std::string& readme_path) {
  std::string readme = read_file(readme_path);
  std::vector<Block> blocks = find_blocks(readme);
  std::vector<std::string> got = split_lines(run(binary));
  std::vector<size_t> starts = {0};
  for (size_t b = 1; b < blocks.size(); ++b) {
    std::vector<std::string> old = split_lines(blocks[b].content);
    if (old.empty()) throw Failure{"block " + std::to_string(b + 1) + " is empty; fill it by hand"};
    auto it = std::find(got.begin() + static_cast<long>(starts.back()) + 1, got.end(), old[0]);
    if (it == got.end())
      throw Failure{"block " + std::to_string(b + 1) + " starts with \"" + old[0] +
                    "\", which the output no longer prints; update it by hand"};
    starts.push_back(static_cast<size_t>(it - got.begin()));
  }
  starts.push_back(got.size());
  // Rewrite from the last block back, so earlier offsets stay valid.
  for (size_t b = blocks.size(); b-- > 0;) {
    std::string text;
    for (size_t l = starts[b]; l < starts[b + 1]; ++l) text += got[l] + "\n";
    readme.replace(blocks[b].content_begin, blocks[b].content_end - blocks[b].content_begin, text);
  }
  std::ofstream(readme_path, std::ios::binary) << readme;
  std::cout << "updated " << blocks.size() << " block(s) in " << readme_path << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool do_update = argc == 4 && std::string(argv[3]) == "--update";
  if (argc != 3 && !do_update) {
    std::cerr << "usage: check_lesson_output BINARY README.md [--update]\n";
    return 2;
  }
  try {
    return do_update ? update(argv[1], argv[2]) : check(argv[1], argv[2]);
  } catch (const Failure& f) {
    std::cerr << "check_lesson_output: " << f.message << "\n";
    return 2;
  }
}
