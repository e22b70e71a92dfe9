// tests/viewer/app/shard_panel_test.cpp — tier 2: the Shard panel through a bare ImGui
// context (imgui_harness.h): a plot per rung with a curve per rank, DDP above FSDP, hovering
// a plot reads every rank's bytes, one bar slice per rank and parameter (padding apart), and
// the prefetch checkbox records again.
#include <gtest/gtest.h>
#include <imgui.h>

#include <string>

#include "viewer/app/app.h"
#include "viewer/app/imgui_harness.h"

namespace glass::viz::app {
namespace {

struct ShardApp {
  ImGuiHarness h;
  App app;
  explicit ShardApp(int ranks = 2) {
    app.panels = Panels::ShardOnly;
    app.shard.world_size = ranks;
    app.open_shard();
    h.frame(app);  // ImGui sizes a new window's contents on its first frame: settle first
    h.frame(app);
  }
  Rect plot(const std::string& rung) const {
    for (const auto& [name, r] : app.shard.plots)
      if (name == rung) return r;
    ADD_FAILURE() << "no plot for " << rung;
    return {};
  }
};

TEST(ShardPanel, DrawsAPlotPerRungWithACurvePerRankAndABarSlicePerRank) {
  ShardApp a;
  const ShardView& v = a.app.shard;
  ASSERT_TRUE(v.rec);
  ASSERT_EQ(v.plots.size(), 2u);
  EXPECT_EQ(v.curves.size(), 4u);                  // 2 rungs × 2 ranks
  EXPECT_GE(a.plot("FSDP").y0, a.plot("DDP").y1);  // FSDP below DDP
  // A gather and a free per unit per rank in FSDP's forward at least; DDP has only its
  // backward's gradient temporaries of that size, fewer.
  int fsdp_jumps = 0, ddp_jumps = 0;
  for (const auto& [rung, rank] : v.jumps) (rung == "FSDP" ? fsdp_jumps : ddp_jumps) += 1;
  EXPECT_GE(fsdp_jumps, 2 * 3 * 2);
  EXPECT_LT(ddp_jumps, fsdp_jumps);
  // Every parameter is cut in two with no padding (the default model's dims are even).
  EXPECT_EQ(v.slice_rects.size(), v.rec->ownership.size() * 2);
  EXPECT_TRUE(v.padding_rects.empty());
  // Rank 1's slice of the first parameter is right of rank 0's, and as wide.
  const Rect r0 = v.slice_rects[0].second, r1 = v.slice_rects[1].second;
  EXPECT_EQ(v.slice_rects[1].first, std::make_pair(size_t{0}, 1));
  EXPECT_GE(r1.x0, r0.x1 - 0.5f);
  EXPECT_NEAR(r1.x1 - r1.x0, r0.x1 - r0.x0, 1.0f);
}

TEST(ShardPanel, HoveringAPlotReadsEveryRanksBytes) {
  ShardApp a;
  const Rect p = a.plot("FSDP");
  a.h.frame(a.app, p.cx(), p.cy());
  const std::string& text = a.app.shard.hover_text;
  EXPECT_NE(text.find("FSDP, change "), std::string::npos) << text;
  // Each rank's bytes there, and its state at rest: 16Ψ/2 = 3.51 MiB.
  EXPECT_NE(text.find("\nrank 0: "), std::string::npos) << text;
  EXPECT_NE(text.find("\nrank 1: "), std::string::npos) << text;
  EXPECT_NE(text.find("(at rest 3.5"), std::string::npos) << text;
}

TEST(ShardPanel, ThreeRanksPadTheLastRankAndHoverSaysSo) {
  ShardApp a(3);
  const ShardView& v = a.app.shard;
  ASSERT_FALSE(v.padding_rects.empty());
  for (const auto& [where, r] : v.padding_rects) EXPECT_EQ(where.second, 2) << "only the last";
  // fc1.weight [512, 256]: 171 rows each, rank 2 holds [342, 512) and one padding row.
  EXPECT_EQ(v.padding_rects.front().first, std::make_pair(size_t{0}, 2));
  const Rect pad = v.padding_rects.front().second;
  a.h.frame(a.app, pad.cx(), pad.cy());
  EXPECT_NE(v.hover_text.find("fc1.weight: rank 2 owns rows [342, 512) of 512, and 1 zero row "
                              "of padding (its block is ceil(d0 / N) = 171 rows)"),
            std::string::npos)
      << v.hover_text;
}

TEST(ShardPanel, ThePrefetchCheckboxRecordsAgain) {
  ShardApp a;
  ASSERT_TRUE(a.app.shard.prefetch);
  const int before = a.app.shard.recordings;
  const Rect box = a.app.shard.prefetch_box;
  a.h.frame(a.app, box.x0 + 6, box.cy(), /*down=*/true);
  a.h.frame(a.app, box.x0 + 6, box.cy(), /*down=*/false);
  EXPECT_FALSE(a.app.shard.prefetch);
  EXPECT_EQ(a.app.shard.recordings, before + 1);
  ASSERT_TRUE(a.app.shard.rec);
  EXPECT_FALSE(a.app.shard.rec->options.prefetch);
}

}  // namespace
}  // namespace glass::viz::app
