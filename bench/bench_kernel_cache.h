// bench/bench_kernel_cache.h — a kernel cache of the benchmark run's own (the compiler
// benchmarks): a fresh folder under /tmp as GLASS_CACHE_DIR, so "cold" is cold, removed with
// the kernels unloaded when the run ends, so nothing is left behind.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "compiler/kernel_cache.h"

namespace glass_bench {

class ScopedKernelCache {
 public:
  ScopedKernelCache() {
    dir_ = (std::filesystem::temp_directory_path() / "glass-bench-cache-XXXXXX").string();
    if (::mkdtemp(dir_.data()) != nullptr)
      ::setenv("GLASS_CACHE_DIR", dir_.c_str(), 1);
    else
      dir_.clear();
  }
  ~ScopedKernelCache() {
    glass::compiler::forget_loaded_kernels();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  ScopedKernelCache(const ScopedKernelCache&) = delete;
  ScopedKernelCache& operator=(const ScopedKernelCache&) = delete;

 private:
  std::string dir_;
};

}  // namespace glass_bench
