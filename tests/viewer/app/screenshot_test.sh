#!/usr/bin/env bash
# tests/viewer/app/screenshot_test.sh — tier 3: a real glass-viewer screenshot, checked.
#
#   screenshot_test.sh xvfb|egl GLASS_VIEWER PNG_CHECK OUT.png
# xvfb: the GLFW app under xvfb-run (an X server in memory); egl: Mesa's surfaceless EGL,
# no X server at all. Exits 77 (CTest: skipped) with a message when the way is missing.
set -uo pipefail
mode=$1 viewer=$2 check=$3 out=$4
demo=tanh_mlp
rm -f "$out"
if [ "$mode" = xvfb ]; then
  if ! command -v xvfb-run >/dev/null; then
    echo "SKIP: xvfb-run not found (Debian: apt install xvfb xauth)"
    exit 77
  fi
  xvfb-run -a -s "-screen 0 1280x1024x24" "$viewer" --demo $demo --graph-only --size 800x600 \
    --frames 3 --screenshot "$out" || { echo "glass-viewer failed under xvfb-run"; exit 1; }
else
  if ! log=$("$viewer" --demo $demo --graph-only --size 800x600 --frames 3 --egl --screenshot "$out" 2>&1); then
    echo "$log"
    if echo "$log" | grep -q "no EGL surfaceless platform\|needs EGL"; then
      echo "SKIP: no EGL surfaceless platform here"
      exit 77
    fi
    exit 1
  fi
  echo "$log"
fi
"$check" "$out" $demo
