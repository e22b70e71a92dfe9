// tests/viewer/app/app_test.cpp — tier 2: the viewer's panels driven through a bare ImGui
// context (no window, no GL, no platform backend): the display size, font atlas and mouse
// are set by hand, NewFrame/Render run, and the test reads what the panels recorded.
#include <gtest/gtest.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <glass/glass.h>

#include "viewer/app/app.h"
#include "viewer/app/fonts.h"
#include "viewer/app/imgui_harness.h"
#include "viewer/demos.h"
#include "viewer/recorders.h"
#include "viewer/stride_map.h"

namespace glass::viz::app {
namespace {

TEST(StrideLab, AddressFormulaMatchesTheStrides) {
  StrideLab lab;
  lab.reset(arange(12).view({4, 3}), "a");
  lab.transpose(0, 1);  // (3, 4), strides (1, 3)
  EXPECT_EQ(lab.storage_index({1, 2}), 1 * 1 + 2 * 3);
  EXPECT_EQ(lab.formula({1, 2}), "0 + 1*1 + 2*3 = 7");
  EXPECT_NE(lab.contiguous_note(), "");
  EXPECT_TRUE(lab.view().is_alias_of(lab.base()));
  lab.slice(1, 0, 4, 2);  // (3, 2), strides (1, 6)
  EXPECT_EQ(lab.storage_index({2, 1}), 2 * 1 + 1 * 6);
  lab.undo();
  lab.undo();
  EXPECT_TRUE(lab.contiguous_note().empty());
  lab.select(0, 1);  // row 1: offset 3
  EXPECT_EQ(lab.storage_index({2}), 5);
  EXPECT_EQ(lab.expression(), "a.select(0, 1)");
}

TEST(StrideLab, ExpandReadsOneCellManyTimes) {
  StrideLab lab;
  lab.reset(arange(3).view({1, 3}), "b");
  lab.expand({4, 3});
  std::vector<int64_t> reads = lab.reads_per_cell();
  EXPECT_EQ(reads, (std::vector<int64_t>{4, 4, 4}));
}

TEST(StrideLab, BadViewNamesTheProblem) {
  StrideLab lab;
  lab.reset(arange(12).view({4, 3}), "a");
  EXPECT_THROW(lab.transpose(0, 5), Error);
  EXPECT_THROW(lab.storage_index({1}), Error);
  EXPECT_EQ(lab.expression(), "a");  // unchanged
}

TEST(StridePanel, HoveringTransposedCellReportsItsStorageIndex) {
  ImGuiHarness h;
  App app;
  app.stride.reset(arange(12).view({4, 3}), "a");
  app.stride.transpose(0, 1);  // a 3x4 view
  h.stride_only(app);          // lays the grid out; nothing hovered
  EXPECT_EQ(app.stride.hovered_storage, -1);
  ASSERT_EQ(app.stride.cell_rects.size(), 12u);
  const size_t k = 1 * 4 + 2;  // cell (1, 2), row-major over the 3x4 grid
  ASSERT_EQ(app.stride.cell_index[k], (std::vector<int64_t>{1, 2}));
  const CellRect r = app.stride.cell_rects[k];
  h.stride_only(app, (r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2);
  const Tensor& v = app.stride.view();
  ASSERT_EQ(app.stride.hovered, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(app.stride.hovered_storage,
            v.storage_offset() + 1 * v.strides()[0] + 2 * v.strides()[1]);
  EXPECT_EQ(app.stride.hovered_storage, 7);
}

TEST(StrideLab, TwoViewsShowWhereTheyAlias) {
  StrideLab lab;
  Tensor x = arange(12).view({3, 4});
  lab.reset(x, "x");
  lab.select(0, 1);                        // A: row 1, storage cells 4..7
  EXPECT_THROW(lab.set_active(1), Error);  // no B before compare
  lab.compare(true);
  lab.set_active(1);
  lab.apply("select(1, 2)");  // B: column 2, cells 2, 6, 10
  EXPECT_EQ(lab.expression(0), "x.select(0, 1)");
  EXPECT_EQ(lab.expression(1), "x.select(1, 2)");
  EXPECT_EQ(lab.shared_cells(), (std::vector<int64_t>{6}));
  lab.undo();  // B back to x itself: it shares all of row 1
  EXPECT_EQ(lab.shared_cells(), (std::vector<int64_t>{4, 5, 6, 7}));
  lab.apply("select(0, 2)");  // B: row 2, disjoint from row 1
  EXPECT_TRUE(lab.shared_cells().empty());
  EXPECT_THROW(lab.apply("select(0, 1).bogus()"), Error);  // all or nothing
  EXPECT_EQ(lab.expression(1), "x.select(0, 2)");
}

TEST(StrideLab, AWriteThroughOneViewIsReadThroughTheOther) {
  StrideLab lab;
  Tensor x = arange(12).view({3, 4});
  lab.reset(x, "x");
  lab.select(0, 1);  // A: row 1
  lab.compare(true);
  lab.set_active(1);
  lab.select(1, 2);  // B: column 2
  lab.write_through(0);
  // B's element 1 is x[1][2], storage cell 6, which A negated; its others are untouched.
  std::vector<double> b = values_of(lab.view(1));
  EXPECT_EQ(b, (std::vector<double>{2, -6, 10}));
  EXPECT_EQ(values_of(lab.view(0)), (std::vector<double>{-4, -5, -6, -7}));
  EXPECT_TRUE(lab.view(0).is_alias_of(lab.view(1)));
  // The lab wrote to its own copy of the storage: the tensor it was opened on is intact.
  EXPECT_EQ(values_of(x.select(0, 1)), (std::vector<double>{4, 5, 6, 7}));
  EXPECT_FALSE(lab.base().is_alias_of(x));
  EXPECT_EQ(lab.base().strides(), x.strides());
}

TEST(StrideLab, RefusesViewsTooLargeToShowAndStaysAsItWas) {
  StrideLab lab;
  lab.reset(arange(12).view({3, 4}), "x");
  lab.transpose(0, 1);
  // A stride-0 view of twelve billion elements over twelve cells: refused, not allocated.
  EXPECT_THROW(lab.apply("unsqueeze(0).expand({1000000000, 4, 3})"), Error);
  EXPECT_EQ(lab.expression(), "x.transpose(0, 1)");
  EXPECT_EQ(lab.reads_per_cell(), std::vector<int64_t>(12, 1));
  EXPECT_THROW(lab.reset(zeros({5000, 1000}), "big"), Error);
  EXPECT_EQ(lab.expression(), "x.transpose(0, 1)");
}

TEST(StridePanel, HoveringACellOfOneViewLightsItsAliasInTheOther) {
  ImGuiHarness h;
  App app;
  app.stride.reset(arange(12).view({3, 4}), "x");
  app.stride.select(0, 1);  // A: row 1 (4 cells)
  app.stride.compare(true);
  app.stride.set_active(1);
  app.stride.select(1, 2);  // B: column 2 (3 cells)
  h.stride_only(app);
  ASSERT_EQ(app.stride.cell_rects.size(), 7u);
  // B's element [1] is the 4 + 1 = 5th cell drawn (A's 4 first); it reads cell 6.
  const size_t k = 4 + 1;
  ASSERT_EQ(app.stride.cell_view[k], 1);
  ASSERT_EQ(app.stride.cell_index[k], (std::vector<int64_t>{1}));
  const CellRect r = app.stride.cell_rects[k];
  h.stride_only(app, (r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2);
  EXPECT_EQ(app.stride.hovered_view, 1);
  EXPECT_EQ(app.stride.hovered_storage, 6);
  // Lit: A's element [2] (x[1][2]) and the hovered cell itself.
  ASSERT_EQ(app.stride.lit_cells.size(), 2u);
  EXPECT_EQ(app.stride.cell_view[app.stride.lit_cells[0]], 0);
  EXPECT_EQ(app.stride.cell_index[app.stride.lit_cells[0]], (std::vector<int64_t>{2}));
  EXPECT_EQ(app.stride.lit_cells[1], k);
}

TEST(GraphPanel, ClickingANodeSelectsIt) {
  ImGuiHarness h;
  App app;
  app.open_demo("tanh_mlp");
  h.frame(app);
  ASSERT_FALSE(app.graph.node_rects.empty());
  EXPECT_EQ(app.graph.node_rects.size(), app.graph.drawn.nodes.size());
  h.frame(app);  // after the fit: boxes where they will stay
  auto [id, rect] = app.graph.node_rects.back();
  h.frame(app, rect.cx(), rect.cy(), true);
  h.frame(app, rect.cx(), rect.cy(), false);
  EXPECT_EQ(app.graph.selected, id);
  ASSERT_NE(app.selected_node(), nullptr);
  EXPECT_EQ(app.selected_node()->id, id);
  // Clicking empty canvas clears it: its bottom-left corner, which no box covers.
  const float x = app.graph.canvas.x0 + 3, y = app.graph.canvas.y1 - 3;
  for (const auto& [node, r] : app.graph.node_rects) ASSERT_FALSE(r.contains(x, y)) << node;
  h.frame(app, x, y, true);
  h.frame(app, x, y, false);
  EXPECT_EQ(app.graph.selected, -1);
}

TEST(GraphPanel, NodeLabelsFitTheBoxesGraphvizSizedForThem) {
  // Graphviz measured each label in DejaVu Sans (to_dot's fontname); drawn
  // in the same face, no line needs cutting, at whatever zoom the fit chose.
  ImGuiHarness h;
  if (!h.label_font_loaded) GTEST_SKIP() << kLabelFontFile << " missing (fonts-dejavu-core)";
  EXPECT_NE(label_font(), ImGui::GetIO().Fonts->Fonts[0]);
  App app;
  for (const char* demo : {"tanh_mlp", "mlp", "if_else"}) {
    SCOPED_TRACE(demo);
    app.open_demo(demo);
    h.frame(app);
    h.frame(app);  // after the fit
    ASSERT_FALSE(app.graph.node_rects.empty());
    EXPECT_EQ(app.graph.labels_shortened, 0);
  }
}

TEST(GraphPanel, WithoutTheLabelFontLongLabelsAreShortenedNotSpilled) {
  ImGuiHarness h("/nonexistent/font.ttf");
  EXPECT_FALSE(h.label_font_loaded);
  App app;
  app.open_demo("mlp");
  h.frame(app);
  h.frame(app);
  EXPECT_EQ(label_font(), ImGui::GetFont());  // the default font stands in
  // ImGui's monospaced default is wider than DejaVu Sans: some lines are cut with "...".
  EXPECT_GT(app.graph.labels_shortened, 0);
}

TEST(TourPanel, ListsTheDemosInLessonOrderAndClickingOneOpensIt) {
  std::vector<std::string> tour = App::tour();
  ASSERT_EQ(tour.size(), demos().size());
  for (size_t i = 1; i < tour.size(); ++i)  // descriptions start "lesson NN:"
    EXPECT_LE(find_demo(tour[i - 1]).description.substr(0, 9),
              find_demo(tour[i]).description.substr(0, 9));
  EXPECT_EQ(find_demo(tour.front()).description.substr(0, 9), "lesson 01");

  ImGuiHarness h;
  App app;
  app.open_demo("mlp");
  h.frame(app);
  h.frame(app);
  auto entry = std::find_if(app.tour_rects.begin(), app.tour_rects.end(),
                            [](const auto& e) { return e.first == "loop"; });
  ASSERT_NE(entry, app.tour_rects.end());
  h.frame(app, entry->second.cx(), entry->second.cy(), true);
  h.frame(app, entry->second.cx(), entry->second.cy(), false);
  EXPECT_EQ(app.current_demo, "loop");
  EXPECT_NE(app.title.find("loop"), std::string::npos);
  for (const GraphNode& n : app.graph.snapshot.nodes)  // the loop's graph: no Linear, no addmm
    EXPECT_EQ(n.name.find("Addmm"), std::string::npos);
}

TEST(GraphPanel, LayoutIsCachedOnStructure) {
  ImGuiHarness h;
  App app;
  app.open_demo("tanh_mlp");
  h.frame(app);
  h.frame(app);
  EXPECT_EQ(app.graph.layouts_computed, 1);
  Snapshot same = app.graph.snapshot;  // new gradient values, same structure
  for (GraphNode& n : same.nodes)
    if (n.grad) n.grad->norm *= 2;
  app.set_graph(same);
  h.frame(app);
  EXPECT_EQ(app.graph.layouts_computed, 1);
  app.open_demo("broadcast");  // another graph: laid out again
  h.frame(app);
  EXPECT_EQ(app.graph.layouts_computed, 2);
}

TEST(GradientPanel, ShowsTheNormsTheModelComputed) {
  ImGuiHarness h;
  App app;
  app.open_demo("mlp");
  h.frame(app);
  // The same demo run again, independently: its parameters' gradient norms.
  manual_seed(0);
  DemoRun run = find_demo("mlp").build();
  run.forward().backward();
  auto params = run.module->named_parameters();
  ASSERT_EQ(app.drawn_norms.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(app.drawn_norms[i].name, params[i].first);
    Tensor g = params[i].second.grad().to(ScalarType::Float64);
    double norm = std::sqrt((g * g).sum().item<double>());
    EXPECT_NEAR(app.drawn_norms[i].norm, norm, 1e-6 * norm) << params[i].first;
    EXPECT_GT(norm, 0);
  }
}

TEST(TrainingPanel, PlayingStepsOncePerFrameAndKeepsTheLayout) {
  if (!std::filesystem::is_directory("/usr/share/datasets/fashion-mnist"))
    GTEST_SKIP() << "needs Debian's dataset-fashion-mnist";
  ImGuiHarness h;
  App app;
  app.open_training({.batch_size = 32, .train_limit = 1024, .eval_size = 64});
  ASSERT_EQ(app.trainer->steps(), 1);
  app.playing = true;
  for (int i = 0; i < 3; ++i) h.frame(app);
  EXPECT_EQ(app.trainer->steps(), 4);
  EXPECT_EQ(app.trainer->losses().size(), 4u);
  EXPECT_EQ(app.graph.layouts_computed, 1);  // rebuilt every step, laid out once
  EXPECT_EQ(app.grad_history.size(), 4u);
  // The gradient panel drew the norms of the gradients the last step used.
  auto params = app.trainer->parameters();
  ASSERT_EQ(app.drawn_norms.size(), params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor g = params[i].second.grad().to(ScalarType::Float64);
    EXPECT_NEAR(app.drawn_norms[i].norm, std::sqrt((g * g).sum().item<double>()), 1e-9)
        << params[i].first;
  }
  app.playing = false;
  h.frame(app);
  EXPECT_EQ(app.trainer->steps(), 4);  // paused
  // The loss stayed selected through the steps, with its value for the inspector.
  ASSERT_NE(app.selected_node(), nullptr);
  EXPECT_TRUE(app.selected_node()->is_root);
  EXPECT_EQ(app.tensor_for(*app.selected_node()).item<double>(), app.trainer->losses().back());
}

// The first screen, read from the layout and the zoom rather than from pixels (Note [The
// first screen], graph_panel.cpp): a label's pixel height is kLabelPoints × zoom.

// The drawn box of node `id` on the last frame.
Rect box_of(const App& app, int id) {
  for (const auto& [node, r] : app.graph.node_rects)
    if (node == id) return r;
  ADD_FAILURE() << "node " << id << " was not drawn";
  return {};
}

TEST(FirstScreen, TheDefaultViewHasLegibleLabelsAndTheLossSelected) {
  ImGuiHarness h;  // 1400x900: glass-viewer's default window
  App app;
  app.open_demo(App::kDefaultDemo);  // lesson 06's MLP, 11 nodes collapsed
  h.frame(app);
  h.frame(app);
  const GraphView& g = app.graph;
  // Every label at least ImGui's own text size (13 px); a whole-graph fit drew them at
  // 10 pt × 78% = 7.8 px.
  EXPECT_GE(g.smallest_label_px, kDefaultLabelPx);
  EXPECT_FLOAT_EQ(g.smallest_label_px, kLabelPoints * g.zoom);
  if (h.label_font_loaded) {
    EXPECT_EQ(g.labels_shortened, 0);
  }
  // At that size the chain is taller than the panel: it scrolls rather than shrinks, and
  // top-down shows more of it than left-right would (a single row 2.3 panels wide).
  const float canvas_h = g.canvas.y1 - g.canvas.y0, canvas_w = g.canvas.x1 - g.canvas.x0;
  EXPECT_GT(static_cast<float>(g.layout.height) * g.zoom, canvas_h);
  EXPECT_EQ(g.direction, RankDir::TopDown);
  EXPECT_GT(static_cast<float>(g.left_right.width) * g.zoom, 2 * canvas_w);
  // The loss is selected and on screen, and the inspector has its value to show.
  const GraphNode* n = app.selected_node();
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(n->is_root);
  EXPECT_EQ(n->label, "loss");
  const Rect r = box_of(app, n->id);
  EXPECT_TRUE(g.canvas.contains(r.x0, r.y0) && g.canvas.contains(r.x1 - 1, r.y1 - 1));
  Tensor loss = app.tensor_for(*n);
  ASSERT_TRUE(loss.defined());
  EXPECT_EQ(loss.numel(), 1);
  // The graph runs the panel's full height: from above its top edge to its bottom margin.
  float top = g.canvas.y1, bottom = g.canvas.y0;
  for (const auto& [id, box] : g.node_rects) {
    top = std::min(top, box.y0);
    bottom = std::max(bottom, box.y1);
  }
  EXPECT_LT(top, g.canvas.y0);
  EXPECT_GT(bottom, g.canvas.y1 - 20);
}

TEST(FirstScreen, TheDirectionFollowsThePanelsShape) {
  ImGuiHarness h;
  App app;
  app.panels = Panels::GraphOnly;  // the graph panel fills the display
  app.open_demo("tanh_mlp");       // taller than wide top-down, wider than tall left-right
  ImGui::GetIO().DisplaySize = ImVec2(1400, 400);
  h.frame(app);
  EXPECT_EQ(app.graph.direction, RankDir::LeftRight);
  EXPECT_GE(app.graph.smallest_label_px, kDefaultLabelPx);
  ImGui::GetIO().DisplaySize = ImVec2(500, 1200);
  app.graph.fit_pending = true;
  h.frame(app);
  EXPECT_EQ(app.graph.direction, RankDir::TopDown);
  EXPECT_EQ(app.graph.layouts_computed, 1);  // both directions were laid out once
  // A direction the user picks is kept, whatever the panel's shape.
  app.graph.auto_direction = false;
  app.graph.direction = RankDir::LeftRight;
  app.graph.fit_pending = true;
  h.frame(app);
  EXPECT_EQ(app.graph.direction, RankDir::LeftRight);
  EXPECT_GE(app.graph.smallest_label_px, kDefaultLabelPx);
}

TEST(FirstScreen, AGraphTooBigScrollsInsteadOfShrinking) {
  ImGuiHarness h;
  App app;
  app.open_demo(App::kDefaultDemo);
  app.graph.collapse = false;  // all twenty nodes
  app.set_graph(app.graph.snapshot);
  h.frame(app);
  h.frame(app);
  const float floor = kDefaultLabelPx / kLabelPoints;
  EXPECT_FLOAT_EQ(app.graph.zoom, floor);
  const Rect c = app.graph.canvas;
  const float pan_x = app.graph.pan_x, pan_y = app.graph.pan_y;
  h.input(app, {.x = c.cx(), .y = c.cy(), .wheel = 1});  // the wheel scrolls up
  EXPECT_FLOAT_EQ(app.graph.zoom, floor);
  EXPECT_FLOAT_EQ(app.graph.pan_y, pan_y + 60);
  h.input(app, {.x = c.cx(), .y = c.cy(), .wheel = 1, .shift = true});  // sideways
  EXPECT_FLOAT_EQ(app.graph.pan_x, std::min(pan_x + 60, 10.f));
  h.input(app, {.x = c.cx(), .y = c.cy(), .wheel = -1, .ctrl = true});  // Ctrl: zoom out
  EXPECT_LT(app.graph.zoom, floor);  // the user may; the fit may not
}

TEST(FirstScreen, LabelSizeFollowsCtrlPlusMinusAndTheContentScale) {
  ImGuiHarness h;
  App app;
  app.open_demo("tanh_mlp");
  h.frame(app);
  h.frame(app);
  const float fitted = app.graph.smallest_label_px;
  h.input(app, {.ctrl = true, .key = '='});  // Ctrl + (GLFW_KEY_EQUAL)
  EXPECT_FLOAT_EQ(app.graph.label_px, kDefaultLabelPx + 1);
  EXPECT_NEAR(app.graph.smallest_label_px, fitted * (kDefaultLabelPx + 1) / kDefaultLabelPx, 1e-3);
  h.input(app, {.ctrl = true, .key = '-'});
  h.input(app, {.ctrl = true, .key = '-'});
  EXPECT_FLOAT_EQ(app.graph.label_px, kDefaultLabelPx - 1);
  h.input(app, {.key = '='});  // without Ctrl: nothing
  EXPECT_FLOAT_EQ(app.graph.label_px, kDefaultLabelPx - 1);
  h.input(app, {.ctrl = true, .key = '0'});  // the default size, fitted again
  EXPECT_FLOAT_EQ(app.graph.label_px, kDefaultLabelPx);
  EXPECT_FLOAT_EQ(app.graph.smallest_label_px, fitted);
  // A 200% display (GLFW's content scale 2): twice the legible floor, at the default size.
  app.open_demo(App::kDefaultDemo);
  app.graph.content_scale = 2;
  h.frame(app);
  h.frame(app);
  EXPECT_GE(app.graph.smallest_label_px, 2 * kDefaultLabelPx);
}

TEST(App, UnknownDemoListsTheValidOnes) {
  App app;
  try {
    app.open_demo("nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown demo 'nope'"), std::string::npos);
  }
}

TEST(App, InspectorShowsASelectedLeaf) {
  ImGuiHarness h;
  App app;
  app.open_demo("tanh_mlp");
  const GraphNode* w = app.graph.drawn.find("w");
  ASSERT_NE(w, nullptr);
  app.graph.selected = w->id;
  h.frame(app);
  EXPECT_TRUE(app.tensor_for(*w).defined());
}

}  // namespace
}  // namespace glass::viz::app
