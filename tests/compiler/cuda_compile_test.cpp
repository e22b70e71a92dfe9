// tests/compiler/cuda_compile_test.cpp — fused groups on CUDA tensors, generated as CUDA C++
// and run on the simulated GPU (with its checks on: every access bounds-checked), against
// the same ops run eagerly on the device and on the CPU; what one fused launch moves; and
// glass::compile end to end on CUDA tensors, gradients included.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/cuda_pointwise.h"
#include "compiler/kernel_cache.h"
#include "compiler/nvrtc.h"
#include "compiler/pointwise_testing.h"
#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/linalg.h"
#include "core/ops/pointwise.h"
#include "core/ops/random.h"
#include "cuda/cuda.h"
#include "cuda/sim/kernel_stats.h"
#include "cuda/sim/sim_runtime.h"

namespace glass::compiler {
namespace {

class CudaCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!host_compiler().available()) GTEST_SKIP() << "no C++ compiler on this machine";
    ::setenv("GLASS_CACHE_DIR", GLASS_TEST_CACHE_DIR, 1);
    ::setenv("GLASS_SIM_CHECK", "1", 1);  // bounds and race checks on every access
    cuda::use_simulator();
    ASSERT_EQ(cuda_codegen_unavailable(), "");
  }
  void TearDown() override { ::unsetenv("GLASS_CACHE_DIR"); }
};

Tensor dev(const Tensor& t) { return t.to(Device(kCUDA, 0)); }

PointwiseProgram seed_chain(ScalarType dtype) {
  PointwiseProgram p;
  const int a = p.input(0, dtype), b = p.input(1, dtype);
  const int ab_a = p.binary(BinaryOp::Add, p.binary(BinaryOp::Mul, a, b), a);
  const int t = p.binary(BinaryOp::Sub, p.binary(BinaryOp::Mul, ab_a, p.scalar(0.5)), b);
  p.set_output(p.unary(UnaryOp::Sigmoid, p.unary(UnaryOp::Relu, t)));
  return p;
}

std::vector<Tensor> on_cpu(const std::vector<Tensor>& xs) {
  std::vector<Tensor> out;
  for (const Tensor& x : xs) out.push_back(x.cpu());
  return out;
}

TEST_F(CudaCompile, TheSourceUsesEagersDeviceFunctorsAndRefusesReductions) {
  const std::string src = emit_cuda({seed_chain(kFloat)});
  for (const char* part :
       {"#include \"cuda/kernel.h\"", "#include \"cuda/kernels/pointwise_ops.cuh\"",
        "__global__ void glass_cuda_kernel_0(int64_t n, Offsets<3> calc",
        "__global__ void glass_cuda_kernel_0_flat(int64_t n, gptr<float> out",
        "SigmoidOp<float>{}(", "ReluOp<float>{}(", "MulOp<float>{}(", "static_cast<float>(0x1p-1)",
        "extern \"C\" void glass_cuda_launch_0("})
    EXPECT_NE(src.find(part), std::string::npos) << part << "\n" << src;
  PointwiseProgram sum = seed_chain(kFloat);
  sum.reduce(ReduceOp::Sum);
  try {
    emit_cuda({sum});
    FAIL() << "a reduction was emitted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ends in a reduction"), std::string::npos) << e.what();
  }
}

TEST_F(CudaCompile, OneFusedLaunchMovesEachArrayOnceAndEqualsEagerCuda) {
  Generator gen = make_generator(Device(kCPU), 3);
  const int64_t n = 10000;  // not a multiple of a block's 2048 elements
  const Tensor a = randn({n}, gen), b = randn({n}, gen);
  const auto kernels = compile_cuda_pointwise({seed_chain(kFloat)});
  cuda::sim::simulator().clear_timeline();
  Tensor got;
  uint64_t loaded = 0, stored = 0;
  {
    cuda::sim::ScopedKernelStats stats;
    got = kernels[0]({dev(a), dev(b)});
    cuda::synchronize();
    loaded = stats.total().global_load_bytes;
    stored = stats.total().global_store_bytes;
  }
  EXPECT_TRUE(got.is_cuda());
  // Two inputs read once and the output written once: 12 bytes an element. Eager's six
  // ops move 3 + 3 + 2 + 3 + 2 + 2 = 15 arrays (x * 0.5 reads one, its 0.5 is a value).
  EXPECT_EQ(loaded, uint64_t(2 * 4 * n));
  EXPECT_EQ(stored, uint64_t(4 * n));
  int fused = 0;
  for (const auto& r : cuda::sim::simulator().timeline()) fused += r.name == "fused_0";
  EXPECT_EQ(fused, 1);
  const Tensor eager = ((dev(a) * dev(b) + dev(a)) * 0.5 - dev(b)).relu().sigmoid();
  EXPECT_EQ(close(got.cpu(), eager.cpu(), 1e-6, 1e-7), "");
  EXPECT_EQ(close(got.cpu(), ((a * b + a) * 0.5 - b).relu().sigmoid(), 1e-6, 1e-7), "");
}

TEST_F(CudaCompile, RandomGroupsOnBroadcastAndTransposedInputsEqualEagerOnTheDevice) {
  std::mt19937 rng(2027);
  std::vector<PointwiseProgram> programs;
  std::vector<std::vector<Tensor>> inputs;
  Generator gen = make_generator(Device(kCPU), 8);
  for (int i = 0; i < 60; ++i) {
    const ScalarType dtype = i % 2 ? kDouble : kFloat;
    const int n_inputs = 1 + static_cast<int>(rng() % 3);
    programs.push_back(random_program(rng, dtype, n_inputs));
    inputs.push_back(random_inputs(rng, gen, n_inputs, dtype, Device(kCUDA, 0)));
  }
  const std::vector<CompiledCudaPointwise> compiled = compile_cuda_pointwise(programs);
  for (size_t i = 0; i < programs.size(); ++i) {
    const Tensor got = compiled[i](inputs[i]);
    ASSERT_TRUE(got.is_cuda());
    const bool f32 = programs[i].inputs[0] == kFloat;
    const double rtol = f32 ? 1e-5 : 1e-12, atol = f32 ? 1e-6 : 1e-14;
    // Eager on the device (the same functors), and the CPU (another implementation).
    EXPECT_EQ(close(got.cpu(), interpret_pointwise(programs[i], inputs[i]).cpu(), rtol, atol), "")
        << "group " << i << ":\n"
        << programs[i].to_string();
    EXPECT_EQ(close(got.cpu(), interpret_pointwise(programs[i], on_cpu(inputs[i])), rtol, atol), "")
        << "group " << i << " against the CPU:\n"
        << programs[i].to_string();
  }
}

TEST_F(CudaCompile, IntegerBoolPromotionWhereAndClampFollowEagerMode) {
  PointwiseProgram p;
  const int i = p.input(0, kLong), f = p.input(1, kFloat), m = p.input(2, kBool);
  const int scaled = p.binary(BinaryOp::Mul, i, p.scalar(3));          // int64
  const int clamped = p.clamp(scaled, Scalar(-4), Scalar(10));         // int64 clamp
  const int mixed = p.binary(BinaryOp::Add, clamped, f);               // float
  const int pow_i = p.binary(BinaryOp::Pow, i, p.scalar(2));           // integer pow
  const int cmp = p.binary(BinaryOp::Ge, pow_i, p.scalar(4));          // bool
  const int both = p.binary(BinaryOp::LogicalAnd, cmp, m);             // bool
  const int chosen = p.where(both, mixed, p.unary(UnaryOp::Sign, f));  // float
  p.set_output(p.binary(BinaryOp::Maximum, chosen, p.unary(UnaryOp::Neg, mixed)));
  const Tensor ii = tensor({-3, -1, 0, 1, 2, 5}).to(kLong);
  const Tensor ff = tensor({0.5f, -2.0f, NAN, 1.0f, -0.0f, 3.0f});
  const Tensor mm = tensor({1, 1, 0, 1, 0, 1}).to(kBool);
  const auto compiled = compile_cuda_pointwise({p});
  const Tensor got = compiled[0]({dev(ii), dev(ff), dev(mm)});
  EXPECT_EQ(close(got.cpu(), interpret_pointwise(p, {ii, ff, mm}), 0, 0), "");
  EXPECT_EQ(got.dtype(), kFloat);
}

TEST_F(CudaCompile, BadCallsAreNamed) {
  const auto compiled = compile_cuda_pointwise({seed_chain(kFloat)});
  const Tensor a = ones({4});
  const auto message = [&](std::vector<Tensor> in) {
    try {
      compiled[0](in);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({a, a}).find("input 0 is on cpu; this kernel was compiled for kCUDA"),
            std::string::npos)
      << message({a, a});
  EXPECT_NE(message({dev(a), dev(a).to(kDouble)}).find("input 1 must be float32"),
            std::string::npos);
  EXPECT_NE(message({dev(a)}).find("takes 2 inputs, got 1"), std::string::npos);
}

// glass::compile on CUDA tensors: the chain fuses into one CUDA group, equal to eager.
TEST_F(CudaCompile, CompileFusesAChainOnCudaTensorsIntoOneKernel) {
  auto f = glass::compile([](const Tensor& a, const Tensor& b) {
    return ((a * b + a) * 0.5 - b).relu().sigmoid() * 2;
  });
  Generator gen = make_generator(Device(kCPU), 5);
  const Tensor a = dev(randn({64, 33}, gen)), b = dev(randn({33}, gen));
  Tensor got;
  {
    NoGradGuard no_grad;
    got = f(a, b);
    got = f(a, b);  // the compiled variant
  }
  const VariantInfo info = f.variants().at(0);
  EXPECT_EQ(info.fused_groups, 1);
  ASSERT_EQ(info.sources.size(), 1u);
  EXPECT_NE(info.sources[0].find("__global__"), std::string::npos);
  const Tensor eager = ((a * b + a) * 0.5 - b).relu().sigmoid() * 2;
  EXPECT_TRUE(got.is_cuda());
  EXPECT_EQ(close(got.cpu(), eager.cpu(), 1e-6, 1e-7), "");
}

// With grad, the forward runs fused on the device under one autograd node; the gradients
// equal eager's.
TEST_F(CudaCompile, GradientsThroughACompiledCudaFunctionEqualEager) {
  auto fn = [](const Tensor& a, const Tensor& b) { return (a * b + a.tanh()).sigmoid() - b; };
  auto f = glass::compile(fn);
  Generator gen = make_generator(Device(kCPU), 9);
  const Tensor a0 = randn({5, 7}, gen), b0 = randn({7}, gen);
  Tensor a = dev(a0).requires_grad_(), b = dev(b0).requires_grad_();
  f(a, b).sum().backward();
  const VariantInfo info = f.variants().at(0);
  EXPECT_TRUE(info.one_node);
  EXPECT_EQ(info.fused_groups, 1);
  Tensor ea = dev(a0).requires_grad_(), eb = dev(b0).requires_grad_();
  fn(ea, eb).sum().backward();
  EXPECT_EQ(close(a.grad().cpu(), ea.grad().cpu(), 1e-6, 1e-7), "");
  EXPECT_EQ(close(b.grad().cpu(), eb.grad().cpu(), 1e-6, 1e-7), "");
}

// The backward's joint graph on the device: the chain recomputed inside each gradient's
// kernel, so the backward reads a, b and the output's gradient once per kernel and writes
// each gradient once.
TEST_F(CudaCompile, TheJointBackwardOnTheDeviceMovesEachArrayOncePerGradient) {
  auto fn = [](const Tensor& a, const Tensor& b) {
    return ((a * b + a) * 0.5 - b).relu().sigmoid();
  };
  auto f = glass::compile(fn);
  Generator gen = make_generator(Device(kCPU), 12);
  const int64_t n = 10000;
  const Tensor a0 = randn({n}, gen), b0 = randn({n}, gen), g0 = randn({n}, gen);
  Tensor a = dev(a0).requires_grad_(), b = dev(b0).requires_grad_();
  f(a, b);
  f(a, b).backward(dev(g0));  // traces the joint graph
  auto backward_traffic = [&](bool compiled) {
    Tensor x = dev(a0).requires_grad_(), y = dev(b0).requires_grad_();
    Tensor out = compiled ? f(x, y) : fn(x, y), g = dev(g0);
    cuda::synchronize();
    cuda::sim::ScopedKernelStats stats;
    out.backward(g);
    cuda::synchronize();
    return std::tuple{stats.total().global_load_bytes, stats.total().global_store_bytes,
                      x.grad().cpu(), y.grad().cpu()};
  };
  const auto [loaded, stored, ga, gb] = backward_traffic(true);
  const auto [eager_loaded, eager_stored, ea, eb] = backward_traffic(false);
  const std::vector<BackwardInfo> backwards = f.variants().at(0).backwards;
  ASSERT_EQ(backwards.size(), 1u);
  EXPECT_EQ(backwards[0].replayed, "");
  EXPECT_EQ(backwards[0].fused_groups, 2) << backwards[0].optimized;
  EXPECT_EQ(loaded, uint64_t(6 * 4 * n));
  EXPECT_EQ(stored, uint64_t(2 * 4 * n));
  EXPECT_GT(eager_loaded, 2 * loaded) << eager_loaded;
  EXPECT_GT(eager_stored, 2 * stored) << eager_stored;
  // float32, summed in another order (each kernel recomputes the chain): the dtype's tolerance.
  EXPECT_EQ(close(ga, ea, 1e-5, 1e-6), "");
  EXPECT_EQ(close(gb, eb, 1e-5, 1e-6), "");
}

// Two layers with a SiLU between: the joint graph reads the first product from the forward,
// so the compiled backward does the four products eager's does, and no fifth.
TEST_F(CudaCompile, TheJointBackwardOnTheDeviceDoesNotMultiplyAgain) {
  auto fn = [](const Tensor& x, const Tensor& w1, const Tensor& w2) {
    Tensor h = mm(x, w1);
    return mm(h * h.sigmoid(), w2);
  };
  auto f = glass::compile(fn);
  Generator gen = make_generator(Device(kCPU), 13);
  const std::vector<Tensor> host = {randn({32, 48}, gen), randn({48, 64}, gen),
                                    randn({64, 16}, gen), randn({32, 16}, gen)};
  auto backward = [&](bool compiled) {
    std::vector<Tensor> in;
    for (int i = 0; i < 3; ++i) in.push_back(dev(host[i]).requires_grad_());
    Tensor out = compiled ? f(in[0], in[1], in[2]) : fn(in[0], in[1], in[2]);
    cuda::synchronize();
    cuda::sim::ScopedKernelStats stats;
    out.backward(dev(host[3]));
    cuda::synchronize();
    std::vector<Tensor> grads;
    for (const Tensor& t : in) grads.push_back(t.grad().cpu());
    return std::pair{stats.total(), grads};
  };
  backward(true);  // traces the forward
  backward(true);  // traces the joint graph
  const auto [compiled, got] = backward(true);
  const auto [eager, want] = backward(false);
  const std::vector<BackwardInfo> backwards = f.variants().at(0).backwards;
  ASSERT_EQ(backwards.size(), 1u);
  EXPECT_EQ(backwards[0].replayed, "");
  EXPECT_EQ(backwards[0].saved, 1);
  // The simulator counts a product's flops: 2·m·k·n each for dW2, dS, dW1 and dX.
  const uint64_t four_products = 2 * (64 * 32 * 16 + 32 * 16 * 64 + 48 * 32 * 64 + 32 * 64 * 48);
  EXPECT_EQ(eager.flops, four_products);
  EXPECT_EQ(compiled.flops, four_products) << "a product was computed again";
  EXPECT_LT(compiled.launches, eager.launches);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(close(got[i], want[i], 1e-5, 1e-5), "") << "input " << i;
}

// A launch returns before its kernel runs: the kernel's code must stay loaded after the last
// CompiledCudaPointwise is gone (here a temporary, gone before the kernel has run).
TEST_F(CudaCompile, AQueuedLaunchOutlivesTheCompiledGroup) {
  Generator gen = make_generator(Device(kCPU), 11);
  const Tensor a = randn({1 << 18}, gen), b = randn({1 << 18}, gen);
  const Tensor got = compile_cuda_pointwise({seed_chain(kFloat)})[0]({dev(a), dev(b)});
  forget_loaded_kernels();
  EXPECT_EQ(close(got.cpu(), ((a * b + a) * 0.5 - b).relu().sigmoid(), 1e-6, 1e-7), "");
}

// Kernels are built against the headers this library was built with (embedded at build
// time), written under the kernel cache: never a source tree that has changed since.
TEST_F(CudaCompile, KernelsIncludeTheHeadersThisBuildWasBuiltWith) {
  const std::string dir = kernel_include_dir();
  EXPECT_EQ(dir.rfind(GLASS_TEST_CACHE_DIR, 0), 0u) << dir;
  bool kernel_h = false, ops = false;
  for (const auto& [path, text] : kernel_headers()) {
    std::ifstream in(dir + "/" + path, std::ios::binary);
    const std::string on_disk((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    EXPECT_EQ(on_disk, text) << path;
    kernel_h = kernel_h || path == "cuda/kernel.h";
    ops = ops || path == "cuda/kernels/pointwise_ops.cuh";
  }
  EXPECT_TRUE(kernel_h && ops);
}

// The headers a kernel includes are part of its cache key: a kernel built against an edited
// pointwise_ops.cuh is built anew, never taken from the cache of the unedited one.
TEST_F(CudaCompile, AnEditedHeaderIsANewCacheKey) {
  namespace fs = std::filesystem;
  const std::string source = kernel_include_dir();
  ASSERT_FALSE(source.empty());
  const fs::path root = fs::path(GLASS_TEST_CACHE_DIR) / "headers";
  for (const char* copy : {"same", "edited"}) {
    fs::remove_all(root / copy);
    fs::create_directories(root / copy);
    for (const char* dir : {"core", "cuda"})
      fs::copy(fs::path(source) / dir, root / copy / dir, fs::copy_options::recursive);
  }
  std::ofstream(root / "edited" / "cuda/kernels/pointwise_ops.cuh", std::ios::app)
      << "// an edit\n";
  const auto build = [&](const char* copy) {
    ::setenv("GLASS_INCLUDE_DIR", (root / copy).c_str(), 1);
    forget_loaded_kernels();
    reset_cache_stats();
    compile_cuda_pointwise({seed_chain(kFloat)});
    return cache_stats();
  };
  const CacheStats same = build("same");
  EXPECT_EQ(same.compiled + same.from_disk, 1);
  EXPECT_EQ(build("same").from_disk, 1);  // the same headers: the same entry
  const CacheStats edited = build("edited");
  EXPECT_EQ(edited.from_disk + edited.compiled, 1);
  EXPECT_EQ(edited.rejected, 0);
  ::unsetenv("GLASS_INCLUDE_DIR");
  // Still correct through the edited copy (the edit is a comment).
  const Tensor a = ones({5});
  ::setenv("GLASS_INCLUDE_DIR", (root / "edited").c_str(), 1);
  const Tensor got = compile_cuda_pointwise({seed_chain(kFloat)})[0]({dev(a), dev(a)});
  ::unsetenv("GLASS_INCLUDE_DIR");
  EXPECT_EQ(close(got.cpu(), ((a * a + a) * 0.5 - a).relu().sigmoid(), 1e-6, 1e-7), "");
  fs::remove_all(root);
}

// Without the project's headers no CUDA kernel can be built: glass::compile says why, once,
// and runs the group's ops eagerly — the same values.
TEST_F(CudaCompile, WithoutTheHeadersAGroupRunsAsEagerOpsWithOneWarning) {
  ::setenv("GLASS_INCLUDE_DIR", "/nonexistent/glasstorch/include", 1);
  const std::string why = cuda_codegen_unavailable();
  EXPECT_NE(why.find("set GLASS_INCLUDE_DIR"), std::string::npos) << why;
  auto f = glass::compile([](const Tensor& a) { return (a * 2 + 1).relu(); });
  const Tensor a = dev(tensor({-1.0f, 0.25f, 3.0f}));
  ::testing::internal::CaptureStderr();
  Tensor got;
  {
    NoGradGuard no_grad;
    got = f(a);
    got = f(a);
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  ::unsetenv("GLASS_INCLUDE_DIR");
  EXPECT_NE(err.find("fused groups on CUDA tensors run as eager ops: the project's headers"),
            std::string::npos)
      << err;
  EXPECT_EQ(f.variants().at(0).fused_groups, 1);
  EXPECT_EQ(close(got.cpu(), tensor({0.0f, 1.5f, 7.0f}), 0, 0), "");
}

// The GPU's half: the same source, compiled by NVRTC for sm_90. NVRTC needs no GPU to compile,
// so this runs wherever libnvrtc is installed (the launch itself needs a GPU: the next test).
TEST(CudaCompileNvrtc, GeneratedSourceCompilesToACubinForSm90) {
  if (const std::string why = nvrtc_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string include_dir = kernel_include_dir();
  ASSERT_FALSE(include_dir.empty());
  std::mt19937 rng(2028);
  std::vector<PointwiseProgram> programs = {seed_chain(kFloat), seed_chain(kDouble)};
  for (int i = 0; i < 20; ++i)
    programs.push_back(
        random_program(rng, i % 2 ? kDouble : kFloat, 1 + static_cast<int>(rng() % 3)));
  PointwiseProgram mixed;  // integers, bools, infinities, where and clamp
  const int i = mixed.input(0, kLong), f = mixed.input(1, kFloat);
  const int c = mixed.clamp(mixed.binary(BinaryOp::Pow, i, mixed.scalar(2)), Scalar(-4), Scalar(9));
  const int w =
      mixed.where(mixed.binary(BinaryOp::LogicalOr, mixed.binary(BinaryOp::Gt, c, mixed.scalar(3)),
                               mixed.binary(BinaryOp::Ne, f, f)),
                  f, mixed.scalar(-std::numeric_limits<double>::infinity()));
  mixed.set_output(mixed.binary(BinaryOp::Maximum, w, mixed.unary(UnaryOp::Sign, f)));
  programs.push_back(mixed);
  const std::string source = emit_cuda(programs);
  const std::string cubin = nvrtc_compile(source, "fused.cu", 9, 0, include_dir);
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4), std::string("\x7f"
                                            "ELF",
                                            4));  // a CUBIN is an ELF image
  // Every group's two kernels are in it, by their extern "C" names.
  for (size_t k = 0; k < programs.size(); ++k) {
    const std::string name = "glass_cuda_kernel_" + std::to_string(k);
    EXPECT_NE(cubin.find(name + "_flat"), std::string::npos) << name;
  }
  // A source NVRTC rejects is an error with its log and the numbered source.
  try {
    nvrtc_compile("extern \"C\" __global__ void k() { undeclared(); }", "bad.cu", 9, 0,
                  include_dir);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("did not compile for sm_90"), std::string::npos) << msg;
    EXPECT_NE(msg.find("undeclared"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1 | extern"), std::string::npos) << msg;
  }
}

// A CUBIN is kept on disk: a later process loads it instead of running NVRTC again.
TEST(CudaCompileNvrtc, ACubinIsCachedOnDisk) {
  if (const std::string why = nvrtc_unavailable(); !why.empty()) GTEST_SKIP() << why;
  namespace fs = std::filesystem;
  std::string folder = std::string(GLASS_TEST_CACHE_DIR) + "-cubin-test-XXXXXX";
  fs::create_directories(fs::path(folder).parent_path());
  ASSERT_NE(::mkdtemp(folder.data()), nullptr);
  // Found (and kept for the process) before the cache moves: the folder goes at the end.
  const std::string include_dir = kernel_include_dir();
  ::setenv("GLASS_CACHE_DIR", folder.c_str(), 1);
  struct Restore {  // even when a step below throws
    std::string folder;
    ~Restore() {
      ::unsetenv("GLASS_CACHE_DIR");
      std::filesystem::remove_all(folder);
    }
  } restore{folder};
  const std::string source = emit_cuda({seed_chain(kFloat)});
  reset_cache_stats();
  const std::string built = nvrtc_compile_cached(source, "fused.cu", 9, 0, include_dir, "");
  const std::string loaded = nvrtc_compile_cached(source, "fused.cu", 9, 0, include_dir, "");
  const std::string other_arch = nvrtc_compile_cached(source, "fused.cu", 8, 0, include_dir, "");
  const CacheStats stats = cache_stats();
  const std::string direct = nvrtc_compile(source, "fused.cu", 9, 0, include_dir);
  int cubins = 0;
  for (const auto& e : fs::directory_iterator(folder + "/kernels"))
    cubins += e.path().extension() == ".cubin";
  EXPECT_EQ(stats.compiled, 2);  // sm_90, then sm_80
  EXPECT_EQ(stats.from_disk, 1);
  EXPECT_EQ(cubins, 2);
  EXPECT_EQ(loaded, built);
  EXPECT_EQ(built, direct);
  EXPECT_NE(other_arch, built);
}

// On a real GPU (GLASS_CUDA=gpu, scripts/gpu_check.sh): a compiled chain runs as one NVRTC
// kernel loaded through the runtime, equal to eager on the GPU and on the CPU.
TEST(CudaCompileGpu, AFusedChainOnAGpuEqualsEager) {
  const char* want = std::getenv("GLASS_CUDA");
  if (!want || std::string(want) != "gpu" || !cuda::is_available() || cuda::is_simulated())
    GTEST_SKIP() << "needs a GPU (GLASS_CUDA=gpu)";
  // Asked for a GPU and given one: a missing NVRTC or missing headers is a failure here, not
  // a skip (gtest_main exits 0 on skips, and gpu_check would report a PASS).
  ASSERT_EQ(cuda_codegen_unavailable(), "");
  Generator gen = make_generator(Device(kCPU), 4);
  const Tensor a = randn({1000, 33}, gen), b = randn({33}, gen);
  const auto kernels = compile_cuda_pointwise({seed_chain(kFloat)});
  const Tensor got = kernels[0]({dev(a), dev(b)});  // broadcast: strided
  const Tensor flat = kernels[0]({dev(a), dev(b.expand({1000, 33}).contiguous())});
  const Tensor want_cpu = ((a * b + a) * 0.5 - b).relu().sigmoid();
  EXPECT_EQ(close(got.cpu(), want_cpu, 1e-5, 1e-6), "");
  EXPECT_EQ(close(flat.cpu(), want_cpu, 1e-5, 1e-6), "");
  auto f = glass::compile([](const Tensor& x, const Tensor& y) { return (x * y + 1).tanh(); });
  NoGradGuard no_grad;
  f(dev(a), dev(b));
  EXPECT_EQ(close(f(dev(a), dev(b)).cpu(), (a * b + 1).tanh(), 1e-5, 1e-6), "");
}

}  // namespace
}  // namespace glass::compiler
