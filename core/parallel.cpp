// core/parallel.cpp — the process-wide thread pool behind parallel_for.
//
// Invariant: at most one parallel region uses the pool at a time. The thread that calls
// parallel_for owns the pool for the whole region (it holds g_pool_mutex), runs chunk 0
// itself, helps with the rest, and returns only after every chunk has finished, so
// nothing a chunk touches can outlive the call. A second, unrelated thread that finds
// the pool busy, and any call made from inside a region, runs its loop serially instead
// of waiting: nested or concurrent parallelism never oversubscribes the cores and never
// deadlocks. A thread marked serial (set_thread_runs_serial: a communication thread)
// never tries for the pool at all, so it cannot be the one holding it when compute wants it.
#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/events.h"

namespace glass {
namespace {

// True on pool workers always, and on the calling thread while it runs chunks.
thread_local bool t_in_parallel_region = false;
// set_thread_runs_serial: this thread leaves the pool to the others.
thread_local bool t_runs_serial = false;

class RegionGuard {
 public:
  RegionGuard() : previous_(t_in_parallel_region) { t_in_parallel_region = true; }
  ~RegionGuard() { t_in_parallel_region = previous_; }
  RegionGuard(const RegionGuard&) = delete;
  RegionGuard& operator=(const RegionGuard&) = delete;

 private:
  bool previous_;
};

// One parallel_for call. Shared (not owned by the caller's stack) because a worker that
// wakes up late may still hold it after the caller has returned; such a worker finds
// no chunk left and never calls f, so f itself only needs to live as long as the call.
struct Job {
  const std::function<void(int64_t, int64_t)>* f = nullptr;
  int64_t begin = 0, num_chunks = 0;
  int64_t base = 0, extra = 0;  // chunk c has base + 1 iterations if c < extra, else base
  int rank = -1;                // the caller's events::current_rank(), worn by the workers

  std::atomic<int64_t> next_chunk{1};  // chunk 0 is reserved for the caller
  std::atomic<int64_t> unfinished{0};  // chunks not yet done; the caller waits for 0
  std::atomic<bool> failed{false};     // after a throw, chunks not yet started are skipped
  std::exception_ptr error;            // the first exception, guarded by done_mutex

  std::mutex done_mutex;
  std::condition_variable done_cv;

  void run_chunk(int64_t c) {
    if (!failed.load(std::memory_order_relaxed)) {
      const int64_t lo = begin + c * base + std::min(c, extra);
      const int64_t hi = lo + base + (c < extra ? 1 : 0);
      try {
        (*f)(lo, hi);
      } catch (...) {
        std::lock_guard<std::mutex> lock(done_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
    if (unfinished.fetch_sub(1) == 1) {
      // Notify under the lock so the caller cannot miss it between its check and its wait.
      std::lock_guard<std::mutex> lock(done_mutex);
      done_cv.notify_all();
    }
  }

  // Claims chunks until none are left (every thread, the caller included, runs this).
  void help() {
    for (int64_t c = next_chunk.fetch_add(1); c < num_chunks; c = next_chunk.fetch_add(1)) {
      run_chunk(c);
    }
  }
};

// Waking a sleeping thread through the kernel costs tens of microseconds (more in a VM),
// as much as a whole chunk of a mid-sized matmul. So a thread that runs out of work
// first busy-waits this long for the next job before it blocks: back-to-back regions,
// as in gemm's pack-then-compute pairs, find their workers already awake.
constexpr std::chrono::microseconds kSpinTime{200};

// Spins until ready() or kSpinTime has passed; returns ready()'s last answer.
template <class Ready>
bool spin_until(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpinTime;
  for (int i = 1;; ++i) {
    if (ready()) return true;
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();  // lets a runnable thread have the core if it needs it
    }
  }
}

class ThreadPool {
 public:
  explicit ThreadPool(int num_workers) {
    workers_.reserve(num_workers);
    for (int i = 0; i < num_workers; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_cv_.notify_all();
    for (std::thread& w : workers_) w.join();
  }

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Runs the job on the caller plus the workers; returns when every chunk is done.
  void run(const std::shared_ptr<Job>& job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = job;
      ++generation_;
    }
    wake_cv_.notify_all();

    {
      RegionGuard guard;
      job->run_chunk(0);
      job->help();
    }
    auto all_done = [&] { return job->unfinished.load() == 0; };
    if (!spin_until(all_done)) {
      std::unique_lock<std::mutex> lock(job->done_mutex);
      job->done_cv.wait(lock, all_done);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    job_.reset();  // late workers see no job rather than a finished one
  }

 private:
  void worker_loop() {
    t_in_parallel_region = true;
    uint64_t seen = 0;
    for (;;) {
      spin_until([&] { return stop_.load() || generation_.load() != seen; });
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;
      }
      if (job) {
        // What the chunks publish (an allocation, say) belongs to the caller's rank: with
        // the threads backend, ranks share this pool.
        events::ThreadRankGuard rank(job->rank);
        job->help();
      }
    }
  }

  std::mutex mutex_;  // guards job_; generation_ and stop_ change only under it
  std::condition_variable wake_cv_;
  std::shared_ptr<Job> job_;
  std::atomic<uint64_t> generation_{0};  // atomic so spinning workers can watch it
  std::atomic<bool> stop_{false};
  std::vector<std::thread> workers_;
};

// Returns the positive integer in environment variable `name`, or 0 if unset or invalid.
int env_threads(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return 0;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || n < 1 || n > 4096) return 0;
  return static_cast<int>(n);
}

int default_num_threads() {
  if (int n = env_threads("GLASS_NUM_THREADS")) return n;
  if (int n = env_threads("OMP_NUM_THREADS")) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

// g_pool_mutex is held for the whole of a parallel region and while the pool is rebuilt.
std::mutex g_pool_mutex;
std::atomic<int> g_num_threads{0};   // 0 until first read: the environment is read lazily
std::unique_ptr<ThreadPool> g_pool;  // built on first use with (num_threads - 1) workers

}  // namespace

int get_num_threads() {
  int n = g_num_threads.load();
  if (n == 0) {
    int expected = 0;
    g_num_threads.compare_exchange_strong(expected, default_num_threads());
    n = g_num_threads.load();
  }
  return n;
}

void set_num_threads(int n) {
  GLASS_CHECK(n >= 1, "set_num_threads(): expected a thread count >= 1, got ", n,
              ". Use set_num_threads(1) to run everything on the calling thread.");
  GLASS_CHECK(!in_parallel_region(),
              "set_num_threads(): cannot change the thread count from inside a parallel "
              "region. Call it before (or after) parallel_for.");
  std::lock_guard<std::mutex> lock(g_pool_mutex);  // waits for a running region to end
  if (n == g_num_threads.load()) return;
  g_pool.reset();  // joins the old workers; the next region builds a pool of the new size
  g_num_threads = n;
}

bool in_parallel_region() { return t_in_parallel_region; }

void set_thread_runs_serial(bool serial) { t_runs_serial = serial; }
bool thread_runs_serial() { return t_runs_serial; }

void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f) {
  if (begin >= end) return;
  const int64_t n = end - begin;
  grain = std::max<int64_t>(grain, 1);

  auto run_serially = [&] {
    RegionGuard guard;
    f(begin, end);
  };

  // Too small to split into two chunks of `grain`, or nested: not worth a wake-up. A
  // serial thread must not even try_lock the pool: winning it would starve the compute.
  if (n / grain < 2 || in_parallel_region() || t_runs_serial) return run_serially();

  std::unique_lock<std::mutex> lock(g_pool_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return run_serially();  // another thread's region holds the pool

  const int num_threads = get_num_threads();  // read under the lock: it matches g_pool
  if (num_threads == 1) {
    lock.unlock();
    return run_serially();
  }

  // An even split into at most num_threads chunks: sizes differ by at most one, and since
  // num_chunks <= n / grain, even the smaller ones hold at least `grain` iterations.
  const int64_t num_chunks = std::min<int64_t>(num_threads, n / grain);

  auto job = std::make_shared<Job>();
  job->f = &f;
  job->rank = events::current_rank();
  job->begin = begin;
  job->num_chunks = num_chunks;
  job->base = n / num_chunks;
  job->extra = n % num_chunks;
  job->unfinished = num_chunks;

  if (!g_pool) g_pool = std::make_unique<ThreadPool>(num_threads - 1);
  g_pool->run(job);

  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace glass
