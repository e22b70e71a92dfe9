// viewer/stride_dot.cpp — writing the stride picture as DOT (stride_dot.h).
//
// Grids and strip are Graphviz HTML-like tables; every grid cell and storage cell is a
// PORT, so an arrow can leave an element's cell and end on its storage cell, and dot
// routes the arrows (crossing ones are what a transpose looks like). Every number comes
// from stride_map.h: the picture draws the address formula, it does not re-derive it.
#include "viewer/stride_dot.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/shape.h"
#include "viewer/stride_map.h"
#include "viewer/view_recipe.h"  // join_ints

namespace glass::viz {

namespace {

struct Palette {
  const char* name;  // said in the legend
  const char* line;  // arrows and caption
  const char* fill;  // the view's cells, and the storage cells only it reads
};
constexpr Palette kPalette[] = {{"blue", "#1f77b4", "#c6dbef"},
                                {"orange", "#d95f0e", "#fdd0a2"},
                                {"green", "#238b45", "#c7e9c0"},
                                {"brown", "#8c510a", "#f6e8c3"}};
constexpr int64_t kMaxViews = static_cast<int64_t>(std::size(kPalette));
constexpr const char* kSharedFill = "#cbb4e0";  // read by two or more views: aliasing
constexpr const char* kHighlight = "#d62728";

std::string html(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

std::string number(double v) {
  char buf[32];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e6)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string port(const std::vector<int64_t>& index) {
  return index.empty() ? "e" : "e" + join_ints(index, "_");
}

std::vector<int64_t> sizes_of(const Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }

// One view as a table: caption, metadata, then its elements as 2-D blocks side by side.
void write_grid(std::ostream& os, int v, const StrideView& view, const Index* hl) {
  const Tensor& t = view.tensor;
  const Palette& pal = kPalette[v];
  const std::vector<int64_t> sizes = sizes_of(t);
  const int64_t nd = t.dim();
  const int64_t rows = nd >= 2 ? sizes[nd - 2] : 1, cols = nd >= 1 ? sizes[nd - 1] : 1;
  const int64_t blocks = rows * cols == 0 ? 0 : t.numel() / (rows * cols);
  const std::vector<double> values = values_of(t);
  std::vector<int64_t> lead(sizes.begin(), sizes.begin() + std::max<int64_t>(nd - 2, 0));

  os << "  v" << v << " [label=<<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"2\">\n";
  const int64_t span = std::max<int64_t>(blocks, 1);
  os << "<TR><TD COLSPAN=\"" << span << "\"><FONT COLOR=\"" << pal.line << "\"><B>"
     << html(view.name) << "</B></FONT></TD></TR>\n";
  os << "<TR><TD COLSPAN=\"" << span << "\"><FONT POINT-SIZE=\"10\">sizes [" << join_ints(sizes)
     << "]  strides [" << join_ints({t.strides().begin(), t.strides().end()}) << "]  offset "
     << t.storage_offset() << "</FONT></TD></TR>\n<TR>";
  if (blocks == 0) os << "<TD><I>no elements</I></TD>";
  for (int64_t b = 0; b < blocks; ++b) {
    os << "<TD><TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"4\">";
    std::vector<int64_t> at = unravel(b, lead);
    if (!lead.empty())
      os << "<TR><TD BORDER=\"0\" COLSPAN=\"" << cols << "\"><FONT POINT-SIZE=\"10\">["
         << join_ints(at) << ", :, :]</FONT></TD></TR>";
    for (int64_t i = 0; i < rows; ++i) {
      os << "<TR>";
      for (int64_t j = 0; j < cols; ++j) {
        std::vector<int64_t> index = at;
        if (nd >= 2) index.push_back(i);
        if (nd >= 1) index.push_back(j);
        const bool hot = v == 0 && hl != nullptr && index == *hl;
        const int64_t flat = (b * rows + i) * cols + j;
        os << "<TD PORT=\"" << port(index)
           << "\" WIDTH=\"28\" HEIGHT=\"32\" VALIGN=\"TOP\" BGCOLOR=\""
           << (hot ? "#fcbba1" : pal.fill) << "\"" << (hot ? " COLOR=\"#d62728\"" : "") << ">"
           << number(values[static_cast<size_t>(flat)]) << "</TD>";
      }
      os << "</TR>";
    }
    os << "</TABLE></TD>";
  }
  os << "</TR></TABLE>>];\n";
}

}  // namespace

std::string stride_to_dot(const std::vector<StrideView>& views, const StrideDotOptions& opt) {
  GLASS_CHECK(!views.empty(), "stride_to_dot(): give at least one view to draw");
  GLASS_CHECK(static_cast<int64_t>(views.size()) <= kMaxViews, "stride_to_dot(): at most ",
              kMaxViews, " views fit one picture, got ", views.size());
  for (const StrideView& v : views) {
    GLASS_CHECK(v.tensor.defined(), "stride_to_dot(): the view '", v.name, "' is undefined");
    GLASS_CHECK(v.tensor.is_alias_of(views[0].tensor), "stride_to_dot(): '", v.name,
                "' does not share the storage of '", views[0].name,
                "'; one picture shows views of one storage");
    GLASS_CHECK(v.tensor.numel() <= kMaxStridePictureCells, "stride_to_dot(): '", v.name, "' has ",
                v.tensor.numel(), " elements; a picture shows at most ", kMaxStridePictureCells);
  }
  const Tensor& first = views[0].tensor;
  const int64_t cells = storage_elements(first);
  GLASS_CHECK(cells <= kMaxStridePictureCells, "stride_to_dot(): the storage holds ", cells,
              " elements; a picture shows at most ", kMaxStridePictureCells);
  // The highlighted element, its negative entries counted from the end, checked.
  std::optional<Index> highlight;
  if (opt.highlight) {
    Index h = *opt.highlight;
    GLASS_CHECK(static_cast<int64_t>(h.size()) == first.dim(), "stride_to_dot(): highlight [",
                join_ints(h), "] has ", h.size(), " entries but '", views[0].name, "' has ",
                first.dim(), " dims");
    for (int64_t d = 0; d < first.dim(); ++d) {
      if (h[d] < 0) h[d] += first.size(d);
      GLASS_CHECK(h[d] >= 0 && h[d] < first.size(d), "stride_to_dot(): highlight [",
                  join_ints(*opt.highlight), "] is out of range for '", views[0].name,
                  "' of sizes [", join_ints(sizes_of(first)), "]");
    }
    highlight = std::move(h);
  }
  const Index* hl = highlight ? &*highlight : nullptr;

  // Which views read each storage cell, and whether one reads it more than once.
  std::vector<std::vector<int>> readers(static_cast<size_t>(cells));
  std::vector<bool> repeated(static_cast<size_t>(cells), false);
  for (size_t v = 0; v < views.size(); ++v) {
    std::vector<int64_t> reads = reads_per_cell(views[v].tensor);
    for (int64_t k = 0; k < cells; ++k) {
      if (reads[static_cast<size_t>(k)] > 0)
        readers[static_cast<size_t>(k)].push_back(static_cast<int>(v));
      if (reads[static_cast<size_t>(k)] > 1) repeated[static_cast<size_t>(k)] = true;
    }
  }
  const int64_t hot_cell =
      hl ? storage_index(first.sizes(), first.strides(), first.storage_offset(), *hl) : -1;

  std::ostringstream os;
  os << "digraph strides {\n"
        "  graph [rankdir=TB, splines=line, nodesep=0.4, ranksep=1.0, fontname=\"DejaVu Sans\", "
        "fontsize=11, labeljust=l];\n"
        "  node [shape=plain, fontname=\"DejaVu Sans\", fontsize=12];\n"
        "  edge [arrowsize=0.5, penwidth=0.8, dir=both, arrowtail=dot, tailclip=false];\n";
  for (size_t v = 0; v < views.size(); ++v) write_grid(os, static_cast<int>(v), views[v], hl);
  if (views.size() > 1) {
    os << "  { rank=same;";
    for (size_t v = 0; v < views.size(); ++v) os << " v" << v << ";";
    os << " }\n";
  }

  // The strip: index in each cell, tinted by its readers; the dtype and size below.
  bool any_shared = false, any_repeated = false, any_unread = false;
  os << "  storage [label=<<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" "
        "CELLPADDING=\"4\"><TR>";
  std::vector<double> stored = values_of(storage_view(first));
  for (int64_t k = 0; k < cells; ++k) {
    const std::vector<int>& r = readers[static_cast<size_t>(k)];
    const char* fill = r.empty() ? "#ffffff" : r.size() > 1 ? kSharedFill : kPalette[r[0]].fill;
    any_shared |= r.size() > 1;
    any_unread |= r.empty();
    any_repeated |= repeated[static_cast<size_t>(k)];
    os << "<TD PORT=\"s" << k << "\" WIDTH=\"26\" BGCOLOR=\"" << fill << "\""
       << (repeated[static_cast<size_t>(k)] ? " BORDER=\"3\"" : "")
       << (k == hot_cell ? std::string(" COLOR=\"") + kHighlight + "\"" : "") << ">"
       << (opt.storage_values ? number(stored[static_cast<size_t>(k)]) : std::to_string(k))
       << "</TD>";
  }
  os << "</TR>";
  if (opt.storage_values) {
    os << "<TR>";
    for (int64_t k = 0; k < cells; ++k)
      os << "<TD BORDER=\"0\"><FONT POINT-SIZE=\"9\" COLOR=\"#666666\">" << k << "</FONT></TD>";
    os << "</TR>";
  }
  os << "<TR><TD BORDER=\"0\" COLSPAN=\"" << std::max<int64_t>(cells, 1) << "\" ALIGN=\"LEFT\">"
     << "<FONT POINT-SIZE=\"10\">storage: " << cells << " elements of "
     << html(to_string(first.dtype())) << ", " << cells * first.element_size()
     << " bytes; cell k is element k</FONT></TD></TR></TABLE>>];\n";

  // Arrows: element -> its storage cell (tail at the cell's bottom, head at the top).
  for (size_t v = 0; v < views.size(); ++v) {
    const Tensor& t = views[v].tensor;
    const std::vector<int64_t> sizes = sizes_of(t), addr = storage_cells(t);
    for (int64_t k = 0; k < t.numel(); ++k) {
      std::vector<int64_t> index = unravel(k, sizes);
      const bool hot = v == 0 && hl != nullptr && index == *hl;
      if (!hot && !opt.arrows) continue;
      os << "  v" << v << ":\"" << port(index) << "\":c -> storage:s"
         << addr[static_cast<size_t>(k)] << ":n [";
      if (hot)
        os << "color=\"" << kHighlight << "\", penwidth=2.2";
      else
        os << "color=\"" << kPalette[v].line << "\"";
      os << "];\n";
    }
  }

  // The legend, as the graph's caption.
  os << "  label=<";
  if (hl)
    os << "<FONT COLOR=\"" << kHighlight << "\">red</FONT>: " << html(views[0].name)
       << (hl->empty() ? "" : "[" + join_ints(*hl, "][") + "]")
       << " lives in storage cell offset + sum(index * stride) = "
       << html(address_formula(first, *hl)) << "<BR ALIGN=\"LEFT\"/>";
  for (size_t v = 0; v < views.size(); ++v)
    os << "<FONT COLOR=\"" << kPalette[v].line << "\">" << kPalette[v].name << "</FONT>: read by "
       << html(views[v].name) << "<BR ALIGN=\"LEFT\"/>";
  if (any_shared)
    os << "purple: read by more than one view: they alias, so a write through one is seen "
          "through the other<BR ALIGN=\"LEFT\"/>";
  if (any_repeated)
    os << "thick border: read by several elements of one view (a stride of 0)<BR "
          "ALIGN=\"LEFT\"/>";
  if (any_unread) os << "white: in the storage, but not part of any view<BR ALIGN=\"LEFT\"/>";
  os << ">;\n}\n";
  return os.str();
}

}  // namespace glass::viz
