// viewer/distributed_shard_svg.cpp — a ShardRecording as plain SVG (distributed_shard.h's
// shard_to_svg).
//
// No Graphviz: two charts and a row of bars, laid out here directly. Per rung a plot of every
// rank's bytes over the recorded step — x the ledger's order of changes across the rung's
// width, y bytes on one scale for both rungs, so FSDP's line sits about N times lower than
// DDP's — with the phases shaded, the arithmetic's model state dashed, and a triangle per
// gather or free of half a unit or more; then one bar per FSDP parameter cut into its ranks'
// rows, padding hatched. Shapes carry classes saying what they are and <title>s browsers
// show on hover. The output depends only on the recording: the same one gives the same bytes.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "viewer/distributed_shard.h"

namespace glass::viz {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

constexpr int kLabelW = 190, kRight = 16, kPlotH = 150, kBarH = 22;
constexpr const char* kRankColors[] = {"#4c78a8", "#e45756", "#54a24b", "#f58518",
                                       "#b279a2", "#72b7b2", "#eeca3b", "#9d755d"};

const char* rank_color(int r) {
  return kRankColors[static_cast<size_t>(r) % std::size(kRankColors)];
}

const char* phase_color(ShardPhase p) {
  switch (p) {
    case ShardPhase::ZeroGrad: return "#eeeeee";
    case ShardPhase::Forward: return "#dbe8f6";
    case ShardPhase::Backward: return "#fbe3cf";
    case ShardPhase::Step: return "#dcefd9";
  }
  return "#eeeeee";
}

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

}  // namespace

std::string shard_to_svg(const ShardRecording& rec, int width) {
  width = std::max(width, kLabelW + kRight + 200);
  const double plot_w = width - kLabelW - kRight;
  const double x0 = kLabelW;
  const double ymax =
      static_cast<double>(std::max<int64_t>(std::max(rec.ddp.peak(), rec.fsdp.peak()), 1)) * 1.05;
  const int plots_top = 40, plot_gap = 44 + 7 * rec.options.world_size;
  const int bars_top = plots_top + 2 * (kPlotH + plot_gap) + 10;
  const int height = bars_top + 24 + static_cast<int>(rec.ownership.size()) * (kBarH + 6) + 40;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"11\">\n";
  s << "<defs><pattern id=\"padding\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
       "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#dddddd\"/>"
       "<rect width=\"2\" height=\"6\" fill=\"#999999\"/></pattern></defs>\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  s << "<text x=\"8\" y=\"20\" font-size=\"14\">Memory per rank over one step, DDP against FSDP ("
    << rec.options.world_size << " ranks, Ψ = " << rec.parameters << ", FSDP prefetch "
    << (rec.options.prefetch ? "on" : "off") << ")</text>\n";
  const double mb = 1024.0 * 1024.0;
  int top = plots_top;
  for (const RungRecording* rung : {&rec.ddp, &rec.fsdp}) {
    const double arithmetic = rung == &rec.ddp ? rec.ddp_model_state() : rec.fsdp_model_state();
    const double orders = static_cast<double>(std::max<int64_t>(rung->orders, 1));
    auto x_of = [&](int64_t order) { return x0 + static_cast<double>(order) / orders * plot_w; };
    auto y_of = [&](double bytes) { return top + kPlotH - bytes / ymax * kPlotH; };
    s << "<g class=\"rung " << rung->name << "\">\n";
    s << "<text x=\"8\" y=\"" << top + 14 << "\" font-size=\"13\">" << rung->name << "</text>\n";
    s << "<text x=\"8\" y=\"" << top + 30 << "\">peak " << num(rung->peak() / mb)
      << " MiB</text>\n";
    s << "<text x=\"8\" y=\"" << top + 44 << "\">at rest " << num(rung->at_rest() / mb)
      << " MiB</text>\n";
    // The phases, from rank 0 (the others are alike): bands behind the curves.
    if (!rung->ranks.empty())
      for (const PhaseSpan& p : rung->ranks[0].phases) {
        const double a = x_of(p.begin), b = x_of(p.end);
        s << "<rect class=\"phase " << phase_name(p.phase) << "\" x=\"" << num(a) << "\" y=\""
          << top << "\" width=\"" << num(std::max(b - a, 0.5)) << "\" height=\"" << kPlotH
          << "\" fill=\"" << phase_color(p.phase) << "\"><title>" << phase_name(p.phase)
          << ": changes " << p.begin << " to " << p.end << "</title></rect>\n";
        // Labelled where it fits: a phase with few allocations (Adam's step) is a sliver.
        if (6.4 * static_cast<double>(std::string(phase_name(p.phase)).size()) + 6 < b - a)
          s << "<text x=\"" << num(a + 3) << "\" y=\"" << top + 12 << "\" fill=\"#555555\">"
            << phase_name(p.phase) << "</text>\n";
      }
    s << "<rect x=\"" << x0 << "\" y=\"" << top << "\" width=\"" << num(plot_w) << "\" height=\""
      << kPlotH << "\" fill=\"none\" stroke=\"#888888\"/>\n";
    // The arithmetic's model state, dashed.
    const double ya = y_of(arithmetic);
    s << "<line class=\"arithmetic\" x1=\"" << x0 << "\" y1=\"" << num(ya) << "\" x2=\""
      << num(x0 + plot_w) << "\" y2=\"" << num(ya) << "\" stroke=\"#333333\" "
      << "stroke-dasharray=\"5,4\"/>\n";
    s << "<text x=\"" << num(x0 + plot_w - 4) << "\" y=\"" << num(ya - 3)
      << "\" text-anchor=\"end\" fill=\"#333333\">" << (rung == &rec.ddp ? "16Ψ = " : "16Ψ/N = ")
      << num(arithmetic / mb) << " MiB</text>\n";
    // Every rank's bytes as a step line: flat until the next change.
    for (const RankMemoryCurve& c : rung->ranks) {
      s << "<polyline class=\"rank" << c.rank << "\" fill=\"none\" stroke=\"" << rank_color(c.rank)
        << "\" stroke-width=\"1.5\" points=\"";
      double bytes = static_cast<double>(c.at_rest);
      s << num(x0) << "," << num(y_of(bytes));
      for (const MemorySample& m : c.samples) {
        const double x = x_of(m.order);
        s << " " << num(x) << "," << num(y_of(bytes));
        bytes = static_cast<double>(m.bytes);
        s << " " << num(x) << "," << num(y_of(bytes));
      }
      s << " " << num(x0 + plot_w) << "," << num(y_of(bytes)) << "\"><title>" << rung->name
        << " rank " << c.rank << ": at rest " << num(c.at_rest / mb) << " MiB, peak "
        << num(c.peak / mb) << " MiB</title></polyline>\n";
    }
    // Gathers (up) and frees (down) of half a unit or more in one piece, a row per rank.
    const int64_t threshold = gather_threshold(rec);
    for (const RankMemoryCurve& c : rung->ranks)
      for (const MemoryJump& j : find_jumps(c, threshold)) {
        const double x = x_of(j.order), y = top + kPlotH + 20 + 7.0 * c.rank;
        s << "<polygon class=\"jump " << (j.delta > 0 ? "up" : "down") << " rank" << c.rank
          << "\" fill=\"" << rank_color(c.rank) << "\" points=\""
          << (j.delta > 0 ? num(x) + "," + num(y) + " " + num(x - 3.5) + "," + num(y + 6) + " " +
                                num(x + 3.5) + "," + num(y + 6)
                          : num(x - 3.5) + "," + num(y) + " " + num(x + 3.5) + "," + num(y) + " " +
                                num(x) + "," + num(y + 6))
          << "\"><title>" << rung->name << " rank " << c.rank << ": " << (j.delta > 0 ? "+" : "")
          << num(static_cast<double>(j.delta) / mb) << " MiB at once</title></polygon>\n";
      }
    s << "<text x=\"" << x0 << "\" y=\"" << top + kPlotH + 14
      << "\" fill=\"#555555\">0</text><text x=\"" << num(x0 + plot_w) << "\" y=\""
      << top + kPlotH + 14 << "\" text-anchor=\"end\" fill=\"#555555\">" << rung->orders
      << " allocations and frees, all ranks in one order</text>\n";
    s << "</g>\n";
    top += kPlotH + plot_gap;
  }
  // The legend: one colour per rank, below the last plot's markers.
  const int legend_y = top - plot_gap + 28 + 7 * rec.options.world_size;
  for (int r = 0; r < rec.options.world_size; ++r) {
    const double x = x0 + r * 70.0;
    s << "<rect x=\"" << num(x) << "\" y=\"" << legend_y << "\" width=\"12\" "
      << "height=\"10\" fill=\"" << rank_color(r) << "\"/><text x=\"" << num(x + 16) << "\" y=\""
      << legend_y + 9 << "\">rank " << r << "</text>\n";
  }
  // The ownership bars: each parameter's padded dim 0, cut into its ranks' blocks.
  s << "<text x=\"8\" y=\"" << bars_top + 12 << "\" font-size=\"13\">FSDP: which rows of dim 0 "
    << "each rank owns (hatched: padding, zero rows that never reach the model)</text>\n";
  int y = bars_top + 24;
  for (const ParamOwnership& p : rec.ownership) {
    const double total =
        static_cast<double>(std::max<int64_t>(p.rows_per_rank * rec.options.world_size, 1));
    s << "<g class=\"ownership\"><text x=\"8\" y=\"" << y + 15 << "\">" << p.name << " "
      << shape_text(p.shape) << "</text>\n";
    for (size_t r = 0; r < p.ranks.size(); ++r) {
      const ParamOwnership::Slice& sl = p.ranks[r];
      const double a =
          x0 + static_cast<double>(r) * static_cast<double>(p.rows_per_rank) / total * plot_w;
      const double real = static_cast<double>(sl.end - sl.begin) / total * plot_w;
      const double pad = static_cast<double>(sl.padding) / total * plot_w;
      const int rank = static_cast<int>(r);
      if (real > 0)
        s << "<rect class=\"slice rank" << rank << "\" x=\"" << num(a) << "\" y=\"" << y
          << "\" width=\"" << num(real) << "\" height=\"" << kBarH << "\" fill=\""
          << rank_color(rank) << "\" stroke=\"#ffffff\"><title>" << p.name << ": rank " << rank
          << " owns rows [" << sl.begin << ", " << sl.end << ")</title></rect>\n";
      if (pad > 0)
        s << "<rect class=\"padding rank" << rank << "\" x=\"" << num(a + real) << "\" y=\"" << y
          << "\" width=\"" << num(pad) << "\" height=\"" << kBarH
          << "\" fill=\"url(#padding)\" stroke=\"#ffffff\"><title>" << p.name << ": rank " << rank
          << " pads " << sl.padding << " zero rows</title></rect>\n";
      const std::string label = "rank " + std::to_string(rank) + " [" + std::to_string(sl.begin) +
                                ", " + std::to_string(sl.end) + ")" +
                                (sl.padding ? " +" + std::to_string(sl.padding) : "");
      if (static_cast<double>(label.size()) * 6.4 < real + pad - 6)
        s << "<text x=\"" << num(a + 4) << "\" y=\"" << y + 15 << "\" fill=\"#ffffff\">" << label
          << "</text>\n";
    }
    s << "</g>\n";
    y += kBarH + 6;
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace glass::viz
