#!/usr/bin/env bash
# scripts/deps.sh — installs the Debian packages glasstorch needs, if any are missing.
#
# As root it runs apt-get itself; otherwise it prints the exact command to run with sudo
# and fails, so nothing half-configured follows. Sourced by run.sh and test.sh.
set -euo pipefail

GLASS_PACKAGES=(
  cmake ninja-build g++ pkg-config  # toolchain
  libgtest-dev                      # tests (GoogleTest)
  libbenchmark-dev                  # bench/ (Google Benchmark)
  libopenblas-dev                   # bench/ reference for matmul only
  zlib1g-dev                        # nn/: reads the gzipped IDX datasets
  nlohmann-json3-dev                # nn/: safetensors checkpoint headers
  libboost-context-dev              # cuda/sim: the simulated GPU's threads of a block are fibers
  dataset-fashion-mnist             # the training lesson's data (/usr/share/datasets)
  libgloo-dev                       # distributed/: the gloo backend (PyTorch's CPU collectives)
  libopenmpi-dev openmpi-bin        # distributed/: the mpi backend, and mpirun for its tests
  libgraphviz-dev                   # viewer/: libgvc lays out and renders graphs
  graphviz                          # the `dot` CLI a viewer test compares libgvc's SVG with
  libimgui-dev                      # viewer/app: Dear ImGui (with its GLFW + OpenGL3 backends)
  libglfw3-dev                      # viewer/app: the window and input of glass-viewer
  libstb-dev                        # viewer/app: stb_image_write (--screenshot), stb_image (tests)
  fonts-dejavu-core                 # viewer/app: node labels in the face Graphviz measures them in
  libgl-dev libegl-dev              # viewer/app: OpenGL 3 and EGL (surfaceless screenshots)
  libegl-mesa0 libgl1-mesa-dri      # Mesa's EGL and llvmpipe: rendering with no GPU
  xvfb xauth                        # viewer tests: the app under xvfb-run in CI (no display)
)

glass_install_deps() {
  local missing=()
  for p in "${GLASS_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "glasstorch: missing Debian packages: ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "Run this, then try again:"
    echo "  sudo apt-get install -y ${missing[*]}"
    exit 1
  fi
}

glass_jobs() { nproc 2>/dev/null || echo 2; }
