#!/usr/bin/env bash
# scripts/run.sh — the main job: install what is missing, build (Release), run the tour.
#
# Today the tour is the lessons that exist, in order, each printing what its README
# explains. Usage: bash scripts/run.sh   (from anywhere; builds into ./build)
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
