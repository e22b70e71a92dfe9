// viewer/dot.cpp — writing DOT: labels, colours, module clusters.
#include "viewer/dot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace glass::viz {

namespace {

// A DOT double-quoted string: backslash and quote escaped, newlines as DOT's centred "\n".
std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out + "\"";
}

std::string node_name(int id) { return "n" + std::to_string(id); }

std::string hex_color(double r, double g, double b) {
  char buf[8];
  auto byte = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 1.0) * 255)); };
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", byte(r), byte(g), byte(b));
  return buf;
}

// t in [0, 1] -> blue, through light grey, to red (a diverging map: small and large
// gradients both stand out, the middle recedes).
std::string gradient_color(double t) {
  const double lo[3] = {0.23, 0.30, 0.75}, mid[3] = {0.80, 0.80, 0.80}, hi[3] = {0.71, 0.02, 0.15};
  const double* a = t < 0.5 ? lo : mid;
  const double* b = t < 0.5 ? mid : hi;
  double u = t < 0.5 ? t * 2 : (t - 0.5) * 2;
  return hex_color(a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u, a[2] + (b[2] - a[2]) * u);
}

std::string saved_line(size_t i, const SavedTensor& t) {
  std::string line = "saved " + std::to_string(i) + ": ";
  if (t.released) return line + "released";
  line += to_string(t.meta);
  if (t.is_output) line += " (output)";
  if (t.version_check_fails())
    line += " MODIFIED: v" + std::to_string(t.version) + ", saved at v" +
            std::to_string(t.saved_version);
  return line;
}

std::string grad_line(const GradStats& g) {
  std::string line = "|g| " + format_norm(g.norm) + "  max " + format_norm(g.max_abs);
  if (g.nan_count) line += "  nan " + std::to_string(g.nan_count);
  if (g.inf_count) line += "  inf " + std::to_string(g.inf_count);
  return line;
}

}  // namespace

std::string node_label(const Snapshot& s, const GraphNode& n, const DotOptions& o) {
  std::string text;
  switch (n.kind) {
    case NodeKind::Op:
      text = s.kind == GraphKind::Forward ? n.op : n.name;
      if (!n.label.empty()) text += "\n" + n.label;
      break;
    case NodeKind::Leaf:
      text = !n.label.empty() ? n.label : s.kind == GraphKind::Forward ? "input" : n.name;
      break;
    case NodeKind::Module:
      text = n.label + ": " + n.name + "\n(" + std::to_string(n.members.size()) + " nodes)";
      break;
  }
  if (o.show_shapes) text += "\n" + to_string(n.output);
  if (o.show_saved)
    for (size_t i = 0; i < n.saved.size(); ++i) text += "\n" + saved_line(i, n.saved[i]);
  if (o.show_gradients && n.grad) text += "\n" + grad_line(*n.grad);
  return text;
}

namespace {

std::string node_attributes(const Snapshot& s, const GraphNode& n, const DotOptions& o) {
  const char* fill = n.kind == NodeKind::Leaf     ? "#a6cee3"
                     : n.kind == NodeKind::Module ? "#fdd49e"
                     : n.is_root                  ? "#b8e186"
                                                  : "#e0e0e0";
  if (n.version_check_fails()) fill = "#fb6a4a";
  std::string a = "label=" + quote(node_label(s, n, o)) + ", fillcolor=" + quote(fill);
  if (!n.reachable) a += ", style=\"rounded,filled,dashed\", fontcolor=\"#777777\"";
  if (n.grad && (n.grad->nan_count || n.grad->inf_count)) a += ", color=\"#d7191c\", penwidth=2";
  if (n.grad) a += ", tooltip=" + quote(grad_line(*n.grad));
  return a;
}

// Module clusters, nested by dotted path: "enc" holds "enc.0" holds its nodes.
struct Cluster {
  std::vector<int> nodes;
  std::set<std::string> children;
};

void write_cluster(std::ostringstream& out, const Snapshot& s,
                   const std::map<std::string, Cluster>& clusters, const std::string& path,
                   int depth) {
  const Cluster& c = clusters.at(path);
  std::string indent(static_cast<size_t>(depth) * 2, ' ');
  const ModuleInfo* info = s.module_info(path);
  out << indent << "subgraph " << quote("cluster_" + path) << " {\n";
  out << indent << "  label=" << quote(info ? path + ": " + info->type : path)
      << "; style=\"rounded,dashed\"; color=\"#888888\"; fontcolor=\"#555555\";\n";
  for (const std::string& child : c.children) write_cluster(out, s, clusters, child, depth + 1);
  for (int id : c.nodes) out << indent << "  " << node_name(id) << ";\n";
  out << indent << "}\n";
}

}  // namespace

std::string format_norm(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

std::string to_dot(const Snapshot& s, const DotOptions& o) {
  GraphKind direction = o.direction.value_or(s.kind);
  std::ostringstream out;
  out << "digraph " << (s.kind == GraphKind::Forward ? "forward" : "backward") << " {\n"
      << "  graph [rankdir=" << (o.rankdir == RankDir::LeftRight ? "LR" : "TB")
      << ", nodesep=0.25, ranksep=0.35, fontname=\"DejaVu Sans\", "
         "fontsize=10];\n"
      << "  node [shape=box, style=\"rounded,filled\", fontname=\"DejaVu Sans\", fontsize=10, "
         "height=0.3, margin=\"0.08,0.04\"];\n"
      << "  edge [arrowsize=0.7" << (direction == GraphKind::Backward ? ", dir=back" : "")
      << "];\n";
  for (const GraphNode& n : s.nodes)
    out << "  " << node_name(n.id) << " [" << node_attributes(s, n, o) << "];\n";

  // Edge colours: log10 of the norms, spread over the graph's own range. A gradient flows
  // along an edge only if its consumer ran in backward (received a gradient itself): an
  // edge into a node the root does not depend on carries none.
  auto flowing = [&](const GraphEdge& e) -> const std::optional<GradStats>& {
    static const std::optional<GradStats> none;
    return s.nodes[e.to].grad ? s.nodes[e.from].grad : none;
  };
  double lo = INFINITY, hi = -INFINITY;
  if (o.color_by_gradient)
    for (const GraphEdge& e : s.edges)
      if (const auto& g = flowing(e); g && std::isfinite(g->norm) && g->norm > 0) {
        lo = std::min(lo, std::log10(g->norm));
        hi = std::max(hi, std::log10(g->norm));
      }
  for (const GraphEdge& e : s.edges) {
    out << "  " << node_name(e.from) << " -> " << node_name(e.to);
    const auto& g = flowing(e);
    if (o.color_by_gradient && g) {
      if (g->nan_count || g->inf_count || !std::isfinite(g->norm)) {
        out << " [color=\"#ff0000\", penwidth=3, label=" << quote(g->nan_count ? "nan" : "inf")
            << ", fontcolor=\"#ff0000\"]";
      } else if (g->norm == 0) {
        out << " [color=\"#bbbbbb\", style=dashed, tooltip=\"|g| 0\"]";
      } else {
        double t = hi > lo ? (std::log10(g->norm) - lo) / (hi - lo) : 0.5;
        char width[16];
        std::snprintf(width, sizeof width, "%.2f", 1 + 2 * t);
        out << " [color=" << quote(gradient_color(t)) << ", penwidth=" << width
            << ", tooltip=" << quote("|g| " + format_norm(g->norm)) << "]";
      }
    }
    out << ";\n";
  }

  if (o.clusters) {
    std::map<std::string, Cluster> clusters;
    for (const GraphNode& n : s.nodes) {
      if (n.module.empty()) continue;
      clusters[n.module].nodes.push_back(n.id);
      // Make every ancestor a cluster too, linked to its child.
      for (std::string p = n.module; !p.empty();) {
        size_t dot = p.rfind('.');
        if (dot == std::string::npos) break;
        std::string parent = p.substr(0, dot);
        clusters[parent].children.insert(p);
        p = parent;
      }
    }
    for (const auto& [path, c] : clusters)
      if (path.find('.') == std::string::npos) write_cluster(out, s, clusters, path, 1);
  }
  out << "}\n";
  return out.str();
}

}  // namespace glass::viz
