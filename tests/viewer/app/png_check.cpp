// tests/viewer/app/png_check.cpp — checks a glass-viewer screenshot (tier 3).
//
//   viewer_png_check FILE.png DEMO     exit 0: not blank, one selected box (the loss: the
//                                      app opens with it selected) and one node-coloured
//                                      box per other node of DEMO's (collapsed) graph;
//                                      else 1, saying why
//
// Node boxes are the only pixels of the fill colours kNodeFill (250, 214, 110) and
// kNodeSelected (120, 220, 140) of draw.h; the count is of 4-connected regions of a colour
// (±24 per channel, so antialiasing does not split a box) at least 20x10 pixels in extent:
// the fill enclosed by a glyph of the label (the hole in a "0") is a region too, and
// smaller than any box.
#include <stb_image.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "viewer/demos.h"
#include "viewer/modules.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: viewer_png_check FILE.png DEMO\n";
    return 2;
  }
  int w = 0, h = 0, n = 0;
  unsigned char* px = stbi_load(argv[1], &w, &h, &n, 4);
  if (!px) {
    std::cerr << "cannot read " << argv[1] << ": " << stbi_failure_reason() << "\n";
    return 1;
  }
  auto at = [&](int x, int y) {
    return px + (static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 4;
  };
  // Not blank: more than a few distinct colours.
  std::vector<bool> seen(1 << 15);
  int distinct = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const unsigned char* p = at(x, y);
      int key = (p[0] >> 3) << 10 | (p[1] >> 3) << 5 | (p[2] >> 3);
      if (!seen[static_cast<size_t>(key)]) seen[static_cast<size_t>(key)] = true, ++distinct;
    }
  // 4-connected regions of colour (r, g, b), at least 20x10 pixels in extent.
  auto count_boxes = [&](int r, int g, int b) {
    auto is_fill = [&](int x, int y) {
      const unsigned char* p = at(x, y);
      return std::abs(p[0] - r) <= 24 && std::abs(p[1] - g) <= 24 && std::abs(p[2] - b) <= 24;
    };
    std::vector<bool> done(static_cast<size_t>(w) * static_cast<size_t>(h), false);
    int regions = 0;
    std::vector<std::pair<int, int>> stack;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        if (!is_fill(x, y) || done[static_cast<size_t>(y * w + x)]) continue;
        int x0 = x, x1 = x, y0 = y, y1 = y;
        stack.assign(1, {x, y});
        done[static_cast<size_t>(y * w + x)] = true;
        while (!stack.empty()) {
          auto [cx, cy] = stack.back();
          stack.pop_back();
          x0 = std::min(x0, cx), x1 = std::max(x1, cx), y0 = std::min(y0, cy),
          y1 = std::max(y1, cy);
          const int dx[] = {1, -1, 0, 0}, dy[] = {0, 0, 1, -1};
          for (int k = 0; k < 4; ++k) {
            int nx = cx + dx[k], ny = cy + dy[k];
            if (nx < 0 || ny < 0 || nx >= w || ny >= h || done[static_cast<size_t>(ny * w + nx)] ||
                !is_fill(nx, ny))
              continue;
            done[static_cast<size_t>(ny * w + nx)] = true;
            stack.push_back({nx, ny});
          }
        }
        if (x1 - x0 + 1 >= 20 && y1 - y0 + 1 >= 10) ++regions;
      }
    return regions;
  };
  const int boxes = count_boxes(250, 214, 110), selected = count_boxes(120, 220, 140);
  stbi_image_free(px);
  glass::viz::Snapshot s = glass::viz::capture(glass::viz::find_demo(argv[2]));
  if (!s.modules.empty()) s = glass::viz::collapse_modules(s);
  const int expected = static_cast<int>(s.nodes.size());
  std::cout << argv[1] << ": " << w << "x" << h << ", " << distinct << " distinct colours, "
            << boxes << " + " << selected << " selected node boxes (expected " << expected - 1
            << " + 1)\n";
  if (distinct < 8) {
    std::cout << "FAIL: the image is blank\n";
    return 1;
  }
  if (boxes != expected - 1 || selected != 1) {
    std::cout << "FAIL: wrong number of node boxes\n";
    return 1;
  }
  return 0;
}
