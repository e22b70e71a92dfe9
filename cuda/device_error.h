// cuda/device_error.h — errors a kernel finds, reported at the next sync point.
//
// A kernel cannot throw, and the host must not wait for it just to ask whether an index
// was bad (that would make every indexing op a sync point). So a kernel that finds a bad
// index writes it into a small error record in device memory — the first error wins, by
// an atomicCAS — and carries on. The host reads the record at the next sync point that
// covers the kernel's stream (that stream's or the device's synchronize, an event
// synchronize once the stream is idle; a blocking copy to the host and item() go through
// a stream synchronize), throws a glass::Error with the CPU's message
// (index_error_message, core/ops/indexing.h), and clears the record, so the device keeps
// working. This is CUDA's device-side assert, made readable: Note [Index errors are
// found by the kernel] in core/device_kernels.h.
//
// One record per stream: only that stream's kernels, reads and clears touch it, so they
// are ordered by the stream itself — no host wait to set it up, no race between streams,
// and an error is reported on the stream whose op made it.
//
// Cost: a launcher that may set the record marks its stream "pending" (a host-side flag);
// a sync point with nothing pending costs one relaxed atomic load. Only after such a
// launch does a sync point read the record back (one 48-byte copy on the synced stream,
// which is idle by then, so the copy waits for nothing else).
//
// Invariant: a stream that is not pending has a clear record; a sync point that covers a
// pending stream either finds its record clear or throws (and clears it).
#pragma once

#include <vector>

#include "cuda/runtime.h"

namespace glass::cuda {
namespace sim {
struct Access;  // cuda/sim/kernel_launch.h
}  // namespace sim

// The record's words (unsigned long long, as CUDA's 64-bit atomics take).
enum DeviceErrorWord : int {
  kErrorClaimed = 0,  // 0 free; 1 once a thread has won the right to write the record
  kErrorReady = 1,    // 1 once the fields below are written
  kErrorOp = 2,       // an op id from device_error_slot (the op's name, interned)
  kErrorIndex = 3,    // the bad index value, as the user wrote it
  kErrorDim = 4,      // the dim it indexes
  kErrorSize = 5,     // that dim's size
  kErrorWords = 6,
};

// What a kernel receives: its stream's record and the op it runs for, by value.
struct DeviceErrorSlot {
  unsigned long long* words = nullptr;  // device address of the record
  long long op = 0;
};

// The simulator's view of a slot argument (cuda/launch.h): the kernel writes the record,
// which the bounds check and the stream-race checker must know.
void append_accesses(const DeviceErrorSlot& slot, std::vector<sim::Access>& out);

// For a launcher: the stream's record (created, and zeroed on the stream, on first use),
// the op's id, and the stream marked pending.
DeviceErrorSlot device_error_slot(int device, const char* op, StreamHandle stream);

// Sync-point hooks (cuda/stream.cpp). Each returns at once unless a stream it covers is
// pending; then it reads that stream's record and throws glass::Error if it holds an
// error. An event synchronize checks the pending streams that are idle (the event's own
// stream is not known; one still busy is checked at a later sync point).
void check_device_errors_after_stream_sync(int device, StreamHandle stream);
void check_device_errors_after_event_sync(int device);
void check_device_errors_after_device_sync(int device);

}  // namespace glass::cuda
