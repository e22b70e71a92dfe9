// tests/viewer/graphviz_test.cpp — rendering through libgvc: SVG and PNG, byte-identical to
// the `dot` command (Debian's graphviz package; the comparison is skipped without it),
// errors that carry Graphviz's message, and the one-mutex rule under concurrent calls.
#include "viewer/graphviz.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/ops/factories.h"
#include "viewer/demos.h"
#include "viewer/dot.h"
#include "viewer/modules.h"
#include "viewer/recorders.h"
#include "viewer/snapshot.h"

namespace glass::viz {
namespace {

namespace fs = std::filesystem;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A scratch directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("glass_viewer_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string example_dot() {
  Tensor x = tensor({1., 2., -1.}).requires_grad_();
  Tensor w = tensor({0.5, -0.25, 1.}).requires_grad_();
  Tensor L = (x * w).tanh().sum();
  return to_dot(snapshot_with_gradients(L, {.names = {{"x", x}, {"w", w}}}), {.show_saved = true});
}

TEST(Render, SvgHasOneGroupPerNode) {
  Snapshot s = capture(find_demo("tanh_mlp"));
  std::string svg = render(to_dot(s), Format::Svg);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_EQ(count(svg, "<g id=\"node"), s.nodes.size());
  EXPECT_EQ(count(svg, "class=\"node\""), s.nodes.size());
  EXPECT_EQ(count(svg, "class=\"edge\""), s.edges.size());
  EXPECT_NE(svg.find(">TanhBackward0<"), std::string::npos);
  Snapshot folded = collapse_modules(capture(find_demo("mlp")));
  EXPECT_EQ(count(render(to_dot(folded), Format::Svg), "class=\"node\""), folded.nodes.size());
}

TEST(Render, PngIsAPng) {
  std::string png = render(example_dot(), Format::Png);
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST(Render, ByteCompatibleWithTheDotCommand) {
  std::string dot_cli = GLASS_DOT_EXECUTABLE;
  if (dot_cli.empty() || !fs::exists(dot_cli))
    GTEST_SKIP() << "the dot command is not installed (apt install graphviz)";
  TempDir dir;
  std::string dot = example_dot();
  std::ofstream(dir.path / "g.dot", std::ios::binary) << dot;
  for (Format f : {Format::Svg, Format::Png}) {
    std::string ext = to_string(f);
    fs::path cli_out = dir.path / ("cli." + ext);
    std::string command = "\"" + dot_cli + "\" -T" + ext + " \"" + (dir.path / "g.dot").string() +
                          "\" -o \"" + cli_out.string() + "\"";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    std::string ours = render(dot, f);
    EXPECT_EQ(ours.size(), fs::file_size(cli_out)) << ext;
    EXPECT_TRUE(ours == read_file(cli_out)) << ext << ": libgvc's bytes differ from dot's";
  }
}

TEST(Render, WritesTheFileAtomically) {
  TempDir dir;
  std::string dot = example_dot();
  fs::path out = dir.path / "graph.svg";
  render(dot, Format::Svg, out.string());
  EXPECT_EQ(read_file(out), render(dot, Format::Svg));
  EXPECT_THROW(render(dot, Format::Svg, (dir.path / "no/such/dir/graph.svg").string()), Error);
}

TEST(Render, BadInputNamesWhatWasWrong) {
  try {
    render("digraph { a -> ; }", Format::Svg);
    FAIL() << "expected glass::Error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("viz::render(): Graphviz could not parse the DOT text"), std::string::npos)
        << what;
    EXPECT_NE(what.find("syntax error"), std::string::npos) << what;
  }
  // The parser recovers: the next call works.
  EXPECT_NE(render("digraph { a -> b; }", Format::Svg).find("<svg"), std::string::npos);
  try {
    parse_format("jpeg");
    FAIL() << "expected glass::Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown output format 'jpeg'; valid formats: svg, png");
  }
  EXPECT_EQ(parse_format("png"), Format::Png);
  EXPECT_EQ(parse_format("svg"), Format::Svg);
}

TEST(Render, ConcurrentCallsAreSerialisedAndAgree) {
  std::string dot = example_dot();
  std::string expected = render(dot, Format::Svg);
  std::vector<std::string> results(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 5; ++k) results[i] = render(dot, Format::Svg);
    });
  for (std::thread& t : threads) t.join();
  for (const std::string& r : results) EXPECT_TRUE(r == expected);
}

}  // namespace
}  // namespace glass::viz
