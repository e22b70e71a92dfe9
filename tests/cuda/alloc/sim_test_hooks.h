// tests/cuda/alloc/sim_test_hooks.h — holding a simulated stream, for the allocator tests.
//
// Asynchrony is asserted deterministically: while a HoldStream lives, the simulator runs
// nothing queued on the stream, so an event recorded on it stays pending however long the
// test takes; the destructor lets the stream go on.
#pragma once

#include "cuda/runtime.h"
#include "cuda/sim/sim_runtime.h"

namespace glass::cuda {

class HoldStream {
 public:
  explicit HoldStream(StreamHandle s) : s_(s) { sim::simulator().hold(s_); }
  ~HoldStream() { sim::simulator().release(s_); }
  HoldStream(const HoldStream&) = delete;
  HoldStream& operator=(const HoldStream&) = delete;

 private:
  StreamHandle s_;
};

}  // namespace glass::cuda
