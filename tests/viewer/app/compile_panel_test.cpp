// tests/viewer/app/compile_panel_test.cpp — tier 2: the Compiler panel through a bare ImGui
// context (imgui_harness.h): the traced and optimised graphs drawn with their nodes, a box
// per fused group that selects the group on a click, a graph break drawn, and a bad demo name
// reported in the panel with the old view kept.
#include <gtest/gtest.h>
#include <imgui.h>
#include <stdlib.h>

#include <string>

#include "viewer/app/app.h"
#include "viewer/app/imgui_harness.h"

namespace glass::viz::app {
namespace {

struct CompileApp {
  ImGuiHarness h;
  App app;
  explicit CompileApp(const std::string& demo) {
    ::setenv("GLASS_CACHE_DIR", GLASS_TEST_CACHE_DIR, 1);
    app.panels = Panels::CompileOnly;
    app.open_compile(demo);
    h.frame(app);  // ImGui sizes a new window's contents on its first frame: settle first
    h.frame(app);
  }
  const Rect* node(const std::string& name) const {
    for (const auto& [n, r] : app.compile.node_rects)
      if (n == name) return &r;
    return nullptr;
  }
};

TEST(CompilePanel, DrawsBothGraphsAndTheFusedGroup) {
  CompileApp a("passes");
  ASSERT_TRUE(a.app.compile.open());
  EXPECT_NE(a.node("t_n0"), nullptr);  // the traced cos
  EXPECT_NE(a.node("o_v0"), nullptr);  // an input of the optimised graph
  ASSERT_EQ(a.app.compile.group_rects.size(), 1u);
  // Every traced node is left of every optimised one (two boxes side by side).
  for (const auto& [name, r] : a.app.compile.node_rects)
    for (const auto& [other, q] : a.app.compile.node_rects)
      if (name.rfind("t_", 0) == 0 && other.rfind("o_", 0) == 0) {
        EXPECT_LT(r.x1, q.x0) << name << " and " << other;
      }
}

TEST(CompilePanel, ClickingAGroupSelectsIt) {
  CompileApp a("passes");
  a.app.compile.selected_group = -1;
  const Rect g = a.app.compile.group_rects.at(0).second;
  a.h.frame(a.app, g.x0 + 3, g.y0 + 3, /*down=*/true);
  a.h.frame(a.app, g.x0 + 3, g.y0 + 3, /*down=*/false);
  EXPECT_EQ(a.app.compile.selected_group, 0);
}

TEST(CompilePanel, AGraphBreakIsDrawnAndNothingIsFused) {
  CompileApp a("branch");
  EXPECT_NE(a.node("t_break"), nullptr);
  EXPECT_TRUE(a.app.compile.group_rects.empty());
}

TEST(CompilePanel, ABadDemoKeepsTheOldView) {
  CompileApp a("seed");
  EXPECT_THROW(a.app.open_compile("nope"), Error);
  ASSERT_TRUE(a.app.compile.view.has_value());
  EXPECT_EQ(a.app.compile.view->demo, "seed");
}

}  // namespace
}  // namespace glass::viz::app
