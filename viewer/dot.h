// viewer/dot.h — a Snapshot as Graphviz DOT text.
//
// to_dot() is a pure function of the snapshot and the options: the same graph always
// gives the same bytes, so figures diff cleanly and tests can compare text. Node i is
// named "n<i>" (layout.h maps positions back by that name); every edge is written
// `from -> to` in data-flow order (Note [Edge direction], snapshot.h), so inputs rank
// above the ops that read them and the root sits at the bottom, as torchviz draws it.
//
// How it looks: ops grey, leaves blue (named by parameter, "fc1.weight", when a module
// was given), the root green, a collapsed module orange with its type and path, and a
// node whose saved tensor fails its version check red. With gradient statistics, each
// edge is coloured from blue (smallest |g| in the graph) to red (largest) on a log scale
// by the gradient flowing back along it — the gradient its producer received (the sum
// over all its consumers, since autograd adds them before any hook sees one) — drawn
// dashed grey where it is zero and bold red where it holds NaN or Inf. An edge into a
// node that received no gradient (a value the root does not depend on) stays black.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "viewer/snapshot.h"

namespace glass::viz {

// Which way ranks run: TopDown puts inputs above the ops that read them and the root at
// the bottom (torchviz's picture, every figure's); LeftRight puts the root at the right,
// for a panel wider than it is tall. Only the layout changes, not the labels.
enum class RankDir : uint8_t { TopDown, LeftRight };

struct DotOptions {
  bool show_shapes = true;        // each node's output, "[64, 512] float32"
  bool show_saved = false;        // one line per saved tensor, a stale one flagged
  bool show_gradients = false;    // "|g| 1.2e-03" (and NaN/Inf counts) in each node
  bool color_by_gradient = true;  // edge colours from gradient norms, when recorded
  bool clusters = true;           // each module's nodes inside a labelled box
  // Which way arrowheads point: Forward = data (input -> op), Backward = gradients
  // (op -> input). Unset: the snapshot's own kind. Only the arrowheads change; the
  // layout is the same either way.
  std::optional<GraphKind> direction = std::nullopt;
  RankDir rankdir = RankDir::TopDown;
};

std::string to_dot(const Snapshot& s, const DotOptions& options = {});

// The text of node n's label in to_dot(s, options), lines separated by '\n': what
// Graphviz sizes the node's box for, so a renderer that draws the box itself (the app)
// writes the same lines into it.
std::string node_label(const Snapshot& s, const GraphNode& n, const DotOptions& options = {});

// "1.2e-03"-style text of a gradient norm for labels and tooltips ("nan", "inf").
std::string format_norm(double v);

}  // namespace glass::viz
