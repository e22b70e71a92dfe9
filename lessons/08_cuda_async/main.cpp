// lessons/08_cuda_async/main.cpp — lesson 08 as a program: the seed's CUDA paragraph, line
// by line. A launch returns before its kernel runs; item(), printing and to(kCPU) wait for
// the stream that produced the data; one stream runs in order, two streams are ordered by
// events; pinned memory makes a copy a queued job of the copy engine instead of a wait;
// copies on one stream overlap kernels on another (a Chrome trace of it is written for
// Perfetto); the caching allocator reuses freed blocks; the race checker catches a missing
// event.
//
//   lesson_08_cuda_async [trace.json]     (default: lesson08_trace.json in the current dir)
//
// It runs on the simulated GPU (glass::cuda::use_simulator()) unless a real GPU is visible.
// stdout is deterministic on the simulator — every fact in it is made certain by holding a
// stream (simulator().hold) or by a kernel that waits for the host (a Gate), never by a
// clock — and the lesson_08_output test compares it with the blocks quoted in README.md.
// Timings are not reproducible; they go to stderr, each line starting with "[time]". On a
// GPU the simulator's hooks (holds, the timeline, the race checker) do not exist: those
// parts say so and are skipped, and only the timings mean something.
//
// [SECTION] helpers   [SECTION] the gate   [SECTION] 1-8   [SECTION] main
#include <glass/glass.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cuda/host_allocator.h"
#include "cuda/sim/gate.h"
#include "cuda/sim/kernel_launch.h"
#include "cuda/sim/sim_runtime.h"
#include "cuda/sim/timeline.h"

namespace {

using glass::Tensor;
namespace cuda = glass::cuda;
namespace sim = glass::cuda::sim;
using Clock = std::chrono::steady_clock;

// [SECTION] helpers ----------------------------------------------------------------------

bool g_sim = false;  // the simulated GPU serves kCUDA (its hooks exist)

const char* yes_no(bool b) { return b ? "yes" : "no"; }

void section(const char* title) { std::cout << "== " << title << " ==\n"; }

sim::SimRuntime& simulator() { return sim::simulator(); }

// The simulator's name for a stream, as its timeline and its error messages use it: streams
// are numbered on each device in the order they were created, the default stream being 0.
// (CUDAStream::id() is the stream's place in the pool instead.)
int64_t sid(const cuda::CUDAStream& s) { return simulator().stream_id(s); }

// A note on stdout for the parts that need the simulator, when a GPU runs the program.
bool needs_simulator(const char* what) {
  if (!g_sim) std::cout << "(" << what << ": the simulator's hooks; skipped on a GPU)\n";
  return g_sim;
}

std::string fixed(double v, int decimals) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << v;
  return os.str();
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// "[3, 3, 3, 3]": the values of a small float tensor, wherever it lives (a device tensor
// is copied to the host, which waits for it: a sync point).
std::string values(const Tensor& t) {
  Tensor c = t.cpu().contiguous();
  std::ostringstream os;
  os << "[";
  for (int64_t i = 0; i < c.numel(); ++i) os << (i ? ", " : "") << c.data_ptr<float>()[i];
  return os.str() + "]";
}

// Device addresses change from run to run (the simulator's memory is mapped wherever the
// operating system puts it); error messages quote them, so the output writes <address>.
std::string without_addresses(const std::string& s) {
  static const std::regex hex("0x[0-9a-f]+");
  return std::regex_replace(s, hex, "<address>");
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const glass::Error& e) {
    return without_addresses(e.what());
  }
  return "(no error)";
}

// The simulator's timeline, once everything queued so far has finished.
std::vector<sim::TimelineRecord> finished_timeline() {
  cuda::synchronize();
  return simulator().timeline();
}

// The first record of the timeline named `name` on stream id `stream` (seq order).
const sim::TimelineRecord* find_record(const std::vector<sim::TimelineRecord>& records,
                                       int64_t stream, const std::string& name) {
  for (const auto& r : records)
    if (r.stream == stream && r.name == name) return &r;
  return nullptr;
}

// [SECTION] the gate ---------------------------------------------------------------------

// A Gate (cuda/sim/gate.h) is a kernel that does nothing until the host opens it.
// Everything queued on its stream after it waits, as it would behind a long kernel on a
// GPU, but for exactly as long as the program decides. Simulator only.
using sim::Gate;

// Runs `call` on a second host thread whose current stream is s, while `gate` (on s) is
// closed, and says whether the call returned before the gate opened. A call that waits for
// s cannot return before that, so "no" is certain; a call that only queues work returns in
// microseconds (it gets half a second). The gate is open when this returns.
bool returns_at_once(Gate& gate, const cuda::CUDAStream& s, const std::function<void()>& call) {
  std::atomic<bool> done{false};
  std::thread host2([&] {
    cuda::CUDAStreamGuard guard(s);
    call();
    done = true;
  });
  const auto deadline = Clock::now() + std::chrono::milliseconds(500);
  while (!done && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool at_once = done;
  gate.open();
  host2.join();
  return at_once;
}

// [SECTION] 1. the device ----------------------------------------------------------------

void the_device() {
  section("1. the device");
  std::cout << "glass::cuda::is_available(): " << yes_no(cuda::is_available())
            << ", is_simulated(): " << yes_no(cuda::is_simulated())
            << ", device_count(): " << cuda::device_count() << "\n";
  std::cerr << "[time] cuda:0 is " << cuda::runtime().properties(0).name << "\n";
  Tensor x = glass::ones({4}).to(glass::kCUDA);  // a host -> device copy
  std::cout << "x = glass::ones({4}).to(glass::kCUDA): x.device() = " << x.device()
            << ", x.is_cuda() = " << yes_no(x.is_cuda()) << "\n";
  std::cout << "x.accessor<float, 1>() in host code:\n   glass::Error: "
            << error_of([&] { (void)x.accessor<float, 1>(); }) << "\n";
  std::cout << "x.cpu() copies it back: " << values(x) << "\n";
}

// [SECTION] 2. a launch returns before its kernel runs ----------------------------------

void launch_returns_at_once() {
  section("2. a launch returns before its kernel runs");
  const int64_t n = int64_t{1} << 20;
  cuda::CUDAStream s = cuda::getStreamFromPool();
  cuda::CUDAStreamGuard guard(s);
  Tensor x = glass::ones({n}, glass::kCUDA);  // a fill kernel, on s
  s.synchronize();
  if (needs_simulator("hold")) {
    simulator().clear_timeline();
    simulator().hold(s);  // nothing queued on s starts until release(s)
    Tensor y = x * 2 + 1;
    std::cout << "stream " << sid(s) << " held; y = x * 2 + 1 on " << n
              << " floats queued two kernels and returned\n";
    std::cout << "   s.query() right after the launch: " << std::boolalpha << s.query()
              << std::noboolalpha << "\n";
    std::cout << "   simulator().pending_ops(s): " << simulator().pending_ops(s) << "\n";
    simulator().release(s);
    s.synchronize();
    std::cout << "released; after s.synchronize(): s.query() " << std::boolalpha << s.query()
              << std::noboolalpha
              << ", y.select(0, 0).item<float>() = " << y.select(0, 0).item<float>() << "\n";
    std::cout << "timeline (each kernel: the host got control back before it started):\n";
    for (const auto& r : finished_timeline()) {
      if (r.kind != sim::OpKind::Kernel) continue;
      std::cout << "   " << r.name << "  grid " << r.grid.x << " x block " << r.block.x
                << "  returned before start: " << yes_no(r.returned_ns <= r.start_ns) << "\n";
    }
  }

  // The same, timed, with nothing held: a big kernel, the host clock around the call, and
  // two timing events around the kernel on the stream.
  const int64_t big = int64_t{1} << 24;  // 16,777,216 floats, 64 MiB per tensor
  Tensor a = glass::ones({big}, glass::kCUDA), b = glass::ones({big}, glass::kCUDA);
  Tensor warm = a + b;  // the first big allocation asks the device for a segment
  s.synchronize();
  warm = Tensor();
  cuda::CUDAEvent start(cuda::kEventDefault), end(cuda::kEventDefault);
  start.record(s);
  const auto t0 = Clock::now();
  Tensor c = a + b;
  const double call_ms = ms_since(t0);
  end.record(s);
  end.synchronize();
  std::cerr << "[time] c = a + b on " << big << " floats: the call returned after "
            << fixed(call_ms * 1000, 1) << " us; the kernel took "
            << fixed(start.elapsed_time(end), 2) << " ms (CUDAEvent::elapsed_time)\n";
  std::cout << "timed on stderr: c = a + b on " << big
            << " floats, the host's clock around the call against CUDAEvent::elapsed_time\n";
}

// [SECTION] 3. where the host waits ------------------------------------------------------

void sync_points() {
  section("3. where the host waits: item(), printing, to(kCPU)");
  if (!needs_simulator("gate, timeline")) return;
  cuda::CUDAStream s = cuda::getStreamFromPool();
  cuda::CUDAStreamGuard guard(s);
  Tensor x = glass::ones({4}, glass::kCUDA);
  s.synchronize();
  simulator().clear_timeline();
  std::cout << "a gate (a kernel that waits for the host) is queued on stream " << sid(s)
            << ", then y = x + 1 behind it;\na second host thread makes each call while the "
               "gate is closed:\n";
  struct Case {
    const char* call;
    std::function<std::string(const Tensor&)> run;
  };
  const std::vector<Case> cases = {
      {"y.select(0, 0).item<float>()",
       [](const Tensor& y) {
         std::ostringstream os;
         os << y.select(0, 0).item<float>();
         return os.str();
       }},
      {"std::cout << y              ",
       [](const Tensor& y) {
         std::ostringstream os;
         os << y;
         return os.str();
       }},
      {"y.to(glass::kCPU)           ", [](const Tensor& y) { return values(y.to(glass::kCPU)); }},
      {"z = y * 2 (a kernel)        ",
       [](const Tensor& y) {
         Tensor z = y * 2;
         return std::string("(queued)");
       }},
  };
  for (const Case& c : cases) {
    Gate gate(s);
    Tensor y = x + 1;
    std::string result;
    const bool at_once = returns_at_once(gate, s, [&] { result = c.run(y); });
    std::cout << "   " << c.call << "  returned before the gate opened: " << yes_no(at_once)
              << "  -> " << result << "\n";
  }
  std::cout << "the timeline's copies (the first three calls each copied y to the host):\n";
  for (const auto& r : finished_timeline()) {
    if (r.kind != sim::OpKind::Copy) continue;
    std::cout << "   " << r.name << " on stream " << r.stream << "  pinned " << yes_no(r.pinned)
              << "  host_waited " << yes_no(r.host_waited) << "\n";
  }
}

// [SECTION] 4. order: one stream, two streams and an event -------------------------------

void stream_order() {
  section("4. order: one stream, two streams and an event");
  if (!needs_simulator("hold, timeline")) return;
  cuda::CUDAStream s = cuda::getStreamFromPool();
  cuda::CUDAStream producer = cuda::getStreamFromPool();
  cuda::CUDAStream consumer = cuda::getStreamFromPool();
  const bool checking = simulator().race_check();
  simulator().set_race_check(false);  // part (b) races on purpose (section 8 catches it)

  // (a) One stream: each kernel starts after the one before it has finished.
  {
    cuda::CUDAStreamGuard guard(s);
    Tensor x = glass::ones({4}, glass::kCUDA);
    simulator().clear_timeline();
    x.add_(1);
    x.mul_(3);
    const std::string result = values(x);
    const auto records = finished_timeline();
    const auto* add = find_record(records, sid(s), "add<Float>");
    const auto* mul = find_record(records, sid(s), "mul<Float>");
    std::cout << "(a) one stream " << sid(s) << ": x = ones; x.add_(1); x.mul_(3); "
              << "the host never waited until printing: x = " << result << "\n";
    std::cout << "    timeline: mul_ started after add_ ended: "
              << yes_no(add && mul && mul->start_ns >= add->end_ns) << "\n";
  }

  // (b) Two streams, no event: the consumer does not wait for the producer.
  {
    Tensor x = glass::ones({4}, glass::kCUDA);
    cuda::synchronize();
    simulator().hold(producer);
    {
      cuda::CUDAStreamGuard guard(producer);
      x.add_(1);  // queued on the held producer: it has not run
    }
    Tensor z;
    {
      cuda::CUDAStreamGuard guard(consumer);
      z = x * 10;
      consumer.synchronize();
    }
    std::cout << "(b) producer " << sid(producer) << " (held) queues x.add_(1); consumer "
              << sid(consumer) << " computes z = x * 10 with no event:\n    z = " << values(z)
              << "  (from the old x: the add_ has not run)\n";
    simulator().release(producer);
  }

  // (c) The same with an event: the consumer's kernel waits for the producer's.
  {
    Tensor x = glass::ones({4}, glass::kCUDA);
    cuda::synchronize();
    simulator().clear_timeline();
    simulator().hold(producer);
    cuda::CUDAEvent ready;
    {
      cuda::CUDAStreamGuard guard(producer);
      x.add_(1);
      ready.record(producer);  // marks "everything queued on producer so far"
    }
    ready.block(consumer);  // consumer's later work waits for that mark; the host does not
    Tensor z;
    {
      cuda::CUDAStreamGuard guard(consumer);
      z = x * 10;
    }
    std::cout << "(c) the same with ready.record(producer) after the add_ and "
                 "ready.block(consumer) before z = x * 10:\n";
    std::cout << "    consumer.query() while the producer is held: " << std::boolalpha
              << consumer.query() << std::noboolalpha << "\n";
    simulator().release(producer);
    consumer.synchronize();
    std::cout << "    released: z = " << values(z) << "\n";
    const auto records = finished_timeline();
    const auto* add = find_record(records, sid(producer), "add<Float>");
    const auto* mul = find_record(records, sid(consumer), "mul<Float>");
    std::cout << "    timeline: the consumer's mul started after the producer's add_ ended: "
              << yes_no(add && mul && mul->start_ns >= add->end_ns) << "\n";
  }
  simulator().set_race_check(checking);
}

// [SECTION] 5. pinned and pageable copies ------------------------------------------------

void pinned_and_pageable() {
  section("5. pinned and pageable copies");
  cuda::CUDAStream s = cuda::getStreamFromPool();
  cuda::CUDAStreamGuard guard(s);
  const Tensor host = glass::arange(4).to(glass::kFloat);  // [0, 1, 2, 3], pageable
  const Tensor pinned = host.pin_memory();                 // the same values, page-locked
  std::cout << "host.is_pinned(): " << yes_no(host.is_pinned())
            << ", host.pin_memory().is_pinned(): " << yes_no(pinned.is_pinned()) << "\n";
  if (needs_simulator("gate, timeline")) {
    const Tensor dev = host.to(glass::kCUDA);
    Tensor pinned_out = glass::empty({4}, glass::TensorOptions().pinned_memory(true));
    struct Case {
      const char* what;
      std::function<void()> copy;
    };
    const std::vector<Case> cases = {
        {"HtoD pageable  x.to(kCUDA)                      ", [&] { (void)host.to(glass::kCUDA); }},
        {"HtoD pageable  x.to(kCUDA, non_blocking=true)   ",
         [&] { (void)host.to(glass::kCUDA, true); }},
        {"HtoD pinned    x.to(kCUDA)                      ",
         [&] { (void)pinned.to(glass::kCUDA); }},
        {"HtoD pinned    x.to(kCUDA, non_blocking=true)   ",
         [&] { (void)pinned.to(glass::kCUDA, true); }},
        {"DtoH pageable  d.to(kCPU)                       ", [&] { (void)dev.to(glass::kCPU); }},
        {"DtoH pageable  d.to(kCPU, non_blocking=true)    ",
         [&] { (void)dev.to(glass::kCPU, true); }},
        {"DtoH pinned    out.copy_(d)                     ", [&] { pinned_out.copy_(dev); }},
        {"DtoH pinned    out.copy_(d, non_blocking=true)  ", [&] { pinned_out.copy_(dev, true); }},
    };
    std::cout << "each copy made by a second host thread while a gate holds up stream " << sid(s)
              << ":\n";
    std::cout << "   copy                                             returned   pinned  "
                 "host_waited (the timeline's flags)\n";
    for (const Case& c : cases) {
      s.synchronize();
      simulator().clear_timeline();
      Gate gate(s);
      const bool at_once = returns_at_once(gate, s, c.copy);
      const sim::TimelineRecord* copy = nullptr;
      const auto records = finished_timeline();
      for (const auto& r : records)
        if (r.kind == sim::OpKind::Copy) copy = &r;
      std::cout << "   " << c.what << (at_once ? "at once " : "waited  ") << "   " << std::left
                << std::setw(8) << (copy ? yes_no(copy->pinned) : "?")
                << (copy ? yes_no(copy->host_waited) : "?") << std::right << "\n";
    }

    // A non-blocking copy into pinned memory has only been queued when it returns.
    pinned_out.fill_(-1);
    {
      Gate gate(s);
      Tensor d = dev * 10;
      pinned_out.copy_(d, /*non_blocking=*/true);
      std::cout << "out.copy_(d * 10, non_blocking=true), read at once:  " << values(pinned_out)
                << "  (the copy has not run)\n";
      gate.open();
      s.synchronize();
      std::cout << "the same out after s.synchronize():                " << values(pinned_out)
                << "\n";
    }
  }

  // Timed: 4 MiB each way, pageable against pinned, non_blocking=true, so that the host
  // waits only where it must. (4 MiB stays under a normal user's page-locking limit,
  // RLIMIT_MEMLOCK, often 8 MiB; above it pinning falls back to pageable memory, with a
  // message.) The simulator's timeline also says how long each copy engine worked.
  const int64_t n = int64_t{1} << 20;
  const Tensor big = glass::ones({n});
  const Tensor big_pinned = big.pin_memory();
  const Tensor d = big.to(glass::kCUDA);
  for (int round = 0; round < 3; ++round) {  // the first rounds warm the caches up
    for (const bool use_pinned : {false, true}) {
      Tensor src = use_pinned ? big_pinned : big;
      s.synchronize();
      if (g_sim) simulator().clear_timeline();
      auto t0 = Clock::now();
      Tensor up = src.to(glass::kCUDA, /*non_blocking=*/true);
      const double up_call = ms_since(t0);
      s.synchronize();
      t0 = Clock::now();
      src.copy_(d, /*non_blocking=*/true);
      const double down_call = ms_since(t0);
      s.synchronize();
      if (round < 2) continue;
      std::cerr << "[time] 4 MiB " << (use_pinned ? "pinned  " : "pageable") << "  HtoD call "
                << fixed(up_call * 1000, 1) << " us   DtoH call " << fixed(down_call * 1000, 1)
                << " us";
      if (g_sim)
        for (const auto& r : finished_timeline())
          if (r.kind == sim::OpKind::Copy)
            std::cerr << "   " << cuda::to_string(r.copy_kind) << " engine "
                      << fixed((r.end_ns - r.start_ns) / 1e3, 1) << " us";
      std::cerr << "\n";
    }
  }
  std::cout << "timed on stderr: 4 MiB each way, pageable against pinned\n";
  cuda::host_empty_cache();  // unlock the pinned pages
}

// [SECTION] 6. copies overlap kernels ----------------------------------------------------

// The work done on each chunk: five elementwise kernels (mul, add, relu, mul, sigmoid).
Tensor work(const Tensor& x) { return ((x * 2 + 1).relu() * 0.5).sigmoid(); }

void overlap(const std::string& trace_path) {
  section("6. copies on one stream overlap kernels on another");
  const size_t chunks = 4;
  const int64_t chunk = int64_t{1} << 18;  // 262,144 floats: 1 MiB
  const Tensor batch =
      glass::arange(static_cast<int64_t>(chunks) * chunk).to(glass::kFloat).mul(1e-6).pin_memory();
  auto chunk_of = [&](size_t i) {  // a view of the pinned batch: pinned too
    const int64_t at = static_cast<int64_t>(i) * chunk;
    return batch.slice(0, at, at + chunk);
  };
  cuda::CUDAStream copies = cuda::getStreamFromPool();
  cuda::CUDAStream compute = cuda::getStreamFromPool();
  cuda::synchronize();
  if (g_sim) simulator().clear_timeline();

  // One stream: copy, compute, copy, compute, ... each waits for the one before.
  auto t0 = Clock::now();
  std::vector<Tensor> serial;
  {
    cuda::CUDAStreamGuard guard(compute);
    for (size_t i = 0; i < chunks; ++i)
      serial.push_back(work(chunk_of(i).to(glass::kCUDA, /*non_blocking=*/true)));
  }
  cuda::synchronize();
  const double serial_ms = ms_since(t0);

  // Two streams: chunk i+1 is copied while chunk i is computed. The event copied[i] makes
  // the kernels of chunk i wait for its copy, and for nothing else.
  t0 = Clock::now();
  std::vector<Tensor> on_device, results;
  std::vector<cuda::CUDAEvent> copied(chunks);
  for (size_t i = 0; i < chunks; ++i) {
    {
      cuda::CUDAStreamGuard guard(copies);
      on_device.push_back(chunk_of(i).to(glass::kCUDA, /*non_blocking=*/true));
      copied[i].record(copies);  // "chunk i is on the device"
    }
    copied[i].block(compute);  // the kernels of chunk i wait for its copy, and only for it
    cuda::CUDAStreamGuard guard(compute);
    results.push_back(work(on_device.back()));
  }
  cuda::synchronize();
  const double pipelined_ms = ms_since(t0);
  // The timeline of both parts, taken before the comparison below adds its copies to it.
  std::vector<sim::TimelineRecord> records;
  if (g_sim) {
    records = simulator().timeline();
    simulator().write_chrome_trace(trace_path);
  }
  bool same = true;
  for (size_t i = 0; i < chunks; ++i)
    same = same && glass::equal(serial[i].cpu(), results[i].cpu());
  std::cout << chunks << " chunks of 1 MiB from pinned memory, each copied, then run through "
            << "5 kernels,\n   first on one stream, then with copies and kernels on two streams: "
            << "same results: " << yes_no(same) << "\n";
  std::cerr << "[time] " << chunks << " chunks: one stream " << fixed(serial_ms, 2)
            << " ms, two streams " << fixed(pipelined_ms, 2) << " ms (host clock, first copy "
            << "to last kernel)\n";
  if (!needs_simulator("timeline")) return;

  std::cout << "the two-stream part of the timeline (copies on stream " << sid(copies)
            << ", kernels on stream " << sid(compute) << "),\nin the order the host enqueued it:\n";
  // The two-stream part starts at the first operation on the copy stream; chunks 0 and 1
  // are printed, 2 and 3 are the same.
  int64_t copies_seen = 0;
  for (const auto& r : records) {
    if (r.stream == sid(copies) && r.kind == sim::OpKind::Copy) ++copies_seen;
    if (copies_seen == 0 || copies_seen > 2 ||
        (r.stream != sid(copies) && r.stream != sid(compute)))
      continue;
    std::cout << "   stream " << r.stream << "  " << std::left << std::setw(10)
              << sim::to_string(r.engine) << std::right << "  " << r.name << "\n";
  }
  std::cout << "   ... chunks 2 and 3 alike\n";
  // How long the copy engine and the SMs were busy at the same time, in the two-stream part.
  int64_t overlap_ns = 0;
  for (const auto& c : records)
    for (const auto& k : records)
      if (c.stream == sid(copies) && c.engine == sim::Engine::CopyHtoD &&
          k.stream == sid(compute) && k.kind == sim::OpKind::Kernel)
        overlap_ns +=
            std::max<int64_t>(0, std::min(c.end_ns, k.end_ns) - std::max(c.start_ns, k.start_ns));
  std::cerr << "[time] copies and kernels overlapped for " << fixed(overlap_ns / 1e6, 3)
            << " ms in the two-stream part\n";
  std::cout << "wrote " << trace_path << " (" << records.size()
            << " operations, both parts): open it at https://ui.perfetto.dev\n";
  cuda::host_empty_cache();
}

// [SECTION] 7. the caching allocator -----------------------------------------------------

// "+3", "0", "-18": a change in a counter.
std::string change(int64_t d) { return (d > 0 ? "+" : "") + std::to_string(d); }

void caching_allocator() {
  section("7. the caching allocator reuses freed blocks");
  cuda::CUDAStream s = cuda::getStreamFromPool();  // a stream of its own: no free blocks yet
  cuda::CUDAStreamGuard guard(s);
  cuda::synchronize();
  cuda::empty_cache();  // the earlier sections' cached segments go back to the device
  cuda::reset_peak_memory_stats();
  cuda::MemoryStats before = cuda::memory_stats();
  // Prints what changed in memory_stats() since the last call.
  auto delta = [&](const std::string& what) {
    const cuda::MemoryStats now = cuda::memory_stats();
    std::cout << "   " << std::left << std::setw(32) << what << std::right << std::setw(7)
              << change(now.num_allocs - before.num_allocs) << std::setw(11)
              << change(now.num_cache_hits - before.num_cache_hits) << std::setw(8)
              << change(now.num_splits - before.num_splits) << std::setw(10)
              << change(now.segments - before.segments) << std::setw(16)
              << change(now.num_device_alloc - before.num_device_alloc) << "\n";
    before = now;
  };
  std::cout << "empty_cache(), reset_peak_memory_stats(), then the changes in memory_stats(),\n"
            << "on a fresh stream:\n"
            << "                                    allocs cache hits  splits  segments  "
               "device mallocs\n";
  Tensor a = glass::empty({65536}, glass::kCUDA);  // 256 KiB: the small pool
  delta("a = empty(256 KiB)");
  Tensor b = glass::empty({65536}, glass::kCUDA);
  delta("b = empty(256 KiB)");
  void* a_ptr = a.data_ptr();
  a = Tensor();
  delta("a = Tensor() (frees it)");
  Tensor c = glass::empty({65536}, glass::kCUDA);
  delta("c = empty(256 KiB)");
  std::cout << "   c got a's block: " << yes_no(c.data_ptr() == a_ptr) << "\n";
  Tensor x = glass::ones({int64_t{1} << 20}, glass::kCUDA);  // 4 MiB: the large pool
  delta("x = ones(4 MiB)");
  for (int step = 0; step < 100; ++step) {
    Tensor y = (x * 2 + 1).relu();  // three 4 MiB results; each freed when done with
  }
  delta("100 x (y = (x * 2 + 1).relu())");
  std::cout << "   memory_allocated() " << cuda::format_bytes(cuda::memory_allocated())
            << ", max_memory_allocated() " << cuda::format_bytes(cuda::max_memory_allocated())
            << ", memory_reserved() " << cuda::format_bytes(cuda::memory_reserved()) << "\n";
  if (g_sim) {
    const int64_t capacity = cuda::runtime().properties(0).total_memory;
    std::cout << "asking for twice what the device holds:\n   glass::Error: "
              << error_of([&] { (void)glass::empty({capacity / 2}, glass::kCUDA); }) << "\n";
    const cuda::MemoryStats now = cuda::memory_stats();
    std::cout << "   num_alloc_retries " << change(now.num_alloc_retries - before.num_alloc_retries)
              << ", num_ooms " << change(now.num_ooms - before.num_ooms)
              << ", segments given back to the device "
              << now.num_device_free - before.num_device_free << "\n";
  }
}

// [SECTION] 8. the race checker ----------------------------------------------------------

void race_checker() {
  section("8. the race checker catches a missing event");
  if (!needs_simulator("the race checker")) return;
  cuda::CUDAStream producer = cuda::getStreamFromPool();
  cuda::CUDAStream consumer = cuda::getStreamFromPool();
  const bool checking = simulator().race_check();
  simulator().set_race_check(true);  // GLASS_SIM_CHECK=1 does the same (the tests run so)
  Tensor x = glass::ones({4}, glass::kCUDA);
  cuda::synchronize();
  simulator().hold(producer);  // so that nothing can have finished by chance
  {
    cuda::CUDAStreamGuard guard(producer);
    x.add_(1);
  }
  std::cout << "simulator().set_race_check(true); producer " << sid(producer)
            << " writes x (x.add_(1)); consumer " << sid(consumer)
            << " reads it (x * 10) with no event:\n   glass::Error: " << error_of([&] {
                 cuda::CUDAStreamGuard guard(consumer);
                 Tensor z = x * 10;
               })
            << "\n";
  std::cout << "   the consumer's kernel was not queued: pending_ops(consumer) = "
            << simulator().pending_ops(consumer) << "\n";
  cuda::CUDAEvent ready;
  ready.record(producer);
  ready.block(consumer);
  Tensor z;
  const std::string fixed_run = error_of([&] {
    cuda::CUDAStreamGuard guard(consumer);
    z = x * 10;
  });
  simulator().release(producer);
  consumer.synchronize();  // reading z on this thread's stream is then ordered after it
  std::cout << "with ready.record(producer); ready.block(consumer) first: " << fixed_run
            << "; z = " << values(z) << "\n";
  simulator().set_race_check(checking);
}

}  // namespace

// [SECTION] main -------------------------------------------------------------------------

int main(int argc, char** argv) {
  const std::string trace_path = argc > 1 ? argv[1] : "lesson08_trace.json";
  if (!cuda::is_available()) cuda::use_simulator();  // no GPU: the simulated one
  g_sim = cuda::is_simulated();
  the_device();
  launch_returns_at_once();
  sync_points();
  stream_order();
  pinned_and_pageable();
  overlap(trace_path);
  caching_allocator();
  race_checker();
  return 0;
}
