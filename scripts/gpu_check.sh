#!/usr/bin/env bash
# scripts/gpu_check.sh — the CUDA tests and benchmarks on a real GPU, in one short run.
#
# A GPU machine is lent rarely, for 15 minutes of device time in all, starts bare, and
# reaches nothing outside itself. So nothing is built there: the binaries are built here
# for sm_90 (an H100/H200), packed into one folder with the shared libraries a bare
# machine may lack (the carry limit is 64 MiB), carried over with the working tree, and
# run. The run prints one table and stays under 4 minutes: every step has a `timeout`,
# and the steps share one deadline.
#
# 1. Here, on the build machine (no GPU needed; GLASS_NATIVE=OFF, because -march=native
#    code from this CPU may not run on the GPU machine's):
#
#      cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DGLASS_NATIVE=OFF \
#        -DGLASS_CUDA_ARCHS=90 -DGLASS_BUILD_LESSONS=OFF -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
#      cmake --build build-gpu -j2 --target cuda_gpu_tests cuda_sim_tests cuda_exec_tests \
#        cuda_alloc_tests cuda_backend_tests cuda_train_tests cuda_suites_tests bench_cuda \
#        bench_cuda_kernels bench_cuda_gemm bench_cuda_train bench_cuda_sim_ladder \
#        bench_cuda_sim_sync bench_cuda_sim_watch compiler_tests distributed_tests
#      scripts/gpu_check.sh pack build-gpu build-gpu-pack
#
#    `pack` takes every cuda_*_tests and bench_cuda* binary it finds in the build folder,
#    compiler_tests with libnvrtc (opened with dlopen, so ldd misses it) for its GPU half,
#    and distributed_tests for its NCCL tests. libnccl (~200 MiB, also dlopen()ed) is too
#    big to carry: those run against the GPU machine's own NCCL, and skip, saying so, on a
#    machine without one.
#    The benchmarks' rows, each against its reference in the same run: bench_cuda_kernels
#    (c = a + b vs a copy kernel, sum vs CUB, online vs three-pass softmax: the vs_* counters),
#    bench_cuda_gemm (each rung and cuBLAS at 4096, FLOP/s), bench_cuda_train (a training
#    step, CPU vs GPU). bench_cuda_sim_* measure the simulator itself and are left out on a
#    GPU (they say so in the table).
#
#    `pack` checks that no binary links libcuda (they must start without a driver),
#    compresses the binaries into PACK_DIR/pack.tar.xz (they share most of their bytes:
#    ~160 MiB become ~10 MiB) and checks that it fits the carry limit. `run` unpacks it
#    under $TMPDIR. Then try it here, where there is no GPU:
#      scripts/gpu_check.sh run build-gpu-pack
#    runs the same binaries on the simulator (GLASS_CUDA=sim; GPU_CHECK_CUDA overrides)
#    and must end with the GPU tests SKIPPED (exit 77) and nothing FAILED.
#
# 2. There, through the device tool (`run`), in one call:
#
#      run(command="bash scripts/gpu_check.sh run build-gpu-pack",
#          carry=["build-gpu-pack"], timeout_s=300)
#
#    Full logs are written under $OUT/gpu-check/ when $OUT is set (the tool brings that
#    folder back), otherwise under the pack folder.
#
# Exit status of `run`: 0 when no step failed or timed out, 1 otherwise.
set -uo pipefail

DEADLINE_S=${GPU_CHECK_DEADLINE_S:-225}  # the whole run, well inside 4 minutes
TEST_CAP_S=75       # one test binary
BENCH_CAP_S=40      # one benchmark binary
BENCH_MIN_TIME=0.1  # seconds per benchmark (Google Benchmark 1.7's --benchmark_min_time)

usage() {
  sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 2
}

# ---- pack: on the build machine ---------------------------------------------------------

# The shared libraries of a binary that a bare machine may lack: everything ldd resolves
# except the C library family, which must be the machine's own (it comes with its loader).
non_system_libs() {
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
    grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux[^/]*)\.so'
}

pack() {
  local build=${1:?usage: gpu_check.sh pack BUILD_DIR PACK_DIR}
  local out=${2:?usage: gpu_check.sh pack BUILD_DIR PACK_DIR}
  [[ -f $build/CMakeCache.txt ]] || { echo "pack: $build is not a CMake build folder" >&2; exit 1; }
  rm -rf "$out" && mkdir -p "$out/bin" "$out/lib"
  local bins
  mapfile -t bins < <(find "$build" -type f -perm -u+x \
    \( -name 'cuda_*_tests' -o -name 'bench_cuda*' -o -name compiler_tests \
    -o -name distributed_tests \) \
    -not -path '*/CMakeFiles/*' | sort)
  if ((${#bins[@]} == 0)); then
    echo "pack: no cuda_*_tests, bench_cuda*, compiler_tests or distributed_tests binaries" \
      "under $build; build them first" >&2
    exit 1
  fi
  local b lib
  for b in "${bins[@]}"; do
    # distributed_tests is carried for its NCCL tests only: built without nccl.h it has none.
    if [[ $(basename "$b") == distributed_tests ]] &&
      ! "$b" --gtest_list_tests --gtest_filter='Nccl.*' 2>/dev/null | grep -q '^Nccl\.'; then
      echo "pack: $b has no Nccl.* tests (built where the CUDA toolkit has no nccl.h); left out"
      continue
    fi
    if ldd "$b" | grep -q 'libcuda\.so'; then
      echo "pack: $b links libcuda (the driver); it would not start without one." \
        "Link CUDA::cudart_static only." >&2
      exit 1
    fi
    cp "$b" "$out/bin/" && strip --strip-unneeded "$out/bin/$(basename "$b")"
    while read -r lib; do cp -nL "$lib" "$out/lib/"; done < <(non_system_libs "$b")
  done
  # NVRTC, which compiler_tests' GPU tests compile generated kernels with: opened with
  # dlopen, so ldd does not list it; libnvrtc loads its builtins library the same way.
  local nvrtc
  nvrtc=$(find "${CUDA_HOME:-/usr/local/cuda}/lib64/" -maxdepth 1 -name 'libnvrtc.so.[0-9]*' \
    -not -name '*alt*' 2>/dev/null | sort | head -1)
  if [[ -n $nvrtc ]]; then
    cp -L "$nvrtc" "$out/lib/"
    find "$(dirname "$nvrtc")" -maxdepth 1 -name 'libnvrtc-builtins.so.[0-9]*' -not -name '*alt*' \
      -exec cp -L {} "$out/lib/" \;
  fi
  {
    echo "commit:   $(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo '?')" \
      "$(git -C "$(dirname "$0")/.." status --porcelain 2>/dev/null | grep -q . && echo '(+ uncommitted changes)')"
    echo "built:    $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
    echo "archs:    $(grep -E '^GLASS_CUDA_ARCHS:' "$build/CMakeCache.txt" | cut -d= -f2)" \
      "(kernels: $(grep -E '^GLASS_CUDA_KERNELS:' "$build/CMakeCache.txt" | cut -d= -f2))"
    echo "glibc:    $(ldd --version | head -1 | awk '{print $NF}') or newer needed"
    # Device code in each binary: its GPU architectures where cuobjdump exists, else the
    # size of its fatbin section (none: the binary has no nvcc-built kernels).
    local size
    for b in "$out"/bin/*; do
      if command -v cuobjdump >/dev/null; then
        echo "gpu code: $(basename "$b"): $(cuobjdump --list-elf "$b" 2>/dev/null |
          grep -o 'sm_[0-9a-z]*' | sort -u | tr '\n' ' ')"
      else
        size=$(readelf -SW "$b" | grep -o '\.nv_fatbin .*' | awk '{print $5}')
        if [[ -n $size ]]; then size="$((16#$size / 1024)) KiB fatbin"; else size=none; fi
        echo "gpu code: $(basename "$b"): $size"
      fi
    done
  } >"$out/MANIFEST"
  # Every binary links the whole library and its GPU code (~15 MiB each, ~160 MiB for all),
  # so the folder is carried as one archive: the binaries share most of their bytes, which
  # xz's 64 MiB window (-9) finds, and the archive is ~10 MiB. `run` unpacks it.
  local raw bytes
  raw=$(du -sb "$out" | cut -f1)
  local nlibs
  nlibs=$(find "$out/lib" -type f | wc -l)
  tar -C "$out" -cf - bin lib | xz -9 -T1 >"$out/pack.tar.xz" || {
    echo "pack: compressing $out failed" >&2
    exit 1
  }
  rm -rf "${out:?}/bin" "${out:?}/lib"
  bytes=$(du -sb "$out" | cut -f1)
  cat "$out/MANIFEST"
  echo "pack: ${#bins[@]} binaries, $nlibs libraries, $((raw / 1048576)) MiB," \
    "$((bytes / 1048576)) MiB packed in $out/pack.tar.xz"
  if ((bytes > 60 * 1048576)); then
    echo "pack: $out is over 60 MiB; the device tool carries 64 MiB in all" >&2
    exit 1
  fi
}

# ---- run: on the GPU machine ------------------------------------------------------------

START=$(date +%s)
ROWS=()   # "kind|name|result|seconds|detail"
FAILED=0
HAVE_GPU=0  # nvidia-smi sees a GPU: then a skipped GPU test is a failure
MODE=gpu    # GLASS_CUDA for every binary: gpu, or sim for a dry run without a GPU

remaining() { echo $((DEADLINE_S - ($(date +%s) - START))); }
row() { ROWS+=("$1|$2|$3|$4|$5"); }

# Runs one step under `timeout`, capped by what is left of the deadline; sets STATUS
# (the exit code, 124 for a timeout) and SECONDS_TAKEN.
timed() {
  local cap=$1 log=$2
  shift 2
  local left=$(($(remaining) - 5))
  ((left < cap)) && cap=$left
  if ((cap < 5)); then
    STATUS=-1 SECONDS_TAKEN=0
    return
  fi
  local t0
  t0=$(date +%s%N)
  timeout --kill-after=5 "$cap" "$@" >"$log" 2>&1
  STATUS=$?
  SECONDS_TAKEN=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN{printf "%.1f", (b-a)/1e9}')
}

run_tests() {
  local bin=$1 name log
  name=$(basename "$bin")
  log="$LOGS/$name.log"
  # compiler_tests: only its GPU half (NVRTC, and the launch on a GPU), against the headers
  # of the carried working tree (generated kernels include cuda/kernel.h).
  local extra=()
  [[ $name == compiler_tests ]] &&
    extra=(--gtest_filter='CudaCompileNvrtc.*:CudaCompileGpu.*')
  # distributed_tests: only NCCL's (the rest needs no GPU and runs in CI), in full, so the
  # log keeps a skipped test's reason.
  local brief=--gtest_brief=1
  if [[ $name == distributed_tests ]]; then
    extra=(--gtest_filter='Nccl.*')
    brief=--gtest_brief=0
  fi
  timed "$TEST_CAP_S" "$log" env GLASS_CUDA="$MODE" GLASS_SIM_CHECK=1 \
    GLASS_INCLUDE_DIR="$(cd "$(dirname "$0")/.." && pwd)" "$bin" "$brief" ${extra[@]+"${extra[@]}"}
  # --gtest_brief prints a line per failed test and the PASSED/SKIPPED totals.
  local passed skipped failures failed
  passed=$(grep -oE '^\[  PASSED  \] [0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  skipped=$(grep -oE '^\[  SKIPPED \] [0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  failures=$(grep -E '^\[  FAILED  \] [A-Za-z_].*\.' "$log" | sed 's/^\[  FAILED  \] //; s/ (.*//' |
    sort -u)
  failed=$(grep -c . <<<"$failures")
  local counts="${passed:-0} passed, ${failed} failed, ${skipped:-0} skipped"
  # NCCL's GPU test skipped (the machine has no libnccl, or no GPU) is a SKIP with its
  # reason, not a PASS: the table must not claim NCCL ran.
  if [[ $name == distributed_tests && $STATUS == 0 && ${skipped:-0} != 0 ]]; then
    local why
    why=$(grep -m1 -oE 'this GPU machine has no NCCL.*|needs GLASS_CUDA=gpu and a GPU' "$log")
    row test "$name" SKIP "$SECONDS_TAKEN" "$counts; ${why:-see $log}"
    return
  fi
  case $STATUS in
    -1) row test "$name" "NOT RUN" - "no time left in the ${DEADLINE_S} s budget"; FAILED=1 ;;
    0) row test "$name" PASS "$SECONDS_TAKEN" "$counts" ;;
    77)
      # Expected where there is no GPU (a dry run of this script); a failure where there is.
      row test "$name" SKIP "$SECONDS_TAKEN" "$(head -1 "$log" | head -c 150)"
      ((HAVE_GPU)) && FAILED=1
      ;;
    124 | 137) row test "$name" TIMEOUT "$SECONDS_TAKEN" "$counts; see $log"; FAILED=1 ;;
    *)
      local which
      which=$(head -4 <<<"$failures" | tr '\n' ' ' | sed 's/ *$//')
      [[ -z $which ]] && which="exit $STATUS: $(tail -1 "$log" | head -c 120)"
      row test "$name" FAIL "$SECONDS_TAKEN" "$counts; $which"
      FAILED=1
      ;;
  esac
}

# Google Benchmark's console lines: name, real time, unit, cpu time, unit, iterations,
# then counters (bytes_per_second=..., items_per_second=..., user counters).
run_bench() {
  local bin=$1 name log
  name=$(basename "$bin")
  log="$LOGS/$name.log"
  timed "$BENCH_CAP_S" "$log" env GLASS_CUDA="$MODE" "$bin" --benchmark_min_time="$BENCH_MIN_TIME" \
    --benchmark_color=false --benchmark_counters_tabular=false
  case $STATUS in
    -1) row bench "$name" "NOT RUN" - "no time left in the ${DEADLINE_S} s budget"; FAILED=1; return ;;
    124 | 137) row bench "$name" TIMEOUT "$SECONDS_TAKEN" "partial results in $log"; FAILED=1 ;;
    0) ;;
    *) row bench "$name" FAIL "$SECONDS_TAKEN" "exit $STATUS: $(tail -1 "$log" | head -c 120)"; FAILED=1 ;;
  esac
  # A row that called SkipWithError: on the simulator, a reference that needs a GPU (CUB,
  # cuBLAS) says so and is a SKIP; on a GPU a reference that did not run is an ERROR, since
  # the comparison the table is for is missing.
  local line skipped=SKIP
  [[ $MODE == gpu ]] && skipped=ERROR
  while IFS= read -r line; do
    ROWS+=("$line")
    [[ $line == *"|ERROR|"* ]] && FAILED=1
  done < <(awk -v prog="$name" -v skipped="$skipped" '
    /^-+$/ { table = 1; next }
    table && NF >= 2 && $2 == "ERROR" {
      name = $1; sub(/^[^ ]+ +ERROR OCCURRED: */, "")
      print "bench|" prog ": " name "|" skipped "|-|" $0; next
    }
    table && NF >= 6 && $2 ~ /^[0-9.e+]+$/ {
      detail = ""
      for (i = 7; i <= NF; i++) detail = detail (detail == "" ? "" : " ") $i
      print "bench|" prog ": " $1 "|" $2 " " $3 "|-|" detail
    }' "$log")
}

print_table() {
  local gpu=$1
  echo
  echo "== glasstorch GPU check: $gpu (GLASS_CUDA=$MODE)"
  sed 's/^/   /' "$PACK/MANIFEST" 2>/dev/null
  printf '%-6s %-52s %-14s %7s  %s\n' kind name result "time(s)" detail
  printf '%-6s %-52s %-14s %7s  %s\n' ------ ---------------------------------------------------- \
    -------------- ------- ------
  local r kind name result secs detail
  for r in "${ROWS[@]}"; do
    IFS='|' read -r kind name result secs detail <<<"$r"
    printf '%-6s %-52s %-14s %7s  %s\n' "$kind" "${name:0:52}" "$result" "$secs" "$detail"
  done
  echo "== $( ((FAILED)) && echo "FAILED" || echo "ok"): $(($(date +%s) - START)) s in all; logs in $LOGS"
}

run() {
  PACK=$(cd "${1:?usage: gpu_check.sh run PACK_DIR}" && pwd) || exit 1
  [[ -f $PACK/pack.tar.xz ]] || { echo "run: $PACK/pack.tar.xz is missing; make the pack with 'gpu_check.sh pack'" >&2; exit 1; }
  LOGS=${OUT:+$OUT/gpu-check}
  LOGS=${LOGS:-$PACK/logs}
  mkdir -p "$LOGS" && rm -f "$LOGS"/*.log
  # Unpacked outside the carried folder; python3's tarfile where there is no xz.
  local root
  root=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX") || exit 1
  if command -v xz >/dev/null; then
    tar -C "$root" -xJf "$PACK/pack.tar.xz"
  else
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
      "$PACK/pack.tar.xz" "$root"
  fi || { echo "run: could not unpack $PACK/pack.tar.xz into $root" >&2; exit 1; }
  BIN=$root/bin
  export LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # cuBLAS, the gemm reference, is dlopen()ed (tests/cuda/gpu/cublas_loader.h): let the
  # loader find the toolkit's copy where the machine has one off the default paths.
  local dir
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [[ -d $dir ]] && LD_LIBRARY_PATH+=":$dir"
  done

  local gpu="no GPU (nvidia-smi not found)"
  HAVE_GPU=0
  if command -v nvidia-smi >/dev/null; then
    if gpu=$(timeout 15 nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total \
      --format=csv,noheader 2>&1); then
      HAVE_GPU=1
    fi
    gpu=$(echo "$gpu" | head -2 | tr '\n' ';')
  fi
  # Without a GPU (a dry run of this script on the build machine) the same binaries run
  # on the simulator, so the run still means something; GPU tests then skip.
  MODE=${GPU_CHECK_CUDA:-$( ((HAVE_GPU)) && echo gpu || echo sim)}
  echo "gpu_check: $gpu; running with GLASS_CUDA=$MODE"

  local bin tests=()
  # The GPU runtime's own test first: if it fails, it explains the others' failures.
  [[ -x $BIN/cuda_gpu_tests ]] && tests+=("$BIN/cuda_gpu_tests")
  for bin in "$BIN"/cuda_*_tests; do
    [[ -x $bin && $bin != "$BIN/cuda_gpu_tests" ]] && tests+=("$bin")
  done
  [[ -x $BIN/compiler_tests ]] && tests+=("$BIN/compiler_tests")
  [[ -x $BIN/distributed_tests ]] && tests+=("$BIN/distributed_tests")
  for bin in "${tests[@]}"; do
    echo "gpu_check: $(basename "$bin") (GLASS_CUDA=$MODE)"
    run_tests "$bin"
  done
  for bin in "$BIN"/bench_cuda*; do
    [[ -x $bin ]] || continue
    # They time the simulated GPU itself: the GPU's minutes are better spent elsewhere.
    if [[ $MODE == gpu && $(basename "$bin") == bench_cuda_sim_* ]]; then
      row bench "$(basename "$bin")" SKIP - "measures the simulator; run it on the build machine"
      continue
    fi
    echo "gpu_check: $(basename "$bin")"
    run_bench "$bin"
  done
  print_table "$gpu"
  # Failing logs' tails, after the table, so the table stays one block.
  local log
  for log in "$LOGS"/*.log; do
    if grep -qE '^\[  FAILED  \]|terminate called|Segmentation|error while loading' "$log"; then
      echo
      echo "---- $(basename "$log") (last 25 lines)"
      tail -25 "$log"
    fi
  done
  rm -rf "$root"
  return $FAILED
}

case ${1:-} in
  pack) shift; pack "$@" ;;
  run) shift; run "$@"; exit $? ;;
  *) usage ;;
esac
