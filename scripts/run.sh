#!/usr/bin/env bash
# scripts/run.sh — the main job: install what is missing, build what the tour needs
# (Release), run the tour.
#
# The tour is the lessons, in order, each printing what its README explains; then their
# graph figures are drawn with glass-dot (into build/lesson-figures/). With a display
# (DISPLAY or WAYLAND_DISPLAY set) the viewer opens last on the lesson tour: its "Lesson
# tour" panel opens each lesson's model in turn, from lesson 01's, and starts lesson 06's
# training live (close the window to end).
#
# It builds only the tour's own targets — the lesson programs, glass-dot and glass-viewer —
# and what they link, never the tests, the benchmarks or a GPU (nvcc) target the tour does
# not run: those are scripts/test.sh's. Each step says what it is doing as it starts.
# Usage: bash scripts/run.sh   (from anywhere; builds into ./build, or $GLASS_BUILD_DIR)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
step() { printf '\n==================== %s ====================\n\n' "$*"; }

step "checking the Debian packages"
source "$root/scripts/deps.sh"
glass_install_deps

build="${GLASS_BUILD_DIR:-$root/build}"
step "configuring the build in $build"
# The tour runs CUDA on the simulated GPU unless a real one is visible, so nvcc's build of
# the kernels (slow, and useless without a GPU) is made only when one is.
gpu_kernels=OFF
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  gpu_kernels=ON
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGLASS_CUDA_KERNELS="$gpu_kernels" >/dev/null

# lessons/tour.txt lists the lesson programs in order (written by lessons/CMakeLists.txt);
# each is also the name of its CMake target. glass-viewer exists only where its packages do.
mapfile -t lessons < <(grep -v '^$' "$build/lessons/tour.txt")
targets=("${lessons[@]}" glass-dot)
if grep -q '^build glass-viewer:' "$build/build.ninja"; then targets+=(glass-viewer); fi
step "building the tour: ${#lessons[@]} lessons, ${targets[*]:${#lessons[@]}}"
cmake --build "$build" -j "$(glass_jobs)" --target "${targets[@]}"

for i in "${!lessons[@]}"; do
  step "lesson $((i + 1)) of ${#lessons[@]}: ${lessons[$i]#lesson_}"
  "$build/lessons/${lessons[$i]}"
done

step "figures: the lessons' graphs, drawn by glass-dot"
cmake -DGLASS_DOT="$build/glass-dot" -DOUT_DIR="$build/lesson-figures" \
  -P "$root/lessons/figures.cmake"
echo "the lessons' graphs, drawn by glass-dot: $build/lesson-figures/*/figures/*.svg"

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$build/glass-viewer" ]; then
  step "the viewer: glass-viewer on the lesson tour"
  echo "pick a lesson in the 'Lesson tour' panel; close the window to finish (${SECONDS}s so far)"
  "$build/glass-viewer" --demo if_else  # lesson 01's model: where the tour starts
else
  echo "no display: skipping the viewer (try: xvfb-run -a $build/glass-viewer --demo mlp" \
       "--screenshot mlp.png)"
  echo "run.sh: done in ${SECONDS}s"
fi
