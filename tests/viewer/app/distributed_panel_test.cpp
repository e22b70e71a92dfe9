// tests/viewer/app/distributed_panel_test.cpp — tier 2: the Distributed panel through a bare
// ImGui context (imgui_harness.h): the ring grid of ranks × chunks with the step's arrows,
// hovering a cell names the ranks summed into it, play advances the step, and the bucket
// timeline draws every backward node and bucket of every rank.
#include <gtest/gtest.h>
#include <imgui.h>

#include <string>

#include "viewer/app/app.h"
#include "viewer/app/imgui_harness.h"

namespace glass::viz::app {
namespace {

struct DistributedApp {
  ImGuiHarness h;
  App app;
  DistributedApp() {
    app.panels = Panels::DistributedOnly;
    app.open_distributed();
    h.frame(app);  // ImGui sizes a new window's contents on its first frame: settle first
    h.frame(app);
  }
  Rect cell(int rank, int chunk) const {
    for (const auto& [rc, r] : app.distributed.cell_rects)
      if (rc == std::make_pair(rank, chunk)) return r;
    ADD_FAILURE() << "no cell for rank " << rank << ", chunk " << chunk;
    return {};
  }
};

TEST(DistributedPanel, DrawsTheRingGridAndEveryRanksBuckets) {
  DistributedApp a;
  const DistributedView& v = a.app.distributed;
  ASSERT_TRUE(v.ring && v.ddp);
  EXPECT_EQ(v.cell_rects.size(), 16u);  // 4 ranks × 4 chunks
  EXPECT_EQ(v.arrows, 0);               // the start: nothing sent yet
  size_t nodes = 0, buckets = 0;
  for (const DdpRankTimeline& t : v.ddp->ranks)
    nodes += t.nodes.size(), buckets += t.buckets.size();
  EXPECT_EQ(v.node_bars.size(), nodes);
  EXPECT_EQ(v.bucket_bars.size(), buckets);
  // Rank 1's row is below rank 0's; chunk 1 is right of chunk 0.
  EXPECT_GE(a.cell(1, 0).y0, a.cell(0, 0).y1 - 0.5f);
  EXPECT_GE(a.cell(0, 1).x0, a.cell(0, 0).x1 - 0.5f);
}

TEST(DistributedPanel, HoverNamesTheRanksInACellAndTheStepDrawsOneArrowPerRank) {
  DistributedApp a;
  a.app.distributed.frame = 2;  // after reduce-scatter step 2 (of 3)
  a.h.frame(a.app);
  EXPECT_EQ(a.app.distributed.arrows, 4);
  const Rect c = a.cell(1, 3);  // rank 1's chunk 3 holds ranks 3, 0 and 1: 8 + 1 + 2
  a.h.frame(a.app, c.cx(), c.cy());
  const std::string& text = a.app.distributed.hover_text;
  EXPECT_NE(text.find("rank 1, chunk 3: 11 = ranks 0 + 1 + 3 (3 of 4 summed in"), std::string::npos)
      << text;
}

TEST(DistributedPanel, PlayAdvancesOneStepPerSecondAndWrapsRound) {
  DistributedApp a;
  a.app.distributed.playing = true;
  ImGui::GetIO().DeltaTime = 0.6f;
  a.h.frame(a.app);
  EXPECT_EQ(a.app.distributed.frame, 0);
  a.h.frame(a.app);
  EXPECT_EQ(a.app.distributed.frame, 1);
  a.app.distributed.frame = static_cast<int>(a.app.distributed.ring->frames.size()) - 1;
  a.h.frame(a.app);
  a.h.frame(a.app);
  EXPECT_EQ(a.app.distributed.frame, 0);
}

TEST(DistributedPanel, HoveringABucketShowsItsParametersAndTimes) {
  DistributedApp a;
  const Rect b = a.app.distributed.bucket_bars.front().second;
  a.h.frame(a.app, (b.x0 + b.x1) / 2, b.cy());
  const std::string& text = a.app.distributed.hover_text;
  EXPECT_NE(text.find("bucket"), std::string::npos) << text;
  EXPECT_NE(text.find("all-reduce"), std::string::npos) << text;
}

}  // namespace
}  // namespace glass::viz::app
