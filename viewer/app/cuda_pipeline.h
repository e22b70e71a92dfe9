// viewer/app/cuda_pipeline.h — lesson 08's copy/compute overlap on the simulated GPU, one
// chunk per step: the work the live timeline panel shows.
//
// A double-buffered pipeline, written the way lesson 08 teaches it: step k copies a chunk
// from pinned host memory into device buffer k % 2 on the copy stream (non_blocking: the
// host returns at once) and records `ready`; the compute stream waits for `ready` and runs
// y = relu(x * 2 + 1) on it, then records `free`, which the copy into that buffer two steps
// later waits for. So the copy of chunk k+1 overlaps the kernels of chunk k, on different
// engines. Every eighth step also copies a chunk in from pageable memory (the host stages
// it) and the result back to pageable memory (the host waits), so all three things a host
// can do on the timeline appear.
//
// Invariant: a device buffer is written by a copy only after the kernels that read it have
// finished (the `free` event), and read by a kernel only after its copy has (`ready`); the
// simulator's race checker finds no race. Owns its tensors and events; the streams come
// from the pool and outlive it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

namespace glass::viz::app {

class CudaPipeline {
 public:
  // Makes the simulated GPU serve kCUDA (cuda::use_simulator(); a glass::Error when a real
  // GPU already does) and allocates the pinned chunk and the two device buffers.
  explicit CudaPipeline(int64_t chunk_elements = 1 << 18);
  ~CudaPipeline();
  CudaPipeline(const CudaPipeline&) = delete;
  CudaPipeline& operator=(const CudaPipeline&) = delete;

  // Enqueues one chunk's copy and kernels; returns without waiting for them (except on the
  // eighth steps' pageable copies, which block as CUDA's do).
  void step();
  int64_t steps() const { return steps_; }
  // Waits for everything enqueued so far.
  void synchronize();

 private:
  struct State;
  std::unique_ptr<State> state_;
  int64_t steps_ = 0;
};

}  // namespace glass::viz::app
