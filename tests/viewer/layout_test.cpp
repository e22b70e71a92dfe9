// tests/viewer/layout_test.cpp — the Graphviz layout read back through viz::layout().
//
// What must hold of any correct readout, checked against the snapshot it was drawn from:
// every node is there once, inside the drawing; an op's inputs lie above it (dot ranks
// edges top to bottom, and to_dot writes them input -> op); each edge's spline starts on
// its tail's box and ends on its head's box (arrow tips included); cluster boxes contain
// their modules' nodes. Geometry is compared with a tolerance of 1.5 points.
#include "viewer/layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "core/error.h"
#include "core/ops/factories.h"
#include "viewer/demos.h"
#include "viewer/dot.h"
#include "viewer/modules.h"
#include "viewer/snapshot.h"

namespace glass::viz {
namespace {

constexpr double kTolerance = 1.5;  // points

// Distance from p to the boundary of the node's box (0 on it).
double distance_to_box(const Point& p, const NodeBox& b) {
  double dx = std::abs(p.x - b.center.x) - b.width / 2;
  double dy = std::abs(p.y - b.center.y) - b.height / 2;
  if (dx > 0 || dy > 0) return std::hypot(std::max(dx, 0.0), std::max(dy, 0.0));
  return -std::max(dx, dy);  // inside: the distance to the nearest side
}

void check_layout(const Snapshot& s, const Layout& l, bool arrows_at_head) {
  ASSERT_EQ(l.nodes.size(), s.nodes.size());
  std::set<int> ids;
  for (const NodeBox& n : l.nodes) {
    EXPECT_EQ(n.name, "n" + std::to_string(n.id));
    ids.insert(n.id);
    EXPECT_GT(n.width, 0);
    EXPECT_GT(n.height, 0);
    EXPECT_GE(n.center.x - n.width / 2, -kTolerance);
    EXPECT_LE(n.center.x + n.width / 2, l.width + kTolerance);
    EXPECT_GE(n.center.y - n.height / 2, -kTolerance);
    EXPECT_LE(n.center.y + n.height / 2, l.height + kTolerance);
  }
  EXPECT_EQ(ids.size(), s.nodes.size());
  ASSERT_EQ(l.edges.size(), s.edges.size());
  for (const EdgePath& e : l.edges) {
    const NodeBox* tail = l.node(e.from);
    const NodeBox* head = l.node(e.to);
    ASSERT_TRUE(tail && head);
    // Rank order: the input lies above the op that reads it (y grows downwards).
    EXPECT_LT(tail->center.y, head->center.y) << e.tail << " -> " << e.head;
    ASSERT_GE(e.points.size(), 4u);
    EXPECT_EQ((e.points.size() - 1) % 3, 0u);  // cubic Bezier: 3k + 1 control points
    EXPECT_EQ(e.end_arrow.has_value(), arrows_at_head);
    EXPECT_EQ(e.start_arrow.has_value(), !arrows_at_head);
    Point start = e.start_arrow.value_or(e.points.front());
    Point end = e.end_arrow.value_or(e.points.back());
    EXPECT_LE(distance_to_box(start, *tail), kTolerance) << e.tail << " -> " << e.head;
    EXPECT_LE(distance_to_box(end, *head), kTolerance) << e.tail << " -> " << e.head;
  }
}

TEST(Layout, BackwardGraphRanksInputsAboveAndEdgesTouchTheirBoxes) {
  Snapshot s = capture(find_demo("tanh_mlp"));
  // Forward arrowheads (input -> op) end at the head; backward ones (dir=back) at the tail.
  check_layout(s, layout(to_dot(s, {.direction = GraphKind::Forward})), true);
  check_layout(s, layout(to_dot(s)), false);
  // The root is the bottom node.
  Layout l = layout(to_dot(s));
  double lowest = 0;
  for (const NodeBox& n : l.nodes) lowest = std::max(lowest, n.center.y);
  EXPECT_DOUBLE_EQ(l.node(0)->center.y, lowest);
}

TEST(Layout, LeftToRightRanksInputsLeftOfTheOpsThatReadThem) {
  // The app lays a graph out this way for a panel wider than the graph is tall.
  Snapshot s = capture(find_demo("tanh_mlp"));
  Layout l = layout(to_dot(s, {.rankdir = RankDir::LeftRight}));
  Layout tb = layout(to_dot(s));
  ASSERT_EQ(l.nodes.size(), s.nodes.size());
  ASSERT_EQ(l.edges.size(), s.edges.size());
  for (const EdgePath& e : l.edges)
    EXPECT_LT(l.node(e.from)->center.x, l.node(e.to)->center.x) << e.tail << " -> " << e.head;
  double rightmost = 0;
  for (const NodeBox& n : l.nodes) rightmost = std::max(rightmost, n.center.x);
  EXPECT_DOUBLE_EQ(l.node(0)->center.x, rightmost);     // the root
  EXPECT_GT(l.width / l.height, tb.width / tb.height);  // a chain turned on its side
  for (const NodeBox& n : l.nodes) {                    // the same boxes: labels do not turn
    EXPECT_DOUBLE_EQ(n.width, tb.node(n.id)->width);
    EXPECT_DOUBLE_EQ(n.height, tb.node(n.id)->height);
  }
}

TEST(Layout, EveryDemoLaysOutCleanly) {
  for (const Demo& d : demos()) {
    SCOPED_TRACE(d.name);
    Snapshot s = capture(d);
    check_layout(s, layout(to_dot(s, {.show_saved = true})), false);
    Snapshot fwd = capture(d, {.forward = true});
    check_layout(fwd, layout(to_dot(fwd)), true);
  }
}

TEST(Layout, ModulesBecomeClusterBoxesAroundTheirNodes) {
  Snapshot s = capture(find_demo("mlp"));
  Layout l = layout(to_dot(s));
  ASSERT_EQ(l.clusters.size(), 3u);
  for (const ClusterBox& c : l.clusters) {
    EXPECT_EQ(c.label, c.name + ": Linear");
    for (const GraphNode& n : s.nodes) {
      if (n.module != c.name) continue;
      const NodeBox* b = l.node(n.id);
      EXPECT_GE(b->center.x - b->width / 2, c.min.x - kTolerance) << n.name;
      EXPECT_LE(b->center.x + b->width / 2, c.max.x + kTolerance) << n.name;
      EXPECT_GE(b->center.y - b->height / 2, c.min.y - kTolerance) << n.name;
      EXPECT_LE(b->center.y + b->height / 2, c.max.y + kTolerance) << n.name;
    }
  }
  // Folded, the three Linears stack top to bottom in forward order.
  Snapshot folded = collapse_modules(s);
  Layout f = layout(to_dot(folded));
  check_layout(folded, f, false);
  double y1 = f.node(folded.find("fc1")->id)->center.y;
  double y2 = f.node(folded.find("fc2")->id)->center.y;
  double y3 = f.node(folded.find("fc3")->id)->center.y;
  EXPECT_LT(y1, y2);
  EXPECT_LT(y2, y3);
}

TEST(Layout, ForeignDotAndErrors) {
  Layout l = layout("digraph { a -> b; a -> c; }");
  ASSERT_EQ(l.nodes.size(), 3u);
  EXPECT_EQ(l.node("a")->id, -1);
  EXPECT_LT(l.node("a")->center.y, l.node("b")->center.y);
  EXPECT_EQ(l.edges.size(), 2u);
  EXPECT_EQ(l.edges[0].from, -1);
  EXPECT_EQ(l.node("zzz"), nullptr);
  EXPECT_THROW(layout("graph {"), Error);
  EXPECT_THROW(layout(""), Error);
}

}  // namespace
}  // namespace glass::viz
