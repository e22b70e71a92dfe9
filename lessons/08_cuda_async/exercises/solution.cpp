// lessons/08_cuda_async/exercises/solution.cpp — the reference answers to lesson 08's
// exercises (exercises.h has the contracts). Try them yourself first, in student.cpp.
#include "exercises.h"

namespace glass::lesson08 {

void pipeline(const std::vector<Tensor>& inputs, Tensor& slot, std::vector<Tensor>& outputs,
              cuda::CUDAStream producer, cuda::CUDAStream consumer) {
  // Two events, each recorded again every iteration: block() waits for the record made
  // most recently before it was called, as cudaStreamWaitEvent does.
  cuda::CUDAEvent filled;   // produce(i) has written the slot
  cuda::CUDAEvent drained;  // consume(i) has read the slot
  for (size_t i = 0; i < inputs.size(); ++i) {
    drained.block(producer);  // the first time: never recorded, so nothing to wait for
    {
      cuda::CUDAStreamGuard guard(producer);
      produce(inputs[i], slot);
    }
    filled.record(producer);
    filled.block(consumer);
    {
      cuda::CUDAStreamGuard guard(consumer);
      consume(slot, outputs[i]);
    }
    drained.record(consumer);
  }
}

Tensor stage_and_compute(const Tensor& batch) {
  // Pinned memory, so the copy engine reads it directly; non_blocking, so the host does not
  // wait for it. The pinned copy is a temporary: its block is not reused before the copy
  // has read it (Note [Pinned blocks and queued copies], cuda/host_allocator.h).
  Tensor on_device = batch.pin_memory().to(kCUDA, /*non_blocking=*/true);
  Tensor result = compute(on_device);
  // Into pageable memory: the copy waits until the values have arrived (and with them,
  // everything queued before it on the stream). A pinned, non-blocking copy would return
  // before they arrive and need a synchronize() before the values could be read.
  return result.to(kCPU);
}

}  // namespace glass::lesson08
