// lessons/09_cuda_kernels/main.cpp — lesson 09 as a program: how the CUDA kernels are
// written and why the fast ones are fast, shown by the simulated GPU's counters.
// (1) an elementwise add through TensorIterator's metadata; (2) the reduction ladder, five
// rungs written in lesson_kernels.cu; (3) online softmax against three-pass; (4) the matmul
// ladder gemm_v1..v5; (5) the shared-memory race detector.
//
// Everything printed on stdout comes from the simulator (counters, its race detector) and is
// deterministic, so the lesson_09_output test compares it with README.md. That is why this
// program always runs on the simulated GPU, even where a real one is visible: the counters
// exist only there, and the lesson's own kernels are compiled only for it. Timings go to
// stderr, each line starting with "[time]"; GFLOP/s on a real GPU come from
// scripts/gpu_check.sh (bench_cuda_gemm), not from here.
//
// Invariant: stdout is deterministic and machine-independent (addresses, directories and
// source line numbers in error messages are replaced by placeholders), so README.md can
// quote it character for character.
//
// [SECTION] helpers   [SECTION] 1-5   [SECTION] main
#include <glass/glass.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/kernels/gemm.h"
#include "cuda/kernels/kernels.h"
#include "cuda/kernels/offset_calculator.cuh"
#include "cuda/sim/kernel_stats.h"
#include "cuda/sim/sim_runtime.h"
#include "lesson_kernels.h"

namespace {

using glass::Tensor;
namespace cuda = glass::cuda;
namespace sim = glass::cuda::sim;
using Clock = std::chrono::steady_clock;

// [SECTION] helpers ----------------------------------------------------------------------

void section(const char* title) { std::cout << "== " << title << " ==\n"; }

glass::TensorOptions on_gpu() { return glass::TensorOptions().device(glass::kCUDA); }

std::string fixed(double v, int decimals) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << v;
  return os.str();
}

// A right-aligned column.
std::string col(const std::string& s, int width) {
  return s.size() >= static_cast<size_t>(width) ? s : std::string(width - s.size(), ' ') + s;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.cpu() - b.cpu()).abs().max().item<double>();
}

// Error messages quote device addresses, source paths and line numbers, which change from
// machine to machine and edit to edit: the output writes <address>, the file's name only,
// and <line>.
std::string portable(const std::string& s) {
  static const std::regex hex("0x[0-9a-f]+"), dirs("/[^ :]*/"), line(R"((\.\w+):\d+)");
  return std::regex_replace(std::regex_replace(std::regex_replace(s, hex, "<address>"), dirs, ""),
                            line, "$1:<line>");
}

// What f launched, counted by the simulator (it waits for the device, before too: a kernel
// queued earlier that ran inside the scope would be counted).
sim::KernelStats counted(const std::function<void()>& f) {
  cuda::synchronize();
  sim::ScopedKernelStats stats;
  f();
  cuda::synchronize();
  return stats.total();
}

// [SECTION] 1. elementwise through TensorIterator ----------------------------------------

void elementwise() {
  section("1. elementwise through TensorIterator");
  // x is a transpose (not contiguous); y is a row, broadcast down x's 3 rows.
  // (Transposed on the device: a copy to the device would make it contiguous.)
  const Tensor x = glass::arange(6).to(glass::kFloat).reshape({2, 3}).to(glass::kCUDA).t();
  const Tensor y = glass::tensor({10.0f, 20.0f}).to(glass::kCUDA);
  std::cout << "x: shape " << x.sizes() << ", strides " << x.strides()
            << " (a transpose); y: shape " << y.sizes() << " (broadcast)\n";
  glass::TensorIterator iter =
      glass::TensorIteratorConfig("add").add_output(Tensor()).add_input(x).add_input(y).build();
  std::cout << "the iterator: shape " << iter.shape() << " (dim 0 innermost), strides in bytes:\n";
  const char* names[] = {"out", "x  ", "y  "};
  for (int k = 0; k < iter.ntensors(); ++k)
    std::cout << "   " << names[k] << " " << iter.strides(k) << "\n";
  const auto calc = cuda::make_offset_calculator<3>(iter);
  std::cout << "what thread i computes from them (OffsetCalculator::get), offsets in bytes:\n";
  for (int64_t i = 0; i < iter.numel(); ++i) {
    int64_t offsets[3];
    calc.get(i, offsets);
    std::cout << "   i = " << i << ": out +" << offsets[0] << ", x +" << offsets[1] << ", y +"
              << offsets[2] << "\n";
  }
  const Tensor z = x + y;
  std::cout << "x + y on cuda:0 equals it on the CPU: " << std::boolalpha
            << glass::equal(z.cpu(), x.cpu() + y.cpu()) << std::noboolalpha << "\n";
}

// [SECTION] 2. the reduction ladder --------------------------------------------------------

void reduction_ladder() {
  section("2. the reduction ladder");
  const int64_t n = int64_t{1} << 16;
  glass::manual_seed(9);
  const Tensor x_cpu = glass::rand({n});
  const Tensor x = x_cpu.to(glass::kCUDA);
  const double want = x_cpu.to(glass::kDouble).sum().item<double>();
  std::cout << "sum of " << n << " floats, blocks of " << lesson09::kBlock
            << " threads; two launches: partial sums per block, then one block sums them\n";
  std::cout << "rung                    blocks  rel.err<1e-6  global loads  shared ld/st  "
               "barriers  warp syncs\n";
  for (int rung = 1; rung <= 5; ++rung) {
    const int64_t blocks = lesson09::partials_needed(rung, n);
    const Tensor partials = glass::empty({blocks}, on_gpu());
    const Tensor out = glass::empty({1}, on_gpu());
    const auto t0 = Clock::now();
    const sim::KernelStats s = counted([&] { lesson09::ladder_sum(rung, x, partials, out); });
    std::cerr << "[time] rung " << rung << ": " << fixed(ms_since(t0), 1) << " ms\n";
    const double err = std::abs(out.cpu().item<double>() - want) / want;
    std::cout << std::to_string(rung) << " " << std::left << std::setw(21)
              << lesson09::rung_name(rung) << std::right << col(std::to_string(blocks), 7)
              << col(err < 1e-6 ? "yes" : "NO", 13)
              << col(std::to_string(s.global_load_bytes) + " B", 14)
              << col(std::to_string(s.shared_loads) + "/" + std::to_string(s.shared_stores), 14)
              << col(std::to_string(s.barriers), 10) << col(std::to_string(s.warp_syncs), 12)
              << "\n";
  }
  std::cout << "the library's sum (cuda/kernels/reduce.cu) keeps rung 5's grid-stride loop; its "
               "block reduction shuffles first (block_reduce, reduce.cuh)\n";
}

// [SECTION] 3. online softmax against three-pass -------------------------------------------

void softmax() {
  section("3. online softmax against three-pass");
  const int64_t rows = 8, n = 1000;
  glass::manual_seed(3);
  const Tensor x = (glass::randn({rows, n}) * 4).to(glass::kCUDA);
  const Tensor online = glass::empty({rows, n}, on_gpu());
  const Tensor three = glass::empty({rows, n}, on_gpu());
  const sim::KernelStats s3 =
      counted([&] { cuda::sim::launch_softmax_three_pass(x, rows, n, 1, /*log=*/false, three); });
  const sim::KernelStats s2 =
      counted([&] { cuda::sim::launch_softmax(x, rows, n, 1, /*log=*/false, online); });
  std::cout << rows << " rows of " << n << " floats (" << n * 4 << " bytes a row)\n";
  std::cout << "   three-pass (max, then sum of exp, then write): " << s3.global_load_bytes / rows
            << " bytes loaded per row\n";
  std::cout << "   online (max and sum together, then write):     " << s2.global_load_bytes / rows
            << " bytes loaded per row\n";
  std::cout << "   both write each row once: " << s3.global_store_bytes / rows << " and "
            << s2.global_store_bytes / rows << " bytes stored per row\n";
  std::cout << "   max |online - three-pass| < 1e-6: " << std::boolalpha
            << (max_abs_diff(online, three) < 1e-6) << ", max |online - CPU softmax| < 1e-6: "
            << (max_abs_diff(online, x.cpu().softmax(1)) < 1e-6) << std::noboolalpha << "\n";
}

// [SECTION] 4. the matmul ladder -----------------------------------------------------------

void matmul_ladder() {
  section("4. the matmul ladder");
  const int64_t m = 256;
  glass::manual_seed(4);
  const Tensor a = glass::randn({m, m}).to(glass::kCUDA), b = glass::randn({m, m}).to(glass::kCUDA);
  const double elements = static_cast<double>(m * m);
  std::cout << m << " x " << m << " x " << m
            << " float; counters per element of C (global loads in bytes)\n";
  std::cout << "rung                 max|diff| vs v1  global loads  shared loads  barriers  "
               "flops/byte\n";
  const char* names[] = {
      "", "v1 naive", "v2 coalesced", "v3 shared tiles", "v4 register tiles", "v5 vectorized"};
  Tensor c1;
  for (int v = 1; v <= 5; ++v) {
    cuda::GemmVersionGuard rung(static_cast<cuda::GemmVersion>(v));
    Tensor c;
    const auto t0 = Clock::now();
    const sim::KernelStats s = counted([&] { c = glass::matmul(a, b); });
    std::cerr << "[time] gemm v" << v << " on the simulator: " << fixed(ms_since(t0), 0) << " ms\n";
    if (v == 1) c1 = c;
    std::cout << std::left << std::setw(20) << names[v] << std::right
              << col(v == 1 ? "-" : (max_abs_diff(c, c1) < 1e-3 ? "< 1e-3" : "LARGE"), 16)
              << col(fixed(s.global_load_bytes / elements, 1), 14)
              << col(fixed(s.shared_loads / elements, 1), 14)
              << col(fixed(s.barriers / elements, 3), 10)
              << col(fixed(s.arithmetic_intensity(), 2), 12) << "\n";
  }
  std::cout << "GFLOP/s and % of cuBLAS: scripts/gpu_check.sh runs bench_cuda_gemm on a GPU\n";
}

// [SECTION] 5. the race detector -----------------------------------------------------------

void race_detector() {
  section("5. the race detector");
  const Tensor x = glass::ones({lesson09::kBlock}, on_gpu());
  const Tensor out = glass::zeros({1}, on_gpu());
  std::cout << "rung 2 without the __syncthreads() in its loop, one block, checking on:\n";
  try {
    lesson09::racy_block_sum(x, out);
    cuda::synchronize();
    std::cout << "   (no error)\n";
  } catch (const glass::Error& e) {
    std::cout << "   glass::Error: " << portable(e.what()) << "\n";
  }
  sim::simulator().reset_sticky_error(0);
  lesson09::fixed_block_sum(x, out);
  std::cout << "with the barrier (rung 2): sum of " << lesson09::kBlock
            << " ones = " << out.cpu().item<float>() << ", no error\n";
}

}  // namespace

// [SECTION] main -----------------------------------------------------------------------------

int main() {
  cuda::use_simulator();  // the counters and the lesson's kernels exist only there
  sim::simulator().set_race_check(true);
  const auto t0 = Clock::now();
  elementwise();
  reduction_ladder();
  softmax();
  matmul_ladder();
  race_detector();
  std::cerr << "[time] lesson 09: " << fixed(ms_since(t0) / 1000, 1) << " s\n";
  return 0;
}
