// lessons/09_cuda_kernels/exercises/exercises_test.cpp — grades lesson 09's exercises on the
// simulated GPU with checking on (bounds, shared-memory races, divergent barriers).
// Invariant: an answer passes only if its own kernel did the work, with the technique the
// exercise is about. Each test runs the launcher on tensors it made beforehand (outputs
// filled with NaN, so an element left unwritten fails) and checks, besides the values
// (against float64 on the CPU):
//  - what the launcher ran: no tensor op (core's event channel sees every dispatched op),
//    no copy or memset, exactly one kernel record with the contract's grid and block, and
//    checking still on afterwards;
//  - that the kernel it launched is the exercise's kernel: the test launches that kernel
//    itself with the contract's grid and the two launches must count the same, counter for
//    counter (a launch renamed to look like it is caught here);
//  - the counters the technique gives, exactly or within a stated range;
//  - the answer's source: only the includes exercises.h allows, none of the simulator's
//    switches (StudentCodeUsesOnlyWhatIsAllowed).
// Built against solution.cu or student.cu (GLASS_LESSON09_ANSWERS names the file).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <glass/glass.h>

#include "core/events.h"
#include "cuda/sim/kernel_stats.h"
#include "cuda/sim/sim_runtime.h"
#include "cuda/sim/timeline.h"
#include "cuda/stream.h"
#include "exercises.h"

namespace glass::lesson09 {
namespace {

namespace sim = cuda::sim;
using cuda::Dim3;
sim::SimRuntime& simulator() { return sim::simulator(); }

TensorOptions on_gpu() { return TensorOptions().device(kCUDA); }
Tensor nans(IntArrayRef shape) { return full(shape, NAN, on_gpu()); }

// What one call of a launcher did.
struct Ran {
  std::string error;                         // what it (or its kernel) raised, or ""
  sim::KernelStats stats;                    // counted over everything it launched
  std::vector<sim::TimelineRecord> records;  // kernels, copies, memsets, events
  std::vector<std::string> ops;              // tensor ops dispatched while it ran
  bool checks_on = true;                     // race and kernel checks still on afterwards
};

class Lesson09 : public ::testing::Test {
 protected:
  void SetUp() override {
    cuda::use_simulator();
    was_checking_ = simulator().race_check();
    simulator().set_race_check(true);
  }
  void TearDown() override {
    try {
      cuda::synchronize();
    } catch (const Error&) {
      simulator().reset_sticky_error(0);
    }
    simulator().set_race_check(was_checking_);
  }

  // (public: the graders below are free functions)
 public:
  // Runs f and waits for the device, recording what ran.
  static Ran run(const std::function<void()>& f) {
    cuda::synchronize();
    simulator().clear_timeline();
    Ran ran;
    std::mutex mutex;
    {
      events::Subscription ops([&](const events::Event& e) {
        if (e.kind != events::Kind::OpDispatched) return;
        const std::lock_guard<std::mutex> lock(mutex);
        ran.ops.emplace_back(e.name);
      });
      sim::ScopedKernelStats counting;
      try {
        f();
        cuda::synchronize();
      } catch (const Error& e) {
        ran.error = e.what();
        simulator().reset_sticky_error(0);
      }
      ran.stats = counting.total();
    }
    ran.records = simulator().timeline();
    ran.checks_on = simulator().race_check() && sim::kernel_checks();
    return ran;
  }

  // Empty when the launcher's call did exactly what a launcher may: one launch of `kernel`
  // with this grid and block, nothing else, and the kernel counted exactly what the test's
  // own launch of the exercise's kernel (`reference`) counted. Else what was wrong.
  static std::string only_launched(const Ran& ran, const std::string& kernel, Dim3 grid, Dim3 block,
                                   const Ran& reference) {
    std::ostringstream why;
    if (!ran.ops.empty()) {
      why << "the launcher ran tensor ops (";
      for (const std::string& op : ran.ops) why << " " << op;
      why << " ); a launcher only launches its kernel: outputs come allocated by the test. ";
    }
    int kernels = 0;
    for (const sim::TimelineRecord& r : ran.records) {
      if (r.kind == sim::OpKind::Copy || r.kind == sim::OpKind::Memset)
        why << "the launcher queued a " << sim::to_string(r.kind) << " (" << r.name << "). ";
      if (r.kind != sim::OpKind::Kernel) continue;
      ++kernels;
      if (!r.name.ends_with(kernel)) why << "it launched " << r.name << ". ";
      if (r.grid.x != grid.x || r.grid.y != grid.y || r.grid.z != grid.z)
        why << "grid (" << r.grid.x << ", " << r.grid.y << ", " << r.grid.z << "), the contract "
            << "says (" << grid.x << ", " << grid.y << ", " << grid.z << "). ";
      if (r.block.x != block.x || r.block.y != block.y || r.block.z != block.z)
        why << "block (" << r.block.x << ", " << r.block.y << ", " << r.block.z << "), the "
            << "contract says (" << block.x << ", " << block.y << ", " << block.z << "). ";
    }
    if (kernels != 1)
      why << kernels << " kernel launches on the timeline; expected exactly one, of " << kernel
          << " (through GLASS_LAUNCH). ";
    if (!ran.checks_on) why << "race or kernel checking was switched off. ";
    if (ran.stats.launches != 1 || !(ran.stats == reference.stats))
      why << "what the launch did (" << sim::to_string(ran.stats) << ") differs from what the "
          << "test's own launch of " << kernel << " did (" << sim::to_string(reference.stats)
          << "): launch the exercise's kernel. ";
    return why.str();
  }

 private:
  bool was_checking_ = false;
};

// ---- the answer's source ------------------------------------------------------------------

// The answer file with comments blanked out, and string literals too except on #include
// lines (an identifier in a message is not a use of it).
std::string answer_code() {
  std::ifstream in(GLASS_LESSON09_ANSWERS);
  std::stringstream text;
  text << in.rdbuf();
  static const std::regex block_comment(R"(/\*[\s\S]*?\*/)"), line_comment(R"(//[^\n]*)"),
      literal(R"("(\\.|[^"\\])*")");
  std::istringstream lines(
      std::regex_replace(std::regex_replace(text.str(), block_comment, ""), line_comment, ""));
  std::string code;
  for (std::string line; std::getline(lines, line);)
    code +=
        (line.find("#include") != std::string::npos ? line
                                                    : std::regex_replace(line, literal, "\"\"")) +
        "\n";
  return code;
}

TEST(Lesson09Source, StudentCodeUsesOnlyWhatIsAllowed) {
  const std::string code = answer_code();
  ASSERT_FALSE(code.empty()) << "cannot read " << GLASS_LESSON09_ANSWERS;
  const std::set<std::string> allowed = {"\"exercises.h\"", "\"cuda/stream.h\"", "<algorithm>",
                                         "<cmath>",         "<cstdint>",         "<limits>"};
  static const std::regex include(R"(#\s*include\s*(\S+))");
  for (auto it = std::sregex_iterator(code.begin(), code.end(), include);
       it != std::sregex_iterator(); ++it)
    EXPECT_TRUE(allowed.contains((*it)[1].str()))
        << GLASS_LESSON09_ANSWERS << " includes " << (*it)[1].str()
        << "; exercises.h lists what it may include (the library's kernels have the answers)";
  for (const char* name : {"simulator", "set_race_check", "set_kernel_checks", "clear_timeline",
                           "reset_sticky_error", "block_reduce", "warp_reduce", "launch_kernel"})
    EXPECT_FALSE(std::regex_search(code, std::regex(std::string(R"(\b)") + name + R"(\b)")))
        << GLASS_LESSON09_ANSWERS << " names " << name
        << ", which exercises.h does not allow (launch with GLASS_LAUNCH; leave checking on)";
}

// ---- exercise 1 ------------------------------------------------------------------------

// The sum of squares of each row of x, in float64 on the CPU.
std::vector<double> row_sums_of_squares(const Tensor& x) {
  const Tensor c = x.cpu().to(kDouble).contiguous();
  std::vector<double> sums(c.size(0), 0.0);
  for (int64_t i = 0; i < c.numel(); ++i)
    sums[i / c.size(1)] += c.data_ptr<double>()[i] * c.data_ptr<double>()[i];
  return sums;
}

// Runs row_sumsq on x, and row_sumsq_kernel launched by the test; checks what ran and the
// values. Returns the launcher's run.
Ran grade_row_sumsq(const Tensor& x, const std::string& what) {
  const Tensor out = nans({x.size(0)}), ref_out = nans({x.size(0)});
  const Dim3 grid(static_cast<unsigned>(x.size(0))), block(kBlock);
  const Ran ran = Lesson09::run([&] { row_sumsq(x, out); });
  EXPECT_EQ(ran.error, "") << what;
  const Ran reference = Lesson09::run([&] {
    GLASS_LAUNCH(row_sumsq_kernel, grid, block, 0, cuda::getCurrentCUDAStream(),
                 x.packed_accessor32<const float, 2, DevicePtrTraits>(),
                 ref_out.packed_accessor32<float, 1, DevicePtrTraits>());
  });
  EXPECT_EQ(reference.error, "") << what << ": row_sumsq_kernel itself, launched by the test";
  EXPECT_EQ(Lesson09::only_launched(ran, "row_sumsq_kernel", grid, block, reference), "") << what;
  const std::vector<double> want = row_sums_of_squares(x);
  const Tensor got = out.cpu().to(kDouble);
  for (size_t r = 0; r < want.size(); ++r)
    EXPECT_NEAR(got.select(0, static_cast<int64_t>(r)).item<double>(), want[r],
                1e-5 * (1 + want[r]))
        << "out[" << r << "], " << what << " (NaN: never written)";
  return ran;
}

TEST_F(Lesson09, Exercise1SumsSquaresOfEveryRowOfAnyLength) {
  manual_seed(1);
  // 77 and 1000 end inside a warp and a block; 0 is an empty row (the sum is 0).
  for (const int64_t n : {int64_t{256}, int64_t{1000}, int64_t{77}, int64_t{0}}) {
    const Tensor x = randn({3, n}).to(kCUDA);
    grade_row_sumsq(x, "x of shape [3, " + std::to_string(n) + "]");
  }
}

TEST_F(Lesson09, Exercise1ReadsAStridedTensorThroughItsAccessor) {
  manual_seed(2);
  const Tensor x = randn({300, 2}).to(kCUDA).t();  // 2 x 300, strides (1, 2)
  grade_row_sumsq(x, "a transposed x: index it as x[r][j], not through a data pointer");
}

TEST_F(Lesson09, Exercise1ReducesWarpFirstWithOneBarrier) {
  const int64_t rows = 2, n = 512;
  const Ran ran = grade_row_sumsq(ones({rows, n}, on_gpu()), "2 rows of 512 ones");
  // Per block: eight warps each shuffle five times (offsets 16..1), then warp 0 reduces the
  // eight warp sums with three to five more; one barrier between the two; each element
  // loaded once (4 bytes) and one float stored. A serial loop with a token shuffle, or the
  // lesson's tree down to 64 values, counts otherwise.
  const uint64_t warps = kBlock / kWarp;
  EXPECT_EQ(ran.stats.barriers, rows) << "one __syncthreads() per block, between the passes";
  EXPECT_GE(ran.stats.warp_syncs, rows * (warps * 5 + 3)) << "every warp reduces by shuffles";
  EXPECT_LE(ran.stats.warp_syncs, rows * (warps * 5 + 5)) << "every warp reduces by shuffles";
  EXPECT_EQ(ran.stats.global_load_bytes, rows * n * sizeof(float)) << "load each x once";
  EXPECT_EQ(ran.stats.global_store_bytes, rows * sizeof(float)) << "store each out[r] once";
  EXPECT_GT(ran.stats.shared_stores, 0u) << "the warp sums go through GLASS_SHARED memory";
}

// ---- exercise 2 ------------------------------------------------------------------------

// t on cuda:0, as the top-left corner of a tensor kTile larger each way, filled with NaN.
Tensor padded_with_nan(const Tensor& t) {
  Tensor big = full({t.size(0) + kTile, t.size(1) + kTile}, NAN);
  big.slice(0, 0, t.size(0)).slice(1, 0, t.size(1)).copy_(t);
  return big.to(kCUDA).slice(0, 0, t.size(0)).slice(1, 0, t.size(1));
}

Dim3 matmul_grid(int64_t m, int64_t n) {
  return Dim3(static_cast<unsigned>((n + kTile - 1) / kTile),
              static_cast<unsigned>((m + kTile - 1) / kTile));
}

// Runs tiled_matmul(a, b) and the test's own launch of tiled_matmul_kernel; checks what
// ran and the values against `want`. Returns the launcher's run.
Ran grade_matmul(const Tensor& a, const Tensor& b, const Tensor& want, const std::string& what) {
  const Tensor c = nans({a.size(0), b.size(1)}), ref_c = nans({a.size(0), b.size(1)});
  const Dim3 grid = matmul_grid(a.size(0), b.size(1)), block(kTile, kTile);
  const Ran ran = Lesson09::run([&] { tiled_matmul(a, b, c); });
  EXPECT_EQ(ran.error, "") << what;
  const Ran reference = Lesson09::run([&] {
    GLASS_LAUNCH(tiled_matmul_kernel, grid, block, 0, cuda::getCurrentCUDAStream(),
                 a.packed_accessor32<const float, 2, DevicePtrTraits>(),
                 b.packed_accessor32<const float, 2, DevicePtrTraits>(),
                 ref_c.packed_accessor32<float, 2, DevicePtrTraits>());
  });
  EXPECT_EQ(Lesson09::only_launched(ran, "tiled_matmul_kernel", grid, block, reference), "")
      << what;
  EXPECT_TRUE(allclose(c.cpu(), want, 1e-4, 1e-4))
      << what << ": sizes that are not multiples of kTile need guarded loads along K (stage 0 "
      << "outside) and a guarded store; NaN: an element never written, or a NaN read in";
  return ran;
}

TEST_F(Lesson09, Exercise2MatchesTheCpuOnAnySize) {
  manual_seed(3);
  struct Size {
    int64_t m, k, n;
  };
  for (const Size s : {Size{32, 48, 16}, Size{37, 29, 53}, Size{1, 1, 1}, Size{17, 16, 33}}) {
    const Tensor a = randn({s.m, s.k}), b = randn({s.k, s.n});
    // a and b sit inside larger tensors padded with NaN, right and below: a kernel that
    // reads past the end of K (a missing k guard) brings a NaN into a stored element.
    grade_matmul(padded_with_nan(a), padded_with_nan(b), matmul(a, b),
                 std::to_string(s.m) + " x " + std::to_string(s.k) + " times " +
                     std::to_string(s.k) + " x " + std::to_string(s.n));
  }
}

TEST_F(Lesson09, Exercise2TakesTransposedOperands) {
  manual_seed(4);
  const Tensor a = randn({24, 40}), b = randn({20, 24});
  grade_matmul(a.to(kCUDA).t(), b.to(kCUDA).t(), matmul(a.t(), b.t()), "transposed a and b");
}

TEST_F(Lesson09, Exercise2ReusesTilesFromSharedMemory) {
  const int64_t m = 64;  // m = n = k, a multiple of kTile
  manual_seed(5);
  const Tensor a = randn({m, m}), b = randn({m, m});
  const Ran ran = grade_matmul(a.to(kCUDA), b.to(kCUDA), matmul(a, b), "64 x 64 x 64");
  // Each block stages, per step of kTile along K, one tile of a and one of b: 2 * kTile^2
  // floats loaded, each serving kTile products, where the naive kernel loads two floats
  // per product. Two barriers per step (tiles written; tiles read). Each product reads two
  // floats from shared memory (tile writes that leave a value unchanged count as loads,
  // hence the range).
  const uint64_t steps = m / kTile, blocks = (m / kTile) * (m / kTile), products = m * m * m;
  const uint64_t naive = 2 * products * sizeof(float);
  EXPECT_EQ(ran.stats.global_load_bytes, naive / kTile)
      << "each element staged in a tile should serve kTile products (the naive kernel loads "
      << naive << " bytes)";
  EXPECT_EQ(ran.stats.barriers, 2 * steps * blocks)
      << "two __syncthreads() per step along K: after writing the tiles, after reading them";
  EXPECT_GE(ran.stats.shared_loads, 2 * products) << "the products read the tiles";
  EXPECT_LE(ran.stats.shared_loads, 2 * products + 2 * steps * blocks * kTile * kTile);
}

// ---- exercise 3 ------------------------------------------------------------------------

std::vector<double> blurred(const Tensor& x) {
  const Tensor c = x.cpu().to(kDouble).contiguous();
  const double* v = c.data_ptr<double>();
  const int64_t n = c.size(0);
  std::vector<double> y(n);
  for (int64_t i = 0; i < n; ++i)
    y[i] = (i > 0 ? v[i - 1] : 0.0) + v[i] + (i + 1 < n ? v[i + 1] : 0.0);
  return y;
}

TEST_F(Lesson09, Exercise3IsRaceFreeAndRight) {
  manual_seed(5);
  // 1000: kBlurBlocks blocks sweep the input twice, the last tile partial; 5: one block,
  // most of its threads past the end.
  for (const int64_t n : {int64_t{1000}, int64_t{256}, int64_t{5}}) {
    const Tensor x = randn({n}).to(kCUDA);
    const Tensor y = nans({n}), ref_y = nans({n});
    const int64_t tiles = (n + kBlock - 1) / kBlock;
    const Dim3 grid(static_cast<unsigned>(std::min<int64_t>(tiles, kBlurBlocks))), block(kBlock);
    const Ran ran = run([&] { blur(x, y); });
    ASSERT_EQ(ran.error, "") << "n = " << n << ": the simulator stopped your kernel. A shared-"
                             << "memory race needs a __syncthreads() between the two accesses "
                             << "it names.\n";
    // The kernel itself, on the contract's grid: a fix that only works on more blocks (one
    // tile each, so no tile is ever overwritten) races here.
    const Ran reference = run([&] {
      GLASS_LAUNCH(blur_kernel, grid, block, 0, cuda::getCurrentCUDAStream(),
                   x.packed_accessor32<const float, 1, DevicePtrTraits>(),
                   ref_y.packed_accessor32<float, 1, DevicePtrTraits>());
    });
    ASSERT_EQ(reference.error, "") << "n = " << n << ", blur_kernel on grid " << grid.x;
    EXPECT_EQ(only_launched(ran, "blur_kernel", grid, block, reference), "") << "n = " << n;
    const std::vector<double> want = blurred(x);
    const Tensor got = y.cpu().to(kDouble).contiguous();
    for (int64_t i = 0; i < n; ++i)
      ASSERT_NEAR(got.data_ptr<double>()[i], want[i], 1e-5) << "y[" << i << "], n = " << n;
    EXPECT_EQ(ran.stats.barriers, static_cast<uint64_t>(2 * tiles))
        << "two barriers per tile: after staging it, and after reading it (n = " << n << ")";
  }
}

}  // namespace
}  // namespace glass::lesson09
