// cuda/sim/race_checker.h — the stream-race checker (PyTorch's CUDA sanitizer, CSAN).
//
// Two operations on different streams that touch the same tensor memory, at least one
// of them writing it, race unless something orders them: the stream itself (same
// stream), an event (recorded after the first, waited on before the second), or the
// host having synchronized after the first and enqueued the second afterwards. The
// checker tracks that order with vector clocks, one per stream: every checked operation
// ticks its stream's own entry; an event record copies the stream's clock; a wait joins
// the event's clock into the stream's; a synchronize joins into the host's clock, and
// every later operation the host enqueues inherits the host's clock. Operation B is
// ordered after A exactly when B's stream clock has reached A's tick on A's stream.
//
// Memory is tracked per block: the caching allocator registers each tensor block
// (register_block), and an access resolves to the registered block containing it, or,
// failing that, to the raw device allocation containing it. Each block remembers its last
// write and, per stream, the last read since then.
//
// Invariant: check() either throws glass::Error naming both operations, both streams and
// the block, and changes nothing, or records the accesses; a correctly ordered program is
// never reported. Thread-safe. While disabled, the hooks cost one atomic load.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuda/sim/kernel_launch.h"

namespace glass::cuda::sim {

using VectorClock = std::vector<uint64_t>;  // indexed by stream index; missing entries are 0

class RaceChecker {
 public:
  // Resolves a pointer to the raw device allocation (begin, size) holding it.
  using RawLookup = std::function<std::optional<std::pair<uintptr_t, size_t>>(const void*)>;
  explicit RaceChecker(RawLookup raw_lookup);

  // Turning the checker on forgets every access history (what ran unchecked is assumed
  // to have been ordered).
  void set_enabled(bool on);
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  // A new stream; `label` names it in reports ("stream 3 of cuda:0"). Returns its index.
  size_t add_stream(std::string label);

  // An operation enqueued on `stream` that touches `accesses`: throws on a race.
  void check(size_t stream, const std::string& op_name, const std::vector<Access>& accesses);
  // The clock an event recorded on `stream` now captures.
  VectorClock record_event(size_t stream);
  // `stream` waits for an event that captured `event_clock`.
  void wait_event(size_t stream, const VectorClock& event_clock);
  // The host waited until everything enqueued so far on `stream` (or up to an event) ran.
  void host_synchronized_stream(size_t stream);
  void host_synchronized_event(const VectorClock& event_clock);

  // The caching allocator's blocks. unregister_block forgets the block's history (its
  // next user starts clean). Overlapping registrations are an error.
  void register_block(const void* ptr, size_t nbytes);
  void unregister_block(const void* ptr);
  // A raw allocation was freed: forget it, and every block registered inside it.
  void forget_range(uintptr_t begin, size_t size);
  // The registered block, or else the raw allocation, holding p: (begin, size).
  std::optional<std::pair<uintptr_t, size_t>> allocation_of(const void* p) const;

 private:
  struct Use {
    size_t stream = 0;
    uint64_t tick = 0;
    std::string op;
  };
  struct History {
    std::optional<Use> write;
    std::vector<Use> reads;  // since the last write, the latest per stream
  };
  struct Block {
    uintptr_t begin = 0;
    size_t size = 0;
    bool registered = false;
  };

  uint64_t clock_entry(size_t stream, size_t of) const;
  bool ordered_before(const Use& earlier, size_t stream) const;
  void inherit_host(size_t stream);
  static void join(VectorClock& into, const VectorClock& from);
  std::optional<Block> resolve(const void* p) const;
  [[noreturn]] void report(const Block& block, size_t stream, const std::string& op, bool writes,
                           const Use& earlier, bool earlier_writes) const;

  RawLookup raw_lookup_;
  std::atomic<bool> enabled_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> labels_;
  std::vector<VectorClock> clocks_;
  std::vector<uint64_t> host_seen_;  // per stream: host_version_ when it last inherited
  VectorClock host_;
  uint64_t host_version_ = 0;
  std::map<uintptr_t, size_t> registered_;                     // begin -> size
  std::map<std::pair<uintptr_t, size_t>, History> histories_;  // (begin, size) -> history
};

}  // namespace glass::cuda::sim
