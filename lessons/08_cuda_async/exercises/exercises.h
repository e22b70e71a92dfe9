// lessons/08_cuda_async/exercises/exercises.h — the functions you write in lesson 08.
//
// Write them in student.cpp; solution.cpp is the reference that CI grades. To test your
// own file:
//   cmake -B build -DGLASS_EXERCISES=student && cmake --build build && ctest --test-dir build -R
//   lesson_08
// Use what lesson 08 teaches: cuda::CUDAStreamGuard (the current stream), cuda::CUDAEvent
// (record, block), pin_memory(), to(kCUDA, non_blocking), to(kCPU), copy_(src,
// non_blocking) and CUDAStream::synchronize(). The computations are given (produce,
// consume, compute below): what you write is where the work runs and who waits for whom.
// The tests run on the simulated GPU, with the race checker on.
#pragma once

#include <glass/glass.h>

#include <vector>

namespace glass::lesson08 {

// ---- exercise 1: the two stages of a pipeline, given ---------------------------------------
// Each queues its work on the current stream and returns at once.

// slot = input * 2. Writes slot, reads input.
inline void produce(const Tensor& input, Tensor& slot) {
  slot.copy_(input);  // a device-to-device copy
  slot.mul_(2);
}

// output = slot + 1. Reads slot, writes output.
inline void consume(const Tensor& slot, Tensor& output) {
  output.copy_(slot);
  output.add_(1);
}

// Exercise 1 — a two-stream pipeline, ordered by events.
// inputs, outputs: n >= 1 float32 tensors on cuda:0; slot: one more, a buffer of their
// shape. The caller made all of them, and their earlier work has completed. For i = 0, 1,
// ..., n-1, queue
//     produce(inputs[i], slot)    on `producer`  (make it the current stream)
//     consume(slot, outputs[i])   on `consumer`
// so that, once the device has run everything, outputs[i] == inputs[i] * 2 + 1. Every i
// uses the same slot, so
//   - consume(i) must not start before produce(i) has finished (it reads what produce(i)
//     writes), and
//   - produce(i + 1) must not start before consume(i) has finished (it overwrites what
//     consume(i) reads).
// Order the two streams with CUDAEvents, and nothing else: the host must not wait for the
// device (no synchronize of any kind, no item(), no printing, no copy to the host). Return
// as soon as everything is queued; the caller synchronizes before reading outputs.
// The tests hold `producer` (simulator().hold) while your function runs, so any wait for it
// is caught, and run with the race checker on, so a missing event is a glass::Error.
void pipeline(const std::vector<Tensor>& inputs, Tensor& slot, std::vector<Tensor>& outputs,
              cuda::CUDAStream producer, cuda::CUDAStream consumer);

// ---- exercise 2: the computation, given ----------------------------------------------------

// relu((x - 0.5) * 2): three kernels on the current stream (x on the device).
inline Tensor compute(const Tensor& x) { return ((x - 0.5) * 2).relu(); }

// Exercise 2 — pick the copies that can be non-blocking.
// batch: a float32 CPU tensor in ordinary (pageable) memory, contiguous, any shape.
// Copies batch to cuda:0, runs compute() on it there, and returns the result as a CPU
// tensor whose values are final when the function returns. Everything on the current stream.
//   - host -> device: the copy engine must read the batch straight from page-locked memory
//     (the timeline shows the copy as pinned, not staged by the host), and the host must
//     not wait for that copy: it goes straight on to queue compute's kernels.
//   - device -> host: the returned values must be the results, not whatever the memory held
//     before the copy arrived.
// The tests queue a kernel that holds the stream up until they open it, then call you on a
// second thread: they see whether you queued compute's kernels before they opened it, and
// whether you returned before the device could have run anything.
Tensor stage_and_compute(const Tensor& batch);

}  // namespace glass::lesson08
