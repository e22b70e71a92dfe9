// cuda/sim/sim_copies.cpp — memcpy_async and memset_async: the host-side copy rules.
//
// What the host may do after each call returns is the whole point of runtime.h's rules,
// and the simulator keeps them literally: a pageable source is staged (copied aside)
// before memcpy_async returns, so the caller may reuse its buffer at once; a pageable
// destination makes the call wait until the data has arrived; pinned memory is only
// queued, and the copy engine reads or writes it when the copy's turn comes — which is
// why a pinned buffer must not be touched until the copy's event has completed.
// HtoD and DtoH copies run on the copy engines; DtoD copies and memsets on the SMs, in
// 1 MiB chunks so that every SM helps.
//
// Invariant: a copy that fails its checks (direction, bounds, a sticky error, a race)
// throws and queues nothing.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "cuda/sim/address_space.h"
#include "cuda/sim/sim_runtime.h"

namespace glass::cuda::sim {
namespace {

constexpr int64_t kChunkBytes = int64_t{1} << 20;  // SM work unit of a memset or DtoD copy

int64_t chunks_of(size_t nbytes) {
  return (static_cast<int64_t>(nbytes) + kChunkBytes - 1) / kChunkBytes;
}

}  // namespace

void SimRuntime::memcpy_async(void* dst, const void* src, size_t nbytes, CopyKind kind,
                              StreamHandle stream) {
  const int64_t enqueued = timeline_now_ns();
  Stream* s = stream_of(stream, "memcpy_async()");
  const std::string call = detail::str_cat("memcpy_async(", to_string(kind), ")");
  if (nbytes == 0) {
    scheduler_.check_sticky(s->device);
    return;
  }
  GLASS_CHECK(dst != nullptr && src != nullptr, call, ": null pointer (dst ", dst, ", src ", src,
              ").");
  bool pinned = false;
  Engine engine = Engine::Compute;
  std::vector<Access> accesses;
  switch (kind) {
    case CopyKind::HostToDevice:
      GLASS_CHECK(!is_device_address(src), call, ": the source ", src,
                  " is device memory; use CopyKind::DeviceToDevice.");
      check_device_range(dst, nbytes, call.c_str(), "destination");
      pinned = pinned_.contains_range(src, nbytes);
      engine = Engine::CopyHtoD;
      accesses = {{dst, true}};
      break;
    case CopyKind::DeviceToHost:
      GLASS_CHECK(!is_device_address(dst), call, ": the destination ", dst,
                  " is device memory; use CopyKind::DeviceToDevice.");
      check_device_range(src, nbytes, call.c_str(), "source");
      pinned = pinned_.contains_range(dst, nbytes);
      engine = Engine::CopyDtoH;
      accesses = {{src, false}};
      break;
    case CopyKind::DeviceToDevice:
      check_device_range(src, nbytes, call.c_str(), "source");
      check_device_range(dst, nbytes, call.c_str(), "destination");
      accesses = {{src, false}, {dst, true}};
      break;
  }
  auto op =
      new_op(s, OpKind::Copy, engine, detail::str_cat(to_string(kind), " ", format_bytes(nbytes)));
  op->record.enqueue_ns = enqueued;
  op->record.bytes = nbytes;
  op->record.copy_kind = kind;
  op->record.pinned = pinned;
  const bool waits = kind == CopyKind::DeviceToHost && !pinned;
  op->record.host_waited = waits;

  char* d = static_cast<char*>(dst);
  const char* from = static_cast<const char*>(src);
  std::shared_ptr<char[]> staging_out;  // a pageable DtoH copy's bounce buffer
  if (kind == CopyKind::HostToDevice && !pinned) {
    // Pageable memory may be paged out or reused the moment we return: stage it now (CUDA
    // copies it into a pinned bounce buffer); the engine copies from the staging buffer.
    std::shared_ptr<char[]> staging(new char[nbytes]);
    std::memcpy(staging.get(), src, nbytes);
    from = staging.get();
    op->num_chunks = 1;
    op->run = [d, from, nbytes, staging](int64_t) { std::memcpy(host_view(d), from, nbytes); };
  } else if (kind == CopyKind::HostToDevice) {
    op->num_chunks = 1;
    op->run = [d, from, nbytes](int64_t) { std::memcpy(host_view(d), from, nbytes); };
  } else if (kind == CopyKind::DeviceToHost && !pinned) {
    // Into pageable memory through a staging buffer, as CUDA does (its pinned bounce
    // buffer): the engine fills the staging buffer and the host copies it out after the
    // wait, so a wait that fails (a held stream never released) leaves no queued copy
    // that could write into the caller's memory later.
    staging_out = std::shared_ptr<char[]>(new char[nbytes]);
    char* out = staging_out.get();
    op->num_chunks = 1;
    op->run = [out, from, nbytes, keep = staging_out](int64_t) {
      std::memcpy(out, host_view(from), nbytes);
    };
  } else if (kind == CopyKind::DeviceToHost) {
    op->num_chunks = 1;
    op->run = [d, from, nbytes](int64_t) { std::memcpy(d, host_view(from), nbytes); };
  } else {
    const bool overlap = d < from + nbytes && from < d + nbytes;
    op->num_chunks = overlap ? 1 : chunks_of(nbytes);
    op->run = [d, from, nbytes, overlap](int64_t c) {
      if (overlap) {
        std::memmove(host_view(d), host_view(from), nbytes);
        return;
      }
      const size_t begin = static_cast<size_t>(c * kChunkBytes);
      const size_t n = std::min(nbytes - begin, static_cast<size_t>(kChunkBytes));
      std::memcpy(host_view(d + begin), host_view(from + begin), n);
    };
  }
  VectorClock after;
  scheduler_.enqueue(op, [&] {
    checker_.check(s->race_index, "copy " + op->record.name, accesses);
    if (waits) after = checker_.record_event(s->race_index);
  });
  if (!waits) return;
  // Pageable destination: the host blocks until the data has arrived (on a held stream,
  // until another thread releases it, or the held-wait limit makes it an error).
  scheduler_.wait(op, "memcpy_async(DtoH into pageable memory)");
  host_synchronized(after);
  scheduler_.check_sticky(s->device);
  std::memcpy(d, staging_out.get(), nbytes);
}

void SimRuntime::memset_async(void* dst, int value, size_t nbytes, StreamHandle stream) {
  Stream* s = stream_of(stream, "memset_async()");
  if (nbytes == 0) {
    scheduler_.check_sticky(s->device);
    return;
  }
  check_device_range(dst, nbytes, "memset_async()", "destination");
  auto op = new_op(s, OpKind::Memset, Engine::Compute, "memset " + format_bytes(nbytes));
  op->record.bytes = nbytes;
  char* d = static_cast<char*>(dst);
  op->num_chunks = chunks_of(nbytes);
  op->run = [d, value, nbytes](int64_t c) {
    const size_t begin = static_cast<size_t>(c * kChunkBytes);
    std::memset(host_view(d + begin), value,
                std::min(nbytes - begin, static_cast<size_t>(kChunkBytes)));
  };
  const std::vector<Access> accesses = {{dst, true}};
  scheduler_.enqueue(op, [&] { checker_.check(s->race_index, op->record.name, accesses); });
}

}  // namespace glass::cuda::sim
