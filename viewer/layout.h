// viewer/layout.h — where Graphviz puts each node and edge, read back as plain numbers.
//
// The GUI draws the graph itself (ImGui's draw list) but lets Graphviz's dot engine decide
// the layout: ranks, crossing reduction, and edges as smooth splines that avoid nodes.
// layout() runs that engine on DOT text and copies the result out of Graphviz's structs
// (ND_coord, ND_width/height, ED_spl, GD_bb), so nothing of libgvc leaks to the caller.
//
// Units and axes: points (1/72 inch, Graphviz's unit; at 100% zoom one point is one pixel
// at 72 dpi), origin at the top-left corner of the drawing, y growing downwards — screen
// convention, converted once here from Graphviz's y-up. An edge is a cubic Bezier spline:
// points = p0, c1, c2, p1, c1, c2, p2, ... (3k + 1 points). Where the edge has an arrowhead,
// the spline stops at the arrow's base and start_arrow / end_arrow hold its tip, which
// touches the node's box.
//
// Laying out is the expensive step (bench/bench_viewer_layout.cpp: a 1,000-node graph);
// a caller redraws from one Layout until the graph's structure changes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace glass::viz {

struct Point {
  double x = 0, y = 0;
};

struct NodeBox {
  std::string name;  // the DOT node name
  int id = -1;       // i for a node named "n<i>" (to_dot's names: a snapshot node id), else -1
  Point center;
  double width = 0, height = 0;  // the box's full size
};

struct EdgePath {
  std::string tail, head;                       // DOT node names: `tail -> head`
  int from = -1, to = -1;                       // their ids, as in NodeBox::id
  std::vector<Point> points;                    // cubic Bezier control points
  std::optional<Point> start_arrow, end_arrow;  // arrow tips, where the edge has them
};

// A cluster (to_dot draws one per module): its name without "cluster_", label and box.
struct ClusterBox {
  std::string name, label;
  Point min, max;
};

struct Layout {
  double width = 0, height = 0;  // the drawing's bounding box
  std::vector<NodeBox> nodes;    // in DOT order
  std::vector<EdgePath> edges;   // grouped by tail, in DOT order within each
  std::vector<ClusterBox> clusters;

  const NodeBox* node(int id) const;
  const NodeBox* node(const std::string& name) const;
};

// Lays out `dot` with Graphviz's dot engine (implemented in graphviz.cpp, under the one
// Graphviz mutex). Unparseable DOT is a glass::Error with Graphviz's message.
Layout layout(const std::string& dot);

}  // namespace glass::viz
