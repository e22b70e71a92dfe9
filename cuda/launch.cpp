// cuda/launch.cpp — check_launch(): the launch's shape against the device's limits.
//
// Invariant: a pure function of its arguments; it throws before anything is queued, with
// a message that names the kernel, the offending value, the device's limit and the fix.
#include "cuda/launch.h"

#include "core/error.h"

namespace glass::cuda {
namespace {

using glass::detail::str_cat;

std::string dim_string(Dim3 d) { return str_cat("(", d.x, ", ", d.y, ", ", d.z, ")"); }

// "launch of kernel 'k' (grid (..), block (..)) on <device>: "
std::string launch_string(const DeviceProperties& props, const char* kernel, Dim3 grid,
                          Dim3 block) {
  return str_cat("launch of kernel '", kernel, "' with grid ", dim_string(grid), " and block ",
                 dim_string(block), " on ", props.name, ": ");
}

}  // namespace

void check_launch(const DeviceProperties& props, const char* kernel, Dim3 grid, Dim3 block,
                  size_t dynamic_shared_bytes) {
  const char* axes[3] = {"x", "y", "z"};
  const unsigned grid_dims[3] = {grid.x, grid.y, grid.z};
  const unsigned block_dims[3] = {block.x, block.y, block.z};
  const unsigned max_grid[3] = {props.max_grid_dim.x, props.max_grid_dim.y, props.max_grid_dim.z};
  const unsigned max_block[3] = {props.max_block_dim.x, props.max_block_dim.y,
                                 props.max_block_dim.z};
  GLASS_CHECK(grid.count() > 0 && block.count() > 0, launch_string(props, kernel, grid, block),
              "every grid and block dimension must be at least 1 (an empty tensor needs no "
              "launch: return before launching when there is no work)");
  for (int a = 0; a < 3; ++a) {
    GLASS_CHECK(block_dims[a] <= max_block[a], launch_string(props, kernel, grid, block), "block.",
                axes[a], " = ", block_dims[a], " exceeds the device's limit of ", max_block[a],
                " (max_block_dim ", dim_string(props.max_block_dim), ")");
  }
  GLASS_CHECK(block.count() <= static_cast<uint64_t>(props.max_threads_per_block),
              launch_string(props, kernel, grid, block), "the block has ", block.count(),
              " threads, more than the device's limit of ", props.max_threads_per_block,
              " per block (max_threads_per_block); use smaller blocks and more of them");
  for (int a = 0; a < 3; ++a) {
    GLASS_CHECK(grid_dims[a] <= max_grid[a], launch_string(props, kernel, grid, block), "grid.",
                axes[a], " = ", grid_dims[a], " exceeds the device's limit of ", max_grid[a],
                " (max_grid_dim ", dim_string(props.max_grid_dim),
                "); put the large count in grid.x, or loop over the work inside the kernel "
                "(a grid-stride loop)");
  }
  GLASS_CHECK(dynamic_shared_bytes <= props.shared_mem_per_block,
              launch_string(props, kernel, grid, block), "it asks for ", dynamic_shared_bytes,
              " bytes of dynamic shared memory, more than the device's ",
              props.shared_mem_per_block,
              " bytes per block (shared_mem_per_block); use less shared memory per block, or "
              "smaller blocks");
}

}  // namespace glass::cuda
