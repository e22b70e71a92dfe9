// cuda/sim/block_runner.cpp — runs a block's threads: a plain loop, then fibers.
//
// Index
//   [SECTION] built-ins and counters
//   [SECTION] the block: plain loop, scheduling, barriers, warp collectives, errors
//   [SECTION] entry points (run_block, device.h's detail functions)
//
// Note [Who holds a suspended context]
// Each simulated thread has a slot holding its context while it is suspended, and so does
// "home": the worker's own stack once the thread that started on it (the host thread)
// has returned and the worker only waits for the fibers. A switch from A to B moves B's
// context out of B's slot and resumes it; Boost.Context hands B the context that A was
// suspended in, and B stores it in A's slot (from_ says who A was). A thread whose
// function returns hands over by returning the next context; its stack then goes back
// to the pool. Switches go straight from thread to thread, never through a scheduler
// context, so a barrier costs one switch per thread that waits at it.
//
// Note [Errors inside a block]
// An error is raised on the worker's own stack (the host thread while it lives, home
// afterwards): a fiber that detects one, or whose kernel code throws, stores it in
// error_ and hands the CPU to that stack, which rethrows it. The Block's destructor then
// resumes each fiber still suspended with abandoning_ set: its switch throws Abandon
// inside it, which unwinds the kernel's frames (destroying its locals) up to
// thread_main, which hands the CPU back; the fiber ends and its stack returns to the
// pool. Nothing is switched inside a catch block, so the C++ runtime's per-thread
// exception stack stays properly nested.
//
// Note [AddressSanitizer and fibers]
// ASan must know which stack runs, or the first exception thrown on a fiber makes it
// unpoison the wrong range and report errors that are not there. Every switch is
// therefore announced (__sanitizer_start_switch_fiber) and acknowledged on arrival
// (__sanitizer_finish_switch_fiber); in a build without ASan both are empty functions.
// Unwinding is our own Abandon rather than Boost's forced_unwind for the same reason:
// Boost would throw inside the fiber before it could acknowledge the switch. (ASan's
// detect_stack_use_after_return=1 is not supported: a fiber announces its last switch
// before it returns through Boost's frames, whose fake stack is then gone.)
#include "cuda/sim/block_runner.h"

#include <atomic>
#include <bit>
#include <boost/context/fiber.hpp>
#include <boost/context/preallocated.hpp>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "core/error.h"
#include "cuda/sim/device.h"
#include "cuda/sim/fiber_stacks.h"
#include "cuda/sim/launch_watch.h"
#include "cuda/sim/shared_race.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

// [SECTION] built-ins and counters

thread_local constinit GLASS_SIM_TLS dim3 threadIdx{0, 0, 0};
thread_local constinit GLASS_SIM_TLS dim3 blockIdx{0, 0, 0};
thread_local constinit GLASS_SIM_TLS dim3 blockDim{0, 0, 0};
thread_local constinit GLASS_SIM_TLS dim3 gridDim{0, 0, 0};

namespace glass::cuda::sim {
namespace {

namespace ctx = boost::context;
using detail::BarrierResult;
using detail::LaneSource;
using detail::WarpResult;
using glass::detail::str_cat;

constexpr int kWarp = 32;
constexpr int kHome = -1;  // the worker's own stack, once the host thread has returned

struct Counters {
  std::atomic<uint64_t> blocks_run{0}, fibers_created{0}, switches{0}, barriers{0},
      warp_collectives{0};
  std::atomic<uint64_t> stacks_mapped_at_reset{0};
};
Counters g_counters;

void count(std::atomic<uint64_t>& counter, uint64_t n) {
  if (n != 0) counter.fetch_add(n, std::memory_order_relaxed);
}

// Note [AddressSanitizer and fibers]. fake_stack is null where the switching context ends.
#if defined(__SANITIZE_ADDRESS__)
void asan_leaving(void** fake_stack, const void* bottom, size_t size) {
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
}
void asan_arrived(void* fake_stack, const void** from_bottom, size_t* from_size) {
  __sanitizer_finish_switch_fiber(fake_stack, from_bottom, from_size);
}
#else
void asan_leaving(void**, const void*, size_t) {}
void asan_arrived(void*, const void**, size_t*) {}
#endif

// Thrown inside a suspended thread to unwind it when its block is given up.
struct Abandon {};

// [SECTION] the block

enum class Wait : uint8_t { None, Barrier, Warp };

// One simulated thread of the block being scheduled.
struct SimThread {
  ctx::fiber context;  // while suspended: where it resumes (Note [Who holds a suspended context])
  Dim3 idx;            // its threadIdx
  const void* stack_bottom = nullptr;  // its fiber's stack (none: it runs on the worker's)
  size_t stack_size = 0;
  bool started = false;
  bool exited = false;
  Wait wait = Wait::None;
  // The barrier or collective it waits at (kept after release, for error messages).
  const char* op = "";
  std::source_location site;
  uint32_t mask = 0;
  int src_lane = -1;  // the lane whose value it receives; -1: its own
  uint64_t value = 0;
  WarpResult result;
};

struct Warp {
  uint32_t live = 0;     // lanes that have not returned (not-yet-started ones included)
  uint32_t waiting = 0;  // lanes waiting at a warp collective
};

// What one OS thread reuses from block to block (its fiber stacks: fiber_stacks.h).
struct Worker {
  std::vector<SimThread> threads;
  std::vector<Warp> warps;
  std::vector<int> ring;  // the run queue
  std::vector<int> barrier_waiters;
  std::vector<std::max_align_t> dynamic_shared;
};
thread_local Worker t_worker;

bool same_site(const std::source_location& a, const std::source_location& b) {
  return a.line() == b.line() && a.column() == b.column() &&
         (a.file_name() == b.file_name() || std::strcmp(a.file_name(), b.file_name()) == 0);
}

std::string dim_string(Dim3 d) { return str_cat("(", d.x, ", ", d.y, ", ", d.z, ")"); }
std::string site_string(const std::source_location& s) {
  return str_cat(s.file_name(), ":", s.line());
}
std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

class Block {
 public:
  Block(const BlockSpec& spec, const std::function<void()>& body);
  ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  void run();
  // After run(): reports a shared-memory race found while the block ran, then adds the
  // block's counters to its launch (launch_watch.h).
  void finish();
  // Inlined into the entry points below, and switch_to() and wait_here() into them: every
  // return between a resumed thread's kernel and its context switch is mispredicted (the
  // CPU's return-stack predictions belong to the thread it switched from), so each frame
  // less on that path is a measurable part of a barrier's cost.
  [[gnu::always_inline]] BarrierResult sync_threads(const char* op, int predicate,
                                                    std::source_location site);
  [[gnu::always_inline]] WarpResult warp_collective(const char* op, uint32_t mask, uint64_t value,
                                                    LaneSource source, long long arg, int width,
                                                    std::source_location site);
  void* dynamic_shared() { return w_.dynamic_shared.data(); }
  size_t dynamic_shared_bytes() const { return spec_.dynamic_shared_bytes; }
  std::string where() const;  // "kernel 'k', block (1, 0, 0): "
  // "kernel 'k', block (1, 0, 0), thread (5, 0, 0): " with the thread's name
  std::string where(const std::string& thread) const {
    return str_cat("kernel '", spec_.kernel, "', block ", dim_string(spec_.block_idx), ", ", thread,
                   ": ");
  }
  std::string thread_name(int i) const { return str_cat("thread ", dim_string(index_of(i))); }
  int current() const { return cur_; }

 private:
  Dim3 index_of(int i) const {
    const unsigned bx = spec_.block.x, by = spec_.block.y, u = static_cast<unsigned>(i);
    return Dim3(u % bx, u / bx % by, u / (bx * by));
  }
  void enter(int i) {  // i runs from now on (the index was computed once: divisions are slow)
    cur_ = i;
    if (i != kHome) threadIdx = w_.threads[i].idx;
  }
  static void next_index(Dim3& t, Dim3 block) {  // t + 1 in x-major order
    if (++t.x == block.x) {
      t.x = 0;
      if (++t.y == block.y) {
        t.y = 0;
        ++t.z;
      }
    }
  }

  void start_scheduling();
  void finish_host();
  void push(int i);
  int pop();
  ctx::fiber& context_of(int i);
  [[gnu::noinline]] void start_fiber(int i);
  [[gnu::always_inline]] void switch_to(int from, int to);
  void announce_switch(void** fake_stack, int to) const;
  void abandon_suspended_threads();
  ctx::fiber hand_over(int from, int to);
  void adopt(ctx::fiber&& incoming);
  ctx::fiber thread_main(int i, ctx::fiber&& caller);
  [[gnu::always_inline]] void wait_here();
  void on_exit(int i);
  // Thread i's accesses since its last barrier or collective go to the race detector.
  void end_segment(int i) {
    if (watched_) [[unlikely]]
      watcher_->end_segment(i, detail::t_counters, has_barrier_ ? &last_barrier_ : nullptr);
  }
  void release_barrier();
  bool try_complete(int warp, int lane);
  [[noreturn]] void fail(const std::string& message);
  [[noreturn, gnu::noinline, gnu::cold]] void fail_divergent_barrier(const char* op,
                                                                     std::source_location site);
  [[noreturn, gnu::noinline, gnu::cold]] void fail_deadlock() { fail(deadlock_message()); }
  [[noreturn, gnu::noinline, gnu::cold]] void fail_collective_arguments(const char* op,
                                                                        uint32_t mask, int width,
                                                                        std::source_location site);
  std::string deadlock_message() const;

  const BlockSpec& spec_;
  const std::function<void()>& body_;
  Worker& w_;
  const int n_;
  int live_;     // threads that have not returned
  int cur_ = 0;  // the running thread, or kHome
  bool scheduled_ = false;
  int host_ = kHome;  // the thread on the worker's own stack (kHome once it has returned)
  int from_ = kHome;  // who switched last (Note [Who holds a suspended context])
  ctx::fiber home_;
  int head_ = 0, queued_ = 0;          // the run queue, a ring in w_.ring
  bool abandoning_ = false;            // ~Block unwinds the suspended threads
  const void* main_bottom_ = nullptr;  // the worker's own stack, as ASan knows it
  size_t main_size_ = 0;
  int barrier_true_ = 0;
  BarrierResult barrier_result_;
  std::exception_ptr error_;
  // Watching (kernel_watch.h): counters, bounds checks, the shared-memory race detector.
  bool watched_ = false;
  SharedWatcher* watcher_ = nullptr;
  bool has_barrier_ = false;
  std::source_location last_barrier_;  // the last barrier released, for race reports
  // Counted here and added to the global counters once, when the block ends.
  uint64_t fibers_created_ = 0, switches_ = 0, barriers_ = 0, warp_collectives_ = 0;
};

thread_local Block* t_block = nullptr;

Block::Block(const BlockSpec& spec, const std::function<void()>& body)
    : spec_(spec), body_(body), w_(t_worker), n_(static_cast<int>(spec.block.count())), live_(n_) {
  GLASS_INTERNAL_ASSERT(t_block == nullptr, "run_block(", spec.kernel,
                        ") called while this OS thread runs a block already");
  GLASS_INTERNAL_ASSERT(spec.block.count() >= 1 && spec.block.count() <= (1u << 20), "run_block(",
                        spec.kernel, ") with block ", dim_string(spec.block),
                        " (check_launch() should have refused it)");
  blockIdx = spec.block_idx;
  blockDim = spec.block;
  gridDim = spec.grid;
  const size_t words =
      (spec.dynamic_shared_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  if (w_.dynamic_shared.size() < words) w_.dynamic_shared.resize(words);
  t_block = this;
  watched_ = begin_block_watch(spec.block);
  if (watched_) watcher_ = &shared_watcher();
}

Block::~Block() {
  if (scheduled_) abandon_suspended_threads();
  if (watched_) stop_block_watch();
  t_block = nullptr;
  count(g_counters.blocks_run, 1);
  count(g_counters.fibers_created, fibers_created_);
  count(g_counters.switches, switches_);
  count(g_counters.barriers, barriers_);
  count(g_counters.warp_collectives, warp_collectives_);
}

std::string Block::where() const {
  return str_cat("kernel '", spec_.kernel, "', block ", dim_string(spec_.block_idx), ": ");
}

// Plain mode: each thread to completion on the worker's own stack, until one of them
// waits (start_scheduling); that one then finishes as the host thread.
void Block::run() {
  Dim3 t(0, 0, 0);
  for (int i = 0; i < n_; ++i) {
    cur_ = i;
    threadIdx = t;
    body_();
    end_segment(i);
    if (scheduled_) return finish_host();
    --live_;
    next_index(t, spec_.block);
  }
}

// The running thread (on the worker's stack) is about to wait: from here on threads are
// scheduled. Threads before it have returned; those after it are queued, not yet started.
void Block::finish() {
  if (!watched_) return;
  if (!watcher_->race().empty()) {
    const uint64_t more = watcher_->races() - 1;
    glass::detail::throw_error(str_cat(
        where(), watcher_->race(),
        more == 0 ? std::string(".") : str_cat(" (and ", more, " more conflicting pairs).")));
  }
  end_block_watch(barriers_, warp_collectives_);
  watched_ = false;
}

void Block::start_scheduling() {
  scheduled_ = true;
  host_ = cur_;
  w_.threads.clear();
  w_.threads.resize(n_);
  Dim3 t(0, 0, 0);
  for (SimThread& thread : w_.threads) {
    thread.idx = t;
    next_index(t, spec_.block);
  }
  for (int i = 0; i < cur_; ++i) w_.threads[i].exited = true;
  w_.threads[cur_].started = true;
  w_.warps.assign((n_ + kWarp - 1) / kWarp, Warp{});
  for (int i = cur_; i < n_; ++i) w_.warps[i / kWarp].live |= 1u << (i % kWarp);
  w_.ring.assign(n_, 0);
  head_ = queued_ = 0;
  for (int i = cur_ + 1; i < n_; ++i) push(i);
  w_.barrier_waiters.clear();
}

// The host thread has returned: the worker's stack becomes home and waits until the
// fibers have all returned (or one of them failed).
void Block::finish_host() {
  on_exit(cur_);
  host_ = kHome;
  cur_ = kHome;
  if (live_ == 0) return;
  const int next = pop();
  if (next < 0) fail_deadlock();
  switch_to(kHome, next);
  if (error_) std::rethrow_exception(error_);
  GLASS_INTERNAL_ASSERT(live_ == 0, where(), live_, " threads neither returned nor failed");
}

void Block::push(int i) {
  int slot = head_ + queued_;
  if (slot >= n_) slot -= n_;
  w_.ring[slot] = i;
  ++queued_;
}

int Block::pop() {
  if (queued_ == 0) return -1;
  const int i = w_.ring[head_];
  if (++head_ == n_) head_ = 0;
  --queued_;
  return i;
}

// The slot of i, after giving a not-yet-started thread its fiber.
inline ctx::fiber& Block::context_of(int i) {
  if (i == kHome) return home_;
  SimThread& t = w_.threads[i];
  if (!t.started) [[unlikely]]
    start_fiber(i);
  return t.context;
}

void Block::start_fiber(int i) {
  SimThread& t = w_.threads[i];
  const ctx::stack_context sc = PooledFiberStack{}.allocate();
  t.stack_bottom = static_cast<char*>(sc.sp) - sc.size;
  t.stack_size = sc.size;
  t.context =
      ctx::fiber(std::allocator_arg, ctx::preallocated(sc.sp, sc.size, sc), PooledFiberStack{},
                 [this, i](ctx::fiber&& caller) { return thread_main(i, std::move(caller)); });
  t.started = true;
  ++fibers_created_;
}

void Block::announce_switch(void** fake_stack, int to) const {
  const bool on_fiber = to != kHome && w_.threads[to].stack_size != 0;
  asan_leaving(fake_stack, on_fiber ? w_.threads[to].stack_bottom : main_bottom_,
               on_fiber ? w_.threads[to].stack_size : main_size_);
}

// Suspends `from` (the running thread, or home) and runs `to`; returns when someone
// switches back to `from`.
inline void Block::switch_to(int from, int to) {
  ctx::fiber& target = context_of(to);
  from_ = from;
  enter(to);
  ++switches_;
  void* fake_stack = nullptr;
  announce_switch(&fake_stack, to);
  ctx::fiber incoming = std::move(target).resume();
  asan_arrived(fake_stack, nullptr, nullptr);
  adopt(std::move(incoming));
  if (abandoning_) [[unlikely]]
    throw Abandon{};  // Note [Errors inside a block]
}

// The same from a thread whose function is returning: the context to resume is returned.
ctx::fiber Block::hand_over(int from, int to) {
  ctx::fiber& target = context_of(to);
  from_ = from;
  enter(to);
  ++switches_;
  announce_switch(nullptr, to);
  return std::move(target);
}

void Block::adopt(ctx::fiber&& incoming) {
  if (incoming) (from_ == kHome ? home_ : w_.threads[from_].context) = std::move(incoming);
}

// The function of thread i's fiber.
ctx::fiber Block::thread_main(int i, ctx::fiber&& caller) {
  const void* from_bottom = nullptr;
  size_t from_size = 0;
  asan_arrived(nullptr, &from_bottom, &from_size);
  if (from_ == host_ && main_bottom_ == nullptr) {  // the worker's stack, as ASan knows it
    main_bottom_ = from_bottom;
    main_size_ = from_size;
  }
  adopt(std::move(caller));
  try {
    body_();
    end_segment(i);
    on_exit(i);
    int next = pop();
    if (next < 0) {
      // Nothing can run. Either every thread has returned (the host too: home waits), or
      // the rest wait for something that can never happen.
      if (live_ > 0) error_ = std::make_exception_ptr(Error(deadlock_message()));
      next = host_;
    }
    return hand_over(i, next);
  } catch (const Abandon&) {
    // ~Block unwound this thread; the worker's stack is waiting for it to end.
  } catch (const ctx::detail::forced_unwind&) {
    throw;  // Boost unwinding the fiber: let it through
  } catch (...) {
    error_ = std::current_exception();
  }
  return hand_over(i, host_);  // Note [Errors inside a block]
}

// Note [Errors inside a block]: on the worker's stack, after the block failed.
// Each suspended thread resumes inside switch_to(), throws Abandon there, unwinds, and
// hands the CPU back here as it ends.
void Block::abandon_suspended_threads() {
  abandoning_ = true;
  for (int i = 0; i < n_; ++i) {
    // The host thread runs on this very stack; every other started thread that has not
    // returned is suspended and holds a stack.
    if (i == host_ || !w_.threads[i].context) continue;
    from_ = host_;
    enter(i);
    void* fake_stack = nullptr;
    announce_switch(&fake_stack, i);
    ctx::fiber incoming = std::move(w_.threads[i].context).resume();
    asan_arrived(fake_stack, nullptr, nullptr);
    GLASS_INTERNAL_ASSERT(!incoming, where(), "an abandoned thread did not end");
  }
  abandoning_ = false;
}

// The running thread has registered what it waits for; run someone else until it is
// released (it is then queued, and resumed here).
inline void Block::wait_here() {
  const int next = pop();
  if (next < 0) fail_deadlock();
  switch_to(cur_, next);
  if (error_) {
    GLASS_INTERNAL_ASSERT(cur_ == host_, "a failed block resumed a fiber");
    std::rethrow_exception(error_);
  }
}

// Thread i has returned: it counts as arrived at every barrier and collective from now on.
void Block::on_exit(int i) {
  SimThread& t = w_.threads[i];
  t.exited = true;
  t.wait = Wait::None;
  --live_;
  const int warp = i / kWarp;
  Warp& w = w_.warps[warp];
  w.live &= ~(1u << (i % kWarp));
  for (uint32_t pending = w.waiting; pending != 0; pending = (pending & (pending - 1)) & w.waiting)
    try_complete(warp, std::countr_zero(pending));
  if (!w_.barrier_waiters.empty() && static_cast<int>(w_.barrier_waiters.size()) == live_)
    release_barrier();
}

// [SECTION] barriers

inline BarrierResult Block::sync_threads(const char* op, int predicate, std::source_location site) {
  end_segment(cur_);
  if (!scheduled_) start_scheduling();
  std::vector<int>& waiters = w_.barrier_waiters;
  if (!waiters.empty() && !same_site(w_.threads[waiters.front()].site, site))
    fail_divergent_barrier(op, site);
  SimThread& me = w_.threads[cur_];
  me.wait = Wait::Barrier;
  me.op = op;
  me.site = site;
  waiters.push_back(cur_);
  barrier_true_ += predicate != 0;
  if (static_cast<int>(waiters.size()) == live_) {
    release_barrier();  // the last to arrive carries on without a switch
  } else {
    wait_here();
  }
  return barrier_result_;
}

// Out of line, so that building the message does not bloat sync_threads()'s stack frame
// (each waiting fiber's frame is touched again when it resumes).
void Block::fail_divergent_barrier(const char* op, std::source_location site) {
  const int first = w_.barrier_waiters.front();
  fail(str_cat(where(), thread_name(cur_), " reached ", op, "() at ", site_string(site), " while ",
               thread_name(first), " waits at ", w_.threads[first].op, "() at ",
               site_string(w_.threads[first].site),
               ". Every non-exited thread of a block must reach the same __syncthreads() "
               "(threads that returned count as arrived), so a barrier inside a branch that "
               "only some threads take never completes; move it out of the branch."));
}

// Every non-exited thread waits at the barrier: queue them all (but the running one).
void Block::release_barrier() {
  std::vector<int>& waiters = w_.barrier_waiters;
  // Read by each waiter when it resumes; the next release needs all of them to arrive
  // again first, so this value outlives every read of it.
  barrier_result_ = {barrier_true_, static_cast<int>(waiters.size())};
  if (watched_) [[unlikely]] {
    watcher_->barrier_released();
    if (!waiters.empty()) last_barrier_ = w_.threads[waiters.front()].site;
    has_barrier_ = !waiters.empty();
  }
  for (int t : waiters) {
    w_.threads[t].wait = Wait::None;
    if (t != cur_) push(t);
  }
  waiters.clear();
  barrier_true_ = 0;
  ++barriers_;
}

// [SECTION] warp collectives

// The lane whose value `lane` receives, by CUDA's rules: width splits the warp into
// segments; a lane may read from its own or an earlier segment, and reads its own value
// where CUDA says so (a shuffle past the segment's edge) or names no lane (-1).
int source_lane(int lane, LaneSource source, long long arg, int width) {
  const int base = lane & ~(width - 1);  // first lane of this lane's segment
  switch (source) {
    case LaneSource::None: return -1;
    case LaneSource::Index: return base + static_cast<int>(arg & (width - 1));
    case LaneSource::Up: return lane - base >= arg ? lane - static_cast<int>(arg) : -1;
    case LaneSource::Down: return lane - base + arg < width ? lane + static_cast<int>(arg) : -1;
    case LaneSource::Xor: {
      const long long src = lane ^ arg;
      return src >= 0 && src < base + width ? static_cast<int>(src) : -1;
    }
  }
  return -1;
}

inline WarpResult Block::warp_collective(const char* op, uint32_t mask, uint64_t value,
                                         LaneSource source, long long arg, int width,
                                         std::source_location site) {
  const int lane = cur_ % kWarp, warp = cur_ / kWarp;
  if (width < 1 || width > kWarp || !std::has_single_bit(static_cast<unsigned>(width)) ||
      (mask >> lane & 1u) == 0) [[unlikely]]
    fail_collective_arguments(op, mask, width, site);
  end_segment(cur_);
  if (!scheduled_) start_scheduling();
  SimThread& me = w_.threads[cur_];
  me.wait = Wait::Warp;
  me.op = op;
  me.site = site;
  me.mask = mask;
  me.value = value;
  me.src_lane = source_lane(lane, source, arg, width);
  w_.warps[warp].waiting |= 1u << lane;
  if (!try_complete(warp, lane)) wait_here();
  return me.result;
}

// Out of line, as fail_divergent_barrier().
void Block::fail_collective_arguments(const char* op, uint32_t mask, int width,
                                      std::source_location site) {
  const int lane = cur_ % kWarp;
  GLASS_CHECK(width >= 1 && width <= kWarp && std::has_single_bit(static_cast<unsigned>(width)),
              where(), thread_name(cur_), " calls ", op, "() at ", site_string(site),
              " with width ", width, "; width must be a power of 2 from 1 to 32 (warpSize)");
  GLASS_CHECK((mask >> lane & 1u) != 0, where(), thread_name(cur_), " (lane ", lane, ") calls ", op,
              "() at ", site_string(site), " with mask ", hex32(mask),
              ", which does not name its own lane; the mask must include every lane that calls "
              "the collective (0xffffffff for the whole warp)");
  GLASS_INTERNAL_ASSERT(false, where(), op, "() arguments reported bad but found good");
}

// Completes the collective `lane` waits at if every non-exited lane of its mask is there
// too: computes every participant's result and queues them (but the running one).
bool Block::try_complete(int warp, int lane) {
  const int base = warp * kWarp;
  Warp& w = w_.warps[warp];
  const SimThread& a = w_.threads[base + lane];
  uint32_t group = 0;  // lanes waiting at the same collective (each is in its own mask)
  for (uint32_t bits = w.waiting; bits != 0; bits &= bits - 1) {
    const int l = std::countr_zero(bits);
    const SimThread& t = w_.threads[base + l];
    if (t.mask == a.mask && same_site(t.site, a.site)) group |= 1u << l;
  }
  if (group != (a.mask & w.live)) return false;

  uint32_t ballot = 0;
  for (uint32_t bits = group; bits != 0; bits &= bits - 1) {
    const int l = std::countr_zero(bits);
    if (w_.threads[base + l].value != 0) ballot |= 1u << l;
  }
  for (uint32_t bits = group; bits != 0; bits &= bits - 1) {
    SimThread& t = w_.threads[base + std::countr_zero(bits)];
    const int src = t.src_lane;
    // A lane outside the collective (exited, or not in the mask) has no value to give:
    // undefined on a GPU; here the caller keeps its own.
    t.result.value = src >= 0 && (group >> src & 1u) ? w_.threads[base + src].value : t.value;
    t.result.ballot = ballot;
    t.result.participants = group;
  }
  for (uint32_t bits = group; bits != 0; bits &= bits - 1) {
    const int i = base + std::countr_zero(bits);
    w_.threads[i].wait = Wait::None;
    if (i != cur_) push(i);
  }
  w.waiting &= ~group;
  ++warp_collectives_;
  if (watched_) [[unlikely]]
    watcher_->warp_synced(warp, group);
  return true;
}

// [SECTION] errors

// Note [Errors inside a block]: raise on the worker's own stack.
void Block::fail(const std::string& message) {
  if (cur_ == host_) glass::detail::throw_error(message);
  error_ = std::make_exception_ptr(Error(message));
  switch_to(cur_, host_);
  GLASS_INTERNAL_ASSERT(false, where(), "a simulated thread of a failed block was resumed");
}

// Every non-exited thread waits and none can be released: say who waits where.
std::string Block::deadlock_message() const {
  const std::vector<SimThread>& threads = w_.threads;
  if (!w_.barrier_waiters.empty()) {
    // Not everyone is at the barrier, so someone waits at a warp collective.
    const int b = w_.barrier_waiters.front();
    for (int i = 0; i < n_; ++i) {
      const SimThread& t = threads[i];
      if (t.exited || t.wait != Wait::Warp) continue;
      return str_cat(where(), thread_name(b), " waits at ", threads[b].op, "() at ",
                     site_string(threads[b].site), " while ", thread_name(i), " waits at ", t.op,
                     "() at ", site_string(t.site),
                     "; neither can complete (a barrier needs every non-exited thread of the "
                     "block, a warp collective every non-exited lane of its mask). Every thread "
                     "must reach the same barriers and collectives in the same order.");
    }
  }
  for (int i = 0; i < n_; ++i) {
    const SimThread& t = threads[i];
    if (t.exited || t.wait != Wait::Warp) continue;
    const int base = i / kWarp * kWarp;
    for (uint32_t bits = t.mask & w_.warps[i / kWarp].live; bits != 0; bits &= bits - 1) {
      const int o = base + std::countr_zero(bits);
      const SimThread& other = threads[o];
      if (other.wait == Wait::Warp && other.mask == t.mask && same_site(other.site, t.site))
        continue;
      return str_cat(where(), thread_name(i), " waits at ", t.op, "() at ", site_string(t.site),
                     " with mask ", hex32(t.mask), ", but lane ", o % kWarp, " of its warp, ",
                     thread_name(o), ", waits at ", other.op, "() at ", site_string(other.site),
                     other.wait == Wait::Warp ? str_cat(" with mask ", hex32(other.mask)) : "",
                     ". Every non-exited lane named in the mask must reach the same warp "
                     "collective with the same mask.");
    }
  }
  GLASS_INTERNAL_ASSERT(false, where(),
                        "no thread can run, yet none waits at an incomplete barrier or collective");
}

Block& current_block(const char* op) {
  GLASS_CHECK(t_block != nullptr, op,
              "() was called outside a kernel: no simulated block runs on this thread. Call it "
              "from a kernel launched with GLASS_LAUNCH (cuda/launch.h).");
  return *t_block;
}

}  // namespace

// [SECTION] entry points

void run_block(const BlockSpec& spec, const std::function<void()>& thread_body) {
  Block block(spec, thread_body);
  block.run();
  block.finish();
}

BlockRunnerStats block_runner_stats() {
  auto get = [](const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  BlockRunnerStats s;
  s.blocks_run = get(g_counters.blocks_run);
  s.fibers_created = get(g_counters.fibers_created);
  s.stacks_allocated = fiber_stacks_mapped() - get(g_counters.stacks_mapped_at_reset);
  s.switches = get(g_counters.switches);
  s.barriers = get(g_counters.barriers);
  s.warp_collectives = get(g_counters.warp_collectives);
  return s;
}

void reset_block_runner_stats() {
  for (std::atomic<uint64_t>* c :
       {&g_counters.blocks_run, &g_counters.fibers_created, &g_counters.switches,
        &g_counters.barriers, &g_counters.warp_collectives})
    c->store(0, std::memory_order_relaxed);
  g_counters.stacks_mapped_at_reset.store(fiber_stacks_mapped(), std::memory_order_relaxed);
}

namespace detail {

BarrierResult sync_threads(const char* op, int predicate, std::source_location site) {
  return current_block(op).sync_threads(op, predicate, site);
}

WarpResult warp_collective(const char* op, uint32_t mask, uint64_t value, LaneSource source,
                           long long arg, int width, std::source_location site) {
  return current_block(op).warp_collective(op, mask, value, source, arg, width, site);
}

void* dynamic_shared_memory() { return current_block("GLASS_DYNAMIC_SHARED").dynamic_shared(); }
size_t dynamic_shared_bytes() {
  return current_block("GLASS_DYNAMIC_SHARED").dynamic_shared_bytes();
}

std::string current_thread_where() {
  if (t_block == nullptr) return "";
  return t_block->where(t_block->thread_name(t_block->current()));
}

void null_gptr_access() {
  if (t_block == nullptr) glass::detail::throw_error("a null gptr was dereferenced");
  glass::detail::throw_error(
      str_cat(t_block->where(), t_block->thread_name(t_block->current()),
              " dereferenced a null gptr (a null global-memory pointer; on a GPU, an illegal "
              "memory access). Check the pointer arguments of the launch."));
}

}  // namespace detail
}  // namespace glass::cuda::sim
