// viewer/app/cuda_pipeline.cpp — the double-buffered copy/compute pipeline (cuda_pipeline.h).
#include "viewer/app/cuda_pipeline.h"

#include <glass/glass.h>

#include <memory>

namespace glass::viz::app {

struct CudaPipeline::State {
  // Two streams from the pool, on the simulated GPU (chosen first).
  State()
      : copies((cuda::use_simulator(), cuda::getStreamFromPool())),
        compute(cuda::getStreamFromPool()) {}

  cuda::CUDAStream copies, compute;
  Tensor pinned, pageable;        // the host's chunk, in pinned and in pageable memory
  std::array<Tensor, 2> buffers;  // on the device, written by copies, read by compute
  std::array<cuda::CUDAEvent, 2> ready, free;
  Tensor result;  // the last step's output (on the device)
};

CudaPipeline::CudaPipeline(int64_t chunk_elements) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.pageable = arange(chunk_elements).to(kFloat);
  s.pinned = s.pageable.pin_memory();
  cuda::CUDAStreamGuard guard(s.compute);  // the buffers belong to the compute stream
  for (Tensor& b : s.buffers) b = empty({chunk_elements}, kCUDA);
}

CudaPipeline::~CudaPipeline() {
  try {
    synchronize();                   // nothing may still read the buffers when they are freed
  } catch (const std::exception&) {  // a destructor does not throw; the device says why later
  }
}

void CudaPipeline::step() {
  State& s = *state_;
  const size_t b = static_cast<size_t>(steps_ % 2);
  const bool pageable = steps_ % 8 == 7;
  {
    cuda::CUDAStreamGuard guard(s.copies);
    s.free[b].block(s.copies);  // the kernels that read this buffer two steps ago are done
    s.buffers[b].copy_(pageable ? s.pageable : s.pinned, /*non_blocking=*/true);
    s.ready[b].record(s.copies);
  }
  {
    cuda::CUDAStreamGuard guard(s.compute);
    s.ready[b].block(s.compute);
    s.result = (s.buffers[b] * 2 + 1).relu();
    s.free[b].record(s.compute);
    if (pageable) s.result.cpu();  // into pageable memory: the host waits for the copy
  }
  ++steps_;
}

void CudaPipeline::synchronize() {
  state_->copies.synchronize();
  state_->compute.synchronize();
}

}  // namespace glass::viz::app
