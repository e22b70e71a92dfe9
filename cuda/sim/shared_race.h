// cuda/sim/shared_race.h — the shared-memory race detector (compute-sanitizer's racecheck).
//
// Two threads of a block race on shared memory when they access the same element, at
// least one of them writes it, and nothing orders them: no __syncthreads() between the
// two accesses, and, for two lanes of one warp, no warp collective (__syncwarp, a
// shuffle, a vote) that both took part in between. Since Volta a warp is not implicitly
// synchronous, so lanes that exchange data through shared memory without __syncwarp
// race, as racecheck says. Atomics are not races.
//
// How the simulator sees it. The block runner runs one simulated thread at a time and
// switches only at barriers and collectives, so a thread's accesses come in segments:
// from one barrier or collective (or its start) to the next (or its end). The shared
// array views (shared_array.h) report each element as it is touched, with its bytes at
// that moment; when the segment ends, an element whose bytes changed was written, the
// others were read. (Writing the value already there reads as a read: such a race is
// missed, as racecheck downgrades it too.) Each access is then compared with the
// element's earlier accesses in the same barrier interval.
//
// Invariant: one SharedWatcher per OS thread, reset for each block; race() is the first
// race found in the block, or empty; a correctly synchronized block never has one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda/runtime.h"
#include "cuda/sim/kernel_watch.h"

namespace glass::cuda::sim {

class SharedWatcher {
 public:
  // A new block of `block` threads; `check`: look for races (else only count).
  void begin_block(bool check, Dim3 block);

  // Kernel side (kernel_watch.h's hooks, on the running simulated thread).
  void touch(const void* element, size_t size, const void* array, size_t array_bytes,
             const char* name);
  void atomic(const void* address);
  void decay(const void* array, size_t array_bytes);

  // Block runner side. Thread `thread` (linear index) ends a segment: its touches are
  // classified, counted into `counters` and, when checking, checked. `since` is the
  // barrier the block passed last (for the message; null: none yet).
  void end_segment(int thread, detail::BlockCounters& counters, const std::source_location* since);
  void barrier_released() { ++epoch_; }
  // The lanes in `group` of warp `warp` completed a collective together.
  void warp_synced(int warp, uint32_t group);

  // "thread (3, 0, 0) writes ... while thread (2, 0, 0) reads ...", or empty.
  const std::string& race() const { return race_; }
  uint64_t races() const { return races_; }  // how many conflicting pairs were seen

 private:
  struct Touch {
    const unsigned char* element;
    uint32_t size;
    uint32_t old_bytes;  // offset of its bytes before the access in bytes_
    const void* array;
    size_t array_bytes;
    const char* name;
    bool atomic;
  };
  struct Use {
    int thread = -1;
    uint32_t stamp = 0;  // the thread's warp-sync stamp at the access
  };
  struct Element {
    uint64_t epoch = 0;  // the barrier interval of the uses below
    Use write;
    std::vector<Use> reads;
  };

  bool ordered(const Use& earlier, int thread) const;
  void check_use(const Touch& t, int thread, bool write, const std::source_location* since);
  void report(const Touch& t, int thread, bool write, const Use& other, bool other_writes,
              const std::source_location* since);
  std::string thread_name(int i) const;
  // Whether the block has used `array` before; if not, it has now (and, if `poison`, the
  // array is filled with this block's pattern first: shared_array.h).
  bool first_use(const void* array, size_t array_bytes, bool poison);

  bool check_ = false;
  Dim3 block_;
  uint64_t epoch_ = 0;
  std::vector<uint32_t> warp_gen_;  // per warp: collectives completed
  std::vector<uint32_t> stamp_;     // per thread: warp_gen_ at its last collective
  std::vector<Touch> touches_;      // the running thread's current segment
  std::vector<unsigned char> bytes_;
  std::unordered_map<const void*, Element> elements_;
  std::string race_;
  uint64_t races_ = 0;
  std::vector<const void*> arrays_;  // the shared arrays this block has used
  unsigned char pattern_ = 0xa5;
};

// This OS thread's watcher.
SharedWatcher& shared_watcher();

}  // namespace glass::cuda::sim
