// core/parallel.h — the intra-op thread pool behind set_num_threads / parallel_for.
//
// One process-wide pool of (num_threads - 1) workers; the calling thread does the first
// chunk itself. Invariants: a parallel_for called from inside a worker (or while another
// parallel_for runs on this thread) runs serially, so nested parallelism never
// oversubscribes the cores; work is split into at most num_threads contiguous chunks of
// at least `grain` iterations each, so small loops never pay for a wake-up; a thread
// marked serial (set_thread_runs_serial) never takes the pool.
#pragma once

#include <cstdint>
#include <functional>

namespace glass {

// Number of threads intra-op parallel regions may use (libtorch's names). Default: the
// number of cores, or GLASS_NUM_THREADS / OMP_NUM_THREADS from the environment.
void set_num_threads(int n);
int get_num_threads();

// True while the calling thread is executing inside a parallel region.
bool in_parallel_region();

// Calls f(chunk_begin, chunk_end) over disjoint chunks covering [begin, end).
// Exceptions thrown by f are rethrown on the calling thread (the first one wins).
void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f);

// Marks the calling thread as one that never uses the pool: its parallel_for runs the
// whole range itself. For threads that run beside the compute, such as a process group's
// communication thread (issue 11): the pool serves one region at a time, so a reduction
// loop there would otherwise take it and leave backward's matmuls single-threaded.
void set_thread_runs_serial(bool serial);
bool thread_runs_serial();

// RAII form of set_thread_runs_serial(true); restores the thread's previous setting.
class ThreadSerialGuard {
 public:
  ThreadSerialGuard() : previous_(thread_runs_serial()) { set_thread_runs_serial(true); }
  ~ThreadSerialGuard() { set_thread_runs_serial(previous_); }
  ThreadSerialGuard(const ThreadSerialGuard&) = delete;
  ThreadSerialGuard& operator=(const ThreadSerialGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace glass
