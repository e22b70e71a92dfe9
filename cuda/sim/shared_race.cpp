// cuda/sim/shared_race.cpp — segments of touches, classified and checked (shared_race.h).
//
// Note [Warp-sync stamps]
// Each warp counts its completed collectives (warp_gen_); a lane that takes part in one
// takes the count as its stamp. A use by lane a (stamped S) is ordered before lane b's
// later use when both have taken part in a collective since: both stamps now exceed S.
// That is exact for full-warp collectives; with two disjoint masks a lane may pass one
// the other did not join, and then a race can be missed, never invented.
#include "cuda/sim/shared_race.h"

#include <cstring>

#include "core/error.h"

namespace glass::cuda::sim {

using glass::detail::str_cat;

SharedWatcher& shared_watcher() {
  static thread_local SharedWatcher watcher;
  return watcher;
}

void SharedWatcher::begin_block(bool check, Dim3 block) {
  check_ = check;
  block_ = block;
  epoch_ = 0;
  const size_t n = block.count();
  warp_gen_.assign((n + 31) / 32, 0);
  stamp_.assign(n, 0);
  touches_.clear();
  bytes_.clear();
  elements_.clear();
  race_.clear();
  races_ = 0;
  arrays_.clear();
  do {  // a new pattern per block; never 0x00 or 0xff, the likeliest values to be written
    pattern_ = static_cast<unsigned char>(pattern_ * 5 + 0x3b);
  } while (pattern_ == 0x00 || pattern_ == 0xff);
}

bool SharedWatcher::first_use(const void* array, size_t array_bytes, bool poison) {
  for (const void* a : arrays_)
    if (a == array) return false;
  arrays_.push_back(array);
  if (poison) std::memset(const_cast<void*>(array), pattern_, array_bytes);
  return true;
}

void SharedWatcher::decay(const void* array, size_t array_bytes) {
  first_use(array, array_bytes, false);
}

void SharedWatcher::touch(const void* element, size_t size, const void* array, size_t array_bytes,
                          const char* name) {
  first_use(array, array_bytes, true);
  const auto* e = static_cast<const unsigned char*>(element);
  touches_.push_back({e, static_cast<uint32_t>(size), static_cast<uint32_t>(bytes_.size()), array,
                      array_bytes, name, false});
  bytes_.insert(bytes_.end(), e, e + size);
}

void SharedWatcher::atomic(const void* address) {
  // The atomic's own &s[i] is normally the latest touch; any earlier touch of the element
  // in this segment is the same thread's, which cannot race with itself either.
  for (Touch& t : touches_)
    if (t.element == address) t.atomic = true;
}

void SharedWatcher::warp_synced(int warp, uint32_t group) {
  const uint32_t gen = ++warp_gen_[static_cast<size_t>(warp)];
  for (uint32_t bits = group; bits != 0; bits &= bits - 1)
    stamp_[static_cast<size_t>(warp * 32 + __builtin_ctz(bits))] = gen;
}

void SharedWatcher::end_segment(int thread, detail::BlockCounters& counters,
                                const std::source_location* since) {
  for (const Touch& t : touches_) {
    const bool write = std::memcmp(t.element, bytes_.data() + t.old_bytes, t.size) != 0;
    ++(write ? counters.shared_stores : counters.shared_loads);
    if (check_ && !t.atomic) check_use(t, thread, write, since);
  }
  touches_.clear();
  bytes_.clear();
}

// Note [Warp-sync stamps].
bool SharedWatcher::ordered(const Use& earlier, int thread) const {
  if (earlier.thread == thread) return true;
  if (earlier.thread / 32 != thread / 32) return false;
  return stamp_[static_cast<size_t>(thread)] > earlier.stamp &&
         stamp_[static_cast<size_t>(earlier.thread)] > earlier.stamp;
}

void SharedWatcher::check_use(const Touch& t, int thread, bool write,
                              const std::source_location* since) {
  Element& e = elements_[t.element];
  if (e.epoch != epoch_) {  // the uses recorded are before a barrier: ordered
    e.epoch = epoch_;
    e.write = Use{};
    e.reads.clear();
  }
  if (e.write.thread >= 0 && !ordered(e.write, thread))
    report(t, thread, write, e.write, true, since);
  const Use use{thread, stamp_[static_cast<size_t>(thread)]};
  if (write) {
    for (const Use& r : e.reads)
      if (!ordered(r, thread)) report(t, thread, true, r, false, since);
    e.write = use;
    e.reads.clear();
  } else if (e.reads.empty() || e.reads.back().thread != thread) {
    e.reads.push_back(use);
  }
}

std::string SharedWatcher::thread_name(int i) const {
  const auto u = static_cast<unsigned>(i);
  return str_cat("thread (", u % block_.x, ", ", u / block_.x % block_.y, ", ",
                 u / (block_.x * block_.y), ")");
}

void SharedWatcher::report(const Touch& t, int thread, bool write, const Use& other,
                           bool other_writes, const std::source_location* since) {
  ++races_;
  if (!race_.empty()) return;
  const auto offset = static_cast<size_t>(t.element - static_cast<const unsigned char*>(t.array));
  const bool same_warp = other.thread / 32 == thread / 32;
  race_ =
      str_cat("shared-memory race on '", t.name, "' at byte offset ", offset, " (of ",
              t.array_bytes, "): ", thread_name(thread), (write ? " writes" : " reads"), " it and ",
              thread_name(other.thread), (other_writes ? " writes" : " reads"),
              " it with no barrier between ", "them (",
              since == nullptr ? std::string("none since the kernel started")
                               : str_cat("the last __syncthreads() the block passed is at ",
                                         since->file_name(), ":", since->line()),
              same_warp ? "; the two are lanes of one warp, and since Volta a warp's lanes are not "
                          "implicitly synchronous"
                        : "",
              "). Separate the two accesses with __syncthreads()",
              same_warp ? " or, within a warp, __syncwarp()" : "");
}

}  // namespace glass::cuda::sim
