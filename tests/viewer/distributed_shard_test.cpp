// tests/viewer/distributed_shard_test.cpp — record_sharding against the model-state
// arithmetic: DDP holds 16Ψ per rank and never drops below it during the step (the flat
// line), FSDP holds 16Ψ/N at rest and rises and falls by a unit's gather once per unit in
// forward (the sawtooth); the ownership map tiles every parameter's dim 0, padding last;
// the summary and the SVG say so.
#include "viewer/distributed_shard.h"

#include <gtest/gtest.h>

#include <string>

namespace glass::viz {
namespace {

// Everything a rank allocates is counted, not only the model state: its inputs (8 KiB), and
// every block as the CPU allocator hands it out, rounded up to one of four sizes per power
// of two (core/allocator.cpp), as cpu_memory_stats() counts too. FSDP's shards here are
// powers of two; DDP's buckets are not, and round up by about 380 KiB (5% of 16Ψ).
constexpr double kFsdpTolerance = 0.02, kDdpTolerance = 0.08;

const ShardRecording& two_ranks() {
  static const ShardRecording rec = record_sharding({.world_size = 2});
  return rec;
}

TEST(RecordSharding, DdpAtRestIsTheWholeModelStateOnEveryRank) {
  const ShardRecording& rec = two_ranks();
  // 256-512-512-128: Ψ = (256 + 1) 512 + (512 + 1) 512 + (512 + 1) 128.
  EXPECT_EQ(rec.parameters, 257 * 512 + 513 * 512 + 513 * 128);
  ASSERT_EQ(rec.ddp.ranks.size(), 2u);
  for (const RankMemoryCurve& c : rec.ddp.ranks) {
    EXPECT_NEAR(static_cast<double>(c.at_rest) / rec.ddp_model_state(), 1.0, kDdpTolerance)
        << "rank " << c.rank << ": " << c.at_rest << " bytes";
    EXPECT_GE(c.at_rest, static_cast<int64_t>(rec.ddp_model_state()));
  }
}

TEST(RecordSharding, FsdpAtRestIsANthOfIt) {
  const ShardRecording& rec = two_ranks();
  ASSERT_EQ(rec.fsdp.ranks.size(), 2u);
  for (const RankMemoryCurve& c : rec.fsdp.ranks) {
    EXPECT_NEAR(static_cast<double>(c.at_rest) / rec.fsdp_model_state(), 1.0, kFsdpTolerance)
        << "rank " << c.rank << ": " << c.at_rest << " bytes";
    EXPECT_LT(c.peak, rec.ddp.ranks[static_cast<size_t>(c.rank)].at_rest);
  }
}

TEST(RecordSharding, DdpsLineIsFlatItNeverDropsBelowItsStateAtRest) {
  const ShardRecording& rec = two_ranks();
  const int64_t threshold = gather_threshold(rec);
  for (const RankMemoryCurve& c : rec.ddp.ranks) {
    ASSERT_FALSE(c.samples.empty());
    EXPECT_EQ(c.low, c.at_rest) << "rank " << c.rank;
    for (const MemorySample& s : c.samples) EXPECT_GE(s.bytes, c.at_rest);
    EXPECT_EQ(c.end, c.at_rest) << "rank " << c.rank;
    // Forward only adds activations (a few KiB): nothing of a unit's size comes or goes.
    EXPECT_EQ(count_peaks(c, threshold, ShardPhase::Forward), 0) << "rank " << c.rank;
    EXPECT_EQ(count_drops(c, threshold, ShardPhase::Forward), 0) << "rank " << c.rank;
    EXPECT_EQ(count_rises(c, threshold, ShardPhase::Forward), 0) << "rank " << c.rank;
    // It rises by less than FSDP's does (activations, Adam's temporaries).
    const RankMemoryCurve& f = rec.fsdp.ranks[static_cast<size_t>(c.rank)];
    EXPECT_LT(c.peak - c.at_rest, f.peak - f.at_rest) << "rank " << c.rank;
  }
}

TEST(RecordSharding, FsdpsLineIsASawtoothAGatherAndAFreePerUnitInForward) {
  const ShardRecording& rec = two_ranks();
  ASSERT_EQ(rec.units.size(), 3u);  // fc1, fc2, fc3; the root owns nothing
  EXPECT_EQ(rec.units[0].module, "fc1");
  EXPECT_EQ(rec.units[0].gathered_bytes, (512 * 256 + 512) * 4);
  EXPECT_EQ(rec.units[1].gathered_bytes, (512 * 512 + 512) * 4);  // d0 = 512 cuts evenly
  int64_t largest = 0;
  for (const ShardUnit& u : rec.units) largest = std::max(largest, u.gathered_bytes);
  const int64_t threshold = gather_threshold(rec);
  EXPECT_EQ(threshold, rec.units[2].gathered_bytes / 2);
  for (const RankMemoryCurve& c : rec.fsdp.ranks) {
    // Each unit's weight is gathered in one piece before its forward and freed after it.
    // Nothing else in forward is that large (activations are 16 KiB).
    EXPECT_EQ(count_rises(c, threshold, ShardPhase::Forward), static_cast<int>(rec.units.size()))
        << "rank " << c.rank;
    EXPECT_EQ(count_drops(c, threshold, ShardPhase::Forward), static_cast<int>(rec.units.size()))
        << "rank " << c.rank;
    EXPECT_GE(c.peak - c.at_rest, largest) << "rank " << c.rank;
    // zero_grad freed the gradients' rows: 4Ψ/N, less the rows of nothing.
    EXPECT_NEAR(static_cast<double>(c.at_rest - c.low), 4.0 * rec.parameters / 2, 64 * 1024.0)
        << "rank " << c.rank;
    EXPECT_EQ(c.end, c.at_rest) << "rank " << c.rank << ": a gather was not freed";
  }
}

TEST(RecordSharding, WithoutPrefetchEachUnitIsItsOwnPeak) {
  // With prefetch the next unit's gather starts before this one's free, so two peaks can
  // merge into one; without it the line rises and falls once per unit.
  const ShardRecording rec = record_sharding({.world_size = 2, .prefetch = false});
  for (const RankMemoryCurve& c : rec.fsdp.ranks)
    EXPECT_GE(count_peaks(c, gather_threshold(rec), ShardPhase::Forward),
              static_cast<int>(rec.units.size()))
        << "rank " << c.rank;
  // Prefetch holds a second unit while one runs: its peak is higher by about fc1's gather.
  EXPECT_GT(two_ranks().fsdp.peak(), rec.fsdp.peak());
}

TEST(RecordSharding, SamplesAreInOrderAndPhasesFollowEachOther) {
  const ShardRecording& rec = two_ranks();
  for (const RungRecording* rung : {&rec.ddp, &rec.fsdp}) {
    int64_t total = 0;
    for (const RankMemoryCurve& c : rung->ranks) {
      total += static_cast<int64_t>(c.samples.size());
      for (size_t i = 1; i < c.samples.size(); ++i)
        EXPECT_LT(c.samples[i - 1].order, c.samples[i].order);
      ASSERT_EQ(c.phases.size(), 4u);
      EXPECT_EQ(c.phases[0].phase, ShardPhase::ZeroGrad);
      EXPECT_EQ(c.phases[1].phase, ShardPhase::Forward);
      EXPECT_EQ(c.phases[2].phase, ShardPhase::Backward);
      EXPECT_EQ(c.phases[3].phase, ShardPhase::Step);
      for (size_t i = 0; i < c.phases.size(); ++i) {
        EXPECT_LE(c.phases[i].begin, c.phases[i].end);
        EXPECT_LE(c.phases[i].end, rung->orders);
        if (i > 0) {
          EXPECT_EQ(c.phases[i - 1].end, c.phases[i].begin);
        }
      }
    }
    EXPECT_EQ(total, rung->orders) << rung->name;
  }
}

void expect_tiles(const ParamOwnership& p, int world) {
  ASSERT_EQ(p.ranks.size(), static_cast<size_t>(world)) << p.name;
  const int64_t d0 = p.shape.at(0);
  EXPECT_EQ(p.rows_per_rank, (d0 + world - 1) / world) << p.name;
  int64_t next = 0;
  bool padded = false;
  for (const ParamOwnership::Slice& s : p.ranks) {
    EXPECT_EQ(s.begin, std::min(next, d0)) << p.name;
    EXPECT_EQ(s.end - s.begin + s.padding, p.rows_per_rank) << p.name;
    if (padded) {
      EXPECT_EQ(s.end, s.begin) << p.name << ": real rows after padding";
    }
    padded = padded || s.padding > 0;
    next = s.end;
  }
  EXPECT_EQ(next, d0) << p.name;
}

TEST(RecordSharding, OwnershipTilesEveryParameterEvenly) {
  const ShardRecording& rec = two_ranks();
  ASSERT_EQ(rec.ownership.size(), 6u);
  EXPECT_EQ(rec.ownership[0].name, "fc1.weight");
  EXPECT_EQ(rec.ownership[0].shape, (std::vector<int64_t>{512, 256}));
  for (const ParamOwnership& p : rec.ownership) {
    expect_tiles(p, 2);
    for (const ParamOwnership::Slice& s : p.ranks) EXPECT_EQ(s.padding, 0) << p.name;
  }
}

TEST(RecordSharding, ThreeRanksPadTheLastRanksRows) {
  const ShardRecording rec =
      record_sharding({.world_size = 3, .layers = {64, 128, 10}, .batch = 4});
  ASSERT_EQ(rec.ownership.size(), 4u);
  for (const ParamOwnership& p : rec.ownership) expect_tiles(p, 3);
  // fc2.weight is [10, 128]: 4 rows per rank, rank 2 holds rows 8 and 9 and 2 of padding.
  const ParamOwnership& w = rec.ownership[2];
  EXPECT_EQ(w.name, "fc2.weight");
  EXPECT_EQ(w.rows_per_rank, 4);
  EXPECT_EQ(w.ranks[2].begin, 8);
  EXPECT_EQ(w.ranks[2].end, 10);
  EXPECT_EQ(w.ranks[2].padding, 2);
  // At rest, by the parameter: the rows and their gradient are stored padded (rows_per_rank
  // rows), Adam's two moments only the real rows; plus the inputs x (4, 64) and y (4). The
  // allocator rounds each block up by less than a quarter (four size classes per power of 2).
  for (const RankMemoryCurve& c : rec.fsdp.ranks) {
    int64_t expected = 4 * 64 * 4 + 4 * 8;
    for (const ParamOwnership& p : rec.ownership) {
      const int64_t row_bytes = (p.shape.size() > 1 ? p.shape[1] : 1) * 4;
      const ParamOwnership::Slice& mine = p.ranks[static_cast<size_t>(c.rank)];
      expected += row_bytes * (2 * p.rows_per_rank + 2 * (mine.end - mine.begin));
    }
    EXPECT_GE(c.at_rest, expected) << "rank " << c.rank;
    EXPECT_LE(c.at_rest, expected * 5 / 4) << "rank " << c.rank;
  }
  EXPECT_NE(rec.summary().find("fc2.weight [10, 128], 4 rows per rank: rank 0 [0, 4), rank 1 "
                               "[4, 8), rank 2 [8, 10) + 2"),
            std::string::npos)
      << rec.summary();
}

TEST(RecordSharding, SummaryAndSvgNameBothRungsAndEveryRank) {
  const ShardRecording& rec = two_ranks();
  const std::string text = rec.summary();
  EXPECT_NE(text.find("DDP  rank 1: at rest"), std::string::npos) << text;
  EXPECT_NE(text.find("FSDP rank 0: at rest"), std::string::npos) << text;
  EXPECT_NE(text.find("fc1.weight [512, 256], 256 rows per rank: rank 0 [0, 256), rank 1 "
                      "[256, 512)"),
            std::string::npos)
      << text;
  const std::string svg = shard_to_svg(rec);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("class=\"rung DDP\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"rung FSDP\""), std::string::npos);
  EXPECT_NE(svg.find("<polyline class=\"rank1\""), std::string::npos);
  EXPECT_NE(svg.find("rank 1 owns rows [256, 512)"), std::string::npos);
  EXPECT_EQ(svg, shard_to_svg(rec));  // deterministic
}

TEST(RecordSharding, NamesABadOption) {
  try {
    record_sharding({.world_size = 0});
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("world_size must be 1..16, got 0"), std::string::npos);
  }
  EXPECT_THROW(record_sharding({.layers = {8}}), std::exception);
}

}  // namespace
}  // namespace glass::viz
