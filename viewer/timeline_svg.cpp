// viewer/timeline_svg.cpp — a Timeline as plain SVG text (timeline.h's timeline_to_svg).
//
// No Graphviz: the picture is a chart, not a graph, so it is laid out here directly.
// Time runs left to right at one scale for the whole picture (t0_ns at the label column's
// edge), so a span's x is where it started and its width how long it took; each lane is a
// band of `rows` rows. Shapes carry classes saying what they are (timeline.h) and a <title>
// with span_details, which browsers show on hover. The output depends only on the
// Timeline and the options: the same trace always gives the same bytes.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

#include "viewer/timeline.h"

namespace glass::viz {

namespace {

constexpr int kTop = 58;     // title and axis above the first lane
constexpr int kLanePad = 3;  // pixels above and below a lane's rows
constexpr int kRightMargin = 16;
constexpr double kCharWidth = 6.4;  // an 11 px DejaVu Sans character, on average

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string hex(TimelineColor c) {
  char text[8];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", c.r, c.g, c.b);
  return text;
}

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", v);
  return text;
}

// The pattern a pageable span is filled with: its colour, with light diagonal stripes.
std::string hatch_id(TimelineColor c) { return "hatch-" + hex(c).substr(1); }

std::string hatch_pattern(TimelineColor c) {
  return "<pattern id=\"" + hatch_id(c) +
         "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
         "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"" +
         hex(c) + "\"/><rect width=\"2.5\" height=\"6\" fill=\"#ffffff\" fill-opacity=\"0.55\"/>" +
         "</pattern>\n";
}

// The text that fits in `width` pixels: all of it, or a prefix ending in "..." (at least
// three characters of it), or nothing.
std::string fitted(const std::string& text, double width) {
  const auto room = static_cast<size_t>(std::max(0.0, (width - 6) / kCharWidth));
  if (text.size() <= room) return text;
  if (room < 6) return "";
  return text.substr(0, room - 3) + "...";
}

// Text colour for a label on `c`: dark on light fills, white on dark ones.
const char* ink_on(TimelineColor c) {
  return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b > 150 ? "#1a1a1a" : "#ffffff";
}

}  // namespace

std::string timeline_to_svg(const Timeline& t, const TimelineSvgOptions& options) {
  const double x0 = options.label_width,
               x1 = std::max(x0 + 50, static_cast<double>(options.width - kRightMargin));
  const int64_t span_ns = std::max<int64_t>(t.t1_ns - t.t0_ns, 1);
  const double scale = (x1 - x0) / static_cast<double>(span_ns);  // pixels per ns
  auto x_of = [&](int64_t ns) { return x0 + static_cast<double>(ns - t.t0_ns) * scale; };

  // Lane bands, top to bottom.
  std::vector<int> lane_y;
  int y = kTop;
  for (const TimelineLane& l : t.lanes) {
    lane_y.push_back(y);
    y += l.rows * options.row_height + 2 * kLanePad;
  }
  const int lanes_bottom = y;
  const int legend_y = lanes_bottom + 22;
  const int height = legend_y + 30;

  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << options.width << "\" height=\""
      << height << "\" viewBox=\"0 0 " << options.width << " " << height
      << "\" font-family=\"DejaVu Sans, Helvetica, sans-serif\" font-size=\"11\">\n";
  std::string title = options.title;
  if (title.empty())
    title = "timeline of " + t.source + ": " + std::to_string(t.ops.size()) + " operations, " +
            format_duration(t.t1_ns - t.t0_ns);
  svg << "<title>" << escape(title) << "</title>\n";

  // Every colour a hatched span uses, once.
  std::vector<TimelineColor> hatches;
  for (const TimelineSpan& s : t.spans) {
    SpanStyle st = span_style(t, s);
    if (st.hatched && std::none_of(hatches.begin(), hatches.end(), [&](TimelineColor c) {
          return c.r == st.fill.r && c.g == st.fill.g && c.b == st.fill.b;
        }))
      hatches.push_back(st.fill);
  }
  // And the legend's: a pageable copy in, and the host staging one.
  const TimelineColor legend_pageable{84, 162, 75}, legend_staging{232, 163, 61};
  for (TimelineColor l : {legend_pageable, legend_staging})
    if (std::none_of(hatches.begin(), hatches.end(),
                     [&](TimelineColor c) { return c.r == l.r && c.g == l.g && c.b == l.b; }))
      hatches.push_back(l);
  svg << "<defs>\n";
  for (TimelineColor c : hatches) svg << hatch_pattern(c);
  svg << "</defs>\n";
  svg << "<rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  svg << "<text class=\"title\" x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\">"
      << escape(title) << "</text>\n";

  if (t.empty()) {
    svg << "<text class=\"empty\" x=\"8\" y=\"" << kTop + 14
        << "\">no operations recorded</text>\n</svg>\n";
    return svg.str();
  }

  // [axis] ticks every 1, 2 or 5 × 10^k ns, labelled in ms from t0, with grid lines.
  const int64_t step = tick_step_ns(span_ns, x1 - x0);
  svg << "<g class=\"axis\">\n";
  svg << "<line x1=\"" << num(x0) << "\" y1=\"48\" x2=\"" << num(x1)
      << "\" y2=\"48\" stroke=\"#333333\"/>\n";
  for (int64_t k = 0; k * step <= span_ns; ++k) {
    const double x = x0 + static_cast<double>(k * step) * scale;
    char label[48];
    std::snprintf(label, sizeof label, "%.6g ms", static_cast<double>(k * step) / 1e6);
    svg << "<line x1=\"" << num(x) << "\" y1=\"44\" x2=\"" << num(x) << "\" y2=\"" << lanes_bottom
        << "\" stroke=\"#dddddd\"/>\n";
    svg << "<text class=\"tick\" x=\"" << num(x) << "\" y=\"40\" text-anchor=\"middle\">" << label
        << "</text>\n";
  }
  svg << "</g>\n";

  // [lanes] a band per lane, alternating shades; a line where the next device begins.
  svg << "<g class=\"lanes\">\n";
  for (size_t i = 0; i < t.lanes.size(); ++i) {
    const TimelineLane& l = t.lanes[i];
    const int h = l.rows * options.row_height + 2 * kLanePad;
    svg << "<rect class=\"lane\" x=\"0\" y=\"" << lane_y[i] << "\" width=\"" << options.width
        << "\" height=\"" << h << "\" fill=\"" << (i % 2 ? "#f4f4f6" : "#fbfbfd")
        << "\" fill-opacity=\"0.9\"/>\n";
    if (i > 0 && t.lanes[i - 1].device != l.device)
      svg << "<line x1=\"0\" y1=\"" << lane_y[i] << "\" x2=\"" << options.width << "\" y2=\""
          << lane_y[i] << "\" stroke=\"#888888\"/>\n";
    svg << "<text class=\"lane-label\" x=\"8\" y=\"" << lane_y[i] + h / 2 + 4 << "\">"
        << escape(l.name) << "</text>\n";
  }
  svg << "</g>\n";

  // [spans] boxes (with their label when it fits), then the marks on top of them.
  svg << "<g class=\"spans\">\n";
  for (const TimelineSpan& s : t.spans) {
    if (s.mark) continue;
    const SpanStyle st = span_style(t, s);
    const double x = x_of(s.start_ns), w = std::max(x_of(s.end_ns) - x, 1.5);
    const int top = lane_y[s.lane] + kLanePad + s.row * options.row_height;
    const int h = options.row_height - 2;
    svg << "<rect class=\"" << st.classes << "\" x=\"" << num(x) << "\" y=\"" << top + 1
        << "\" width=\"" << num(w) << "\" height=\"" << h << "\" fill=\""
        << (st.hatched ? "url(#" + hatch_id(st.fill) + ")" : hex(st.fill)) << "\"";
    if (st.waited)
      svg << " stroke=\"#c0141e\" stroke-width=\"2\"";
    else
      svg << " stroke=\"#ffffff\" stroke-width=\"0.5\"";
    svg << "><title>" << escape(span_details(t, s)) << "</title></rect>\n";
    const std::string label = fitted(span_label(t, s), w);
    if (!label.empty())
      svg << "<text class=\"span-label\" x=\"" << num(x + 3) << "\" y=\"" << top + 1 + h / 2 + 4
          << "\" fill=\"" << (st.hatched ? "#1a1a1a" : ink_on(st.fill)) << "\">" << escape(label)
          << "</text>\n";
  }
  for (const TimelineSpan& s : t.spans) {
    if (!s.mark) continue;
    const SpanStyle st = span_style(t, s);
    const double x = x_of(s.start_ns);
    const int top = lane_y[s.lane] + kLanePad;
    const int bottom = top + t.lanes[s.lane].rows * options.row_height;
    if (s.role == SpanRole::Enqueue) {  // a tick across the host lane
      svg << "<line class=\"" << st.classes << "\" x1=\"" << num(x) << "\" y1=\"" << top
          << "\" x2=\"" << num(x) << "\" y2=\"" << bottom << "\" stroke=\"" << hex(st.fill)
          << "\" stroke-width=\"1.5\"><title>" << escape(span_details(t, s)) << "</title></line>\n";
    } else {  // an event: a diamond on its stream's lane
      const double cy = (top + bottom) / 2.0, r = 5;
      svg << "<path class=\"" << st.classes << "\" d=\"M" << num(x) << "," << num(cy - r) << " L"
          << num(x + r) << "," << num(cy) << " L" << num(x) << "," << num(cy + r) << " L"
          << num(x - r) << "," << num(cy) << " Z\" fill=\"" << hex(st.fill) << "\"><title>"
          << escape(span_details(t, s)) << "</title></path>\n";
    }
  }
  svg << "</g>\n";

  // [legend] what each shape means.
  svg << "<g class=\"legend\">\n";
  double lx = 8;
  auto swatch = [&](const std::string& fill, const char* stroke, const char* text) {
    svg << "<rect x=\"" << num(lx) << "\" y=\"" << legend_y - 10 << "\" width=\"18\" height=\"12\""
        << " fill=\"" << fill << "\" stroke=\"" << stroke << "\"/>";
    svg << "<text x=\"" << num(lx + 23) << "\" y=\"" << legend_y << "\">" << text << "</text>\n";
    lx += 40 + kCharWidth * static_cast<double>(std::string(text).size());
  };
  swatch(hex({76, 120, 168}), "none", "kernel");
  swatch(hex({157, 125, 189}), "none", "memset");
  swatch(hex({84, 162, 75}), "none", "copy HtoD, pinned");
  swatch("url(#" + hatch_id(legend_pageable) + ")", "none", "pageable (hatched)");
  swatch(hex({47, 158, 143}), "none", "copy DtoH");
  swatch("url(#" + hatch_id(legend_staging) + ")", "none", "host staging");
  swatch(hex({228, 87, 86}), "#c0141e", "host waited (red outline)");
  svg << "<line x1=\"" << num(lx + 9) << "\" y1=\"" << legend_y - 11 << "\" x2=\"" << num(lx + 9)
      << "\" y2=\"" << legend_y + 2 << "\" stroke=\"#464646\" stroke-width=\"1.5\"/>"
      << "<text x=\"" << num(lx + 23) << "\" y=\"" << legend_y << "\">enqueue</text>\n";
  lx += 30 + kCharWidth * 7;
  svg << "<path d=\"M" << num(lx + 9) << "," << legend_y - 10 << " l5,5 l-5,5 l-5,-5 Z\" "
      << "fill=\"#1e1e1e\"/><text x=\"" << num(lx + 23) << "\" y=\"" << legend_y
      << "\">event</text>\n";
  svg << "</g>\n</svg>\n";
  return svg.str();
}

}  // namespace glass::viz
