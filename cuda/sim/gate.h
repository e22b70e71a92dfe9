// cuda/sim/gate.h — a kernel that waits until the host opens it (simulated GPU only).
//
// Everything queued after a gate on its stream waits, as it would behind a long kernel on
// a GPU, but for exactly as long as the program decides: lessons and tests use it to
// *watch* a call wait (item(), a pageable copy, a synchronize) without timing anything.
// simulator().hold(stream) also stops a stream, but holds no SM; a gate is a real kernel
// that occupies the stream (and one SM worker) until it is opened.
//
// Invariant: the gate is open when its destructor returns, so the stream always drains.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "cuda/sim/kernel_launch.h"

namespace glass::cuda::sim {

class Gate {
 public:
  // Queues the gate kernel on `stream`; it runs (waits) as soon as the stream reaches it.
  explicit Gate(StreamHandle stream) {
    KernelLaunch k;
    k.name = "gate";
    k.run_block = [open = open_](Dim3) {
      while (!open->load()) std::this_thread::yield();
    };
    enqueue_kernel(stream, std::move(k));
  }
  ~Gate() { open(); }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  void open() { open_->store(true); }

 private:
  std::shared_ptr<std::atomic<bool>> open_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace glass::cuda::sim
