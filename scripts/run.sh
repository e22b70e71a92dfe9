#!/usr/bin/env bash
# scripts/run.sh — the main job: install what is missing, build (Release), run the tour.
#
# The tour is the lessons, in order, each printing what its README explains; then their
# graph figures are drawn with glass-dot (into build/lesson-figures/). With a display
# (DISPLAY or WAYLAND_DISPLAY set) the viewer opens last on the lesson tour: its "Lesson
# tour" panel opens each lesson's model in turn, from lesson 01's, and starts lesson 06's
# training live (close the window to end).
# Usage: bash scripts/run.sh   (from anywhere; builds into ./build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/deps.sh"
glass_install_deps

build="${GLASS_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(glass_jobs)"

# lessons/tour.txt lists the lesson programs in order (written by lessons/CMakeLists.txt).
while read -r name; do
  [ -n "$name" ] || continue
  printf '\n==================== %s ====================\n\n' "$name"
  "$build/lessons/$name"
done < "$build/lessons/tour.txt"

printf '\n==================== figures ====================\n\n'
cmake -DGLASS_DOT="$build/glass-dot" -DOUT_DIR="$build/lesson-figures" \
  -P "$root/lessons/figures.cmake"
echo "the lessons' graphs, drawn by glass-dot: $build/lesson-figures/*/figures/*.svg"

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$build/glass-viewer" ]; then
  printf '\n==================== the viewer ====================\n\n'
  echo "glass-viewer: the lesson tour (pick a lesson in the 'Lesson tour' panel; close to finish)"
  "$build/glass-viewer" --demo if_else  # lesson 01's model: where the tour starts
else
  echo "no display: skipping the viewer (try: xvfb-run -a $build/glass-viewer --demo mlp" \
       "--screenshot mlp.png)"
fi
