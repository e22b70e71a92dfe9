#!/usr/bin/env bash
# scripts/test.sh — install what is missing, build everything, run the whole test suite.
#
# Two builds: Release (every test, the lessons' output checks and the install/consumer
# test), then the core, autograd, nn, CUDA (simulator) and distributed tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer with the caching allocators off, so freed
# memory really is freed.
# Usage: bash scripts/test.sh   (.ci/run calls exactly this)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/deps.sh"
glass_install_deps
jobs="$(glass_jobs)"

build="${GLASS_BUILD_DIR:-$root/build}"
# -U: whatever run.sh chose, the tests build the GPU kernels wherever nvcc exists.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGLASS_WERROR=ON \
  -UGLASS_CUDA_KERNELS
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 600

asan="${GLASS_ASAN_BUILD_DIR:-$root/build-asan}"
# -O1 -g1 (line tables only): the sanitizers' reports keep file:line, and the build takes half
# the time of -O2 -g (the slowest stage of CI on 2 cores).
cmake -S "$root" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGLASS_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DGLASS_BUILD_BENCH=OFF -DGLASS_BUILD_LESSONS=OFF -DGLASS_WERROR=ON -DGLASS_CUDA_KERNELS=OFF
cmake --build "$asan" -j "$jobs" --target core_tests autograd_tests nn_tests nn_optim_tests \
  nn_data_tests nn_serialize_tests cuda_sim_tests cuda_exec_tests cuda_alloc_tests cuda_backend_tests \
  cuda_suites_tests distributed_tests compiler_tests
# The simulated GPU too: its fibers tell ASan when they switch stacks (block_runner.cpp).
GLASS_CPU_CACHING=0 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$asan" -j "$jobs" -L "core|autograd|nn|cuda|distributed|compiler" -LE gpu \
  -E "^MpiBackend[.]" --output-on-failure --timeout 900
# OpenMPI's plugins, unloaded by MPI_Finalize, leave allocations LeakSanitizer can neither
# attribute nor suppress (their module is gone): the MPI tests run with every check but that.
GLASS_CPU_CACHING=0 ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$asan" -j "$jobs" -R "^MpiBackend[.]" --output-on-failure --timeout 900
