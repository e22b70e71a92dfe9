// tests/viewer/timeline_test_util.h — a hand-made timeline the model tests and the panel
// tests share: two devices, four streams, kernels that overlap on the SMs, a pinned copy,
// a pageable copy the host stages, one it waits for, and an event.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "viewer/timeline.h"

namespace glass::viz::testing {

inline TimelineOp op(uint64_t seq, int64_t stream, cuda::sim::OpKind kind, cuda::sim::Engine engine,
                     std::string name, int64_t enqueue, int64_t start, int64_t end) {
  TimelineOp o;
  o.seq = seq;
  o.stream = stream;
  o.kind = kind;
  o.engine = engine;
  o.name = std::move(name);
  o.enqueue_ns = enqueue;
  o.returned_ns = enqueue + 5;
  o.start_ns = start;
  o.end_ns = end;
  return o;
}

// A pinned copy on stream 1 overlapping two kernels (streams 2 and 3, themselves
// overlapping on the SMs), an event, a pageable copy back that the host waits for, a
// pageable copy in that the host stages, and a kernel on the second device. Given out of
// order: the model sorts by seq.
inline std::vector<TimelineOp> hand_made() {
  using cuda::CopyKind;
  using cuda::sim::Engine;
  using cuda::sim::OpKind;
  TimelineOp copy_in = op(0, 1, OpKind::Copy, Engine::CopyHtoD, "HtoD 4.0 KiB", 100, 200, 1200);
  copy_in.bytes = 4096;
  copy_in.copy_kind = CopyKind::HostToDevice;
  copy_in.pinned = true;
  TimelineOp scale = op(1, 2, OpKind::Kernel, Engine::Compute, "scale", 120, 300, 900);
  scale.grid = cuda::Dim3(4);
  scale.block = cuda::Dim3(256);
  TimelineOp add = op(2, 3, OpKind::Kernel, Engine::Compute, "add", 130, 500, 1500);
  TimelineOp event = op(3, 2, OpKind::Event, Engine::None, "record event 0", 140, 900, 900);
  TimelineOp copy_out = op(4, 1, OpKind::Copy, Engine::CopyDtoH, "DtoH 4.0 KiB", 1300, 1300, 2000);
  copy_out.bytes = 4096;
  copy_out.copy_kind = CopyKind::DeviceToHost;
  copy_out.host_waited = true;
  copy_out.returned_ns = 2000;
  TimelineOp staged = op(5, 0, OpKind::Copy, Engine::CopyHtoD, "HtoD 1.0 KiB", 2100, 2300, 2600);
  staged.bytes = 1024;
  staged.copy_kind = CopyKind::HostToDevice;
  staged.returned_ns = 2300;
  TimelineOp other = op(6, 0, OpKind::Kernel, Engine::Compute, "fill", 2200, 2400, 2500);
  other.device = 1;
  return {other, add, copy_out, copy_in, staged, event, scale};
}

}  // namespace glass::viz::testing
