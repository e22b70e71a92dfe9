// cuda/sim/kernel_stats.h — what a kernel did, counted by the simulated GPU.
//
// A GPU kernel is fast when it moves few bytes per flop; these counters show that without
// a GPU to time it. Per launch, over all its blocks and threads:
//
//   global_load_bytes / global_store_bytes   bytes through gptr<const T> / gptr<T>
//   shared_loads / shared_stores             element accesses of GLASS_SHARED arrays
//   barriers                                 __syncthreads() released, summed over blocks
//   warp_syncs                               warp collectives completed (__syncwarp,
//                                            shuffles, votes), summed over warps
//   flops                                    what the kernel declared with GLASS_FLOPS(n)
//
// Counting rules, which follow from how the simulator sees memory: an access through a
// gptr<T> (writable) counts as a store of sizeof(T) bytes, so y[i] += x counts one store;
// a shared access is a store when the thread changed the element's bytes before its next
// barrier or collective, else a load (a read-modify-write is one store; writing the value
// already there is a load). Accesses through raw pointers taken from either (&s[0]) are
// not counted.
//
// Counting is on while checking is (GLASS_SIM_CHECK=1), while a ScopedKernelStats lives,
// or with GLASS_SIM_STATS=1; each counted launch's stats go into its timeline record.
//
//   glass::cuda::sim::ScopedKernelStats stats;   // counting on from here
//   matmul(...); runtime().device_synchronize(0);
//   std::cout << stats.total().arithmetic_intensity();  // flops per global byte
//   glass::cuda::sim::last_kernel_stats();              // the last counted launch
//
// Invariant: a launch's stats are complete when the launch has completed (a synchronize
// returned); total() counts exactly the launches that completed while the collector lived.
#pragma once

#include <cstdint>
#include <string>

namespace glass::cuda::sim {

struct KernelStats {
  uint64_t global_load_bytes = 0;
  uint64_t global_store_bytes = 0;
  uint64_t shared_loads = 0;
  uint64_t shared_stores = 0;
  uint64_t barriers = 0;
  uint64_t warp_syncs = 0;
  uint64_t flops = 0;
  uint64_t blocks = 0;    // blocks counted
  uint64_t launches = 0;  // kernel launches counted (1 for one launch's stats)

  uint64_t global_bytes() const { return global_load_bytes + global_store_bytes; }
  // Flops per byte of global memory traffic; 0 when nothing was moved.
  double arithmetic_intensity() const {
    return global_bytes() == 0 ? 0.0
                               : static_cast<double>(flops) / static_cast<double>(global_bytes());
  }
  KernelStats& operator+=(const KernelStats& o);
  friend KernelStats operator-(KernelStats a, const KernelStats& b);
  bool operator==(const KernelStats&) const = default;
};

// "loads 4.0 KiB, stores 4.0 KiB, shared 0 loads / 0 stores, 0 barriers, ..." for tables.
std::string to_string(const KernelStats& s);

// Whether launches are counted now (see above).
bool kernel_counting();
// Whether kernels are checked (global bounds, shared-memory races). The simulator turns
// it on with its race checker (GLASS_SIM_CHECK=1, SimRuntime::set_race_check); tests
// that run blocks directly may set it themselves.
void set_kernel_checks(bool on);
bool kernel_checks();

// The stats of the last counted launch to complete (zero before any).
KernelStats last_kernel_stats();
// The sum over every counted launch so far, and over blocks run directly (run_block()
// outside a launch; those count as blocks, not launches).
KernelStats total_kernel_stats();

// Turns counting on while it lives and sums what completes meanwhile. Nestable.
class ScopedKernelStats {
 public:
  ScopedKernelStats();
  ~ScopedKernelStats();
  ScopedKernelStats(const ScopedKernelStats&) = delete;
  ScopedKernelStats& operator=(const ScopedKernelStats&) = delete;
  KernelStats total() const { return total_kernel_stats() - start_; }

 private:
  KernelStats start_;
};

}  // namespace glass::cuda::sim
