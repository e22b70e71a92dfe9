// cuda/sim/race_checker.cpp — vector clocks and per-block access histories.
//
// check() works in two passes: first every access is resolved and compared against its
// block's history (throwing on the first race, before anything changed), then the
// stream's clock ticks and the accesses are written into the histories. Accesses of one
// operation to one block are merged first (a write wins), so a kernel that reads and
// writes the same tensor is one write, not a race with itself.
#include "cuda/sim/race_checker.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"

namespace glass::cuda::sim {
namespace {

std::string hex(uintptr_t a) {
  std::ostringstream out;
  out << "0x" << std::hex << a;
  return out.str();
}

}  // namespace

RaceChecker::RaceChecker(RawLookup raw_lookup) : raw_lookup_(std::move(raw_lookup)) {}

void RaceChecker::set_enabled(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (on && !enabled_.load()) histories_.clear();
  enabled_.store(on);
}

size_t RaceChecker::add_stream(std::string label) {
  std::lock_guard<std::mutex> lock(mutex_);
  labels_.push_back(std::move(label));
  clocks_.emplace_back();
  host_seen_.push_back(0);
  return labels_.size() - 1;
}

uint64_t RaceChecker::clock_entry(size_t stream, size_t of) const {
  const VectorClock& c = clocks_[stream];
  return of < c.size() ? c[of] : 0;
}

bool RaceChecker::ordered_before(const Use& earlier, size_t stream) const {
  return earlier.stream == stream || clock_entry(stream, earlier.stream) >= earlier.tick;
}

void RaceChecker::join(VectorClock& into, const VectorClock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

// Work the host enqueues is ordered after everything the host has synchronized with.
void RaceChecker::inherit_host(size_t stream) {
  if (host_seen_[stream] == host_version_) return;
  join(clocks_[stream], host_);
  host_seen_[stream] = host_version_;
}

std::optional<RaceChecker::Block> RaceChecker::resolve(const void* p) const {
  const auto a = reinterpret_cast<uintptr_t>(p);
  auto it = registered_.upper_bound(a);
  if (it != registered_.begin()) {
    --it;
    if (a < it->first + it->second) return Block{it->first, it->second, true};
  }
  if (auto raw = raw_lookup_(p)) return Block{raw->first, raw->second, false};
  return std::nullopt;
}

std::optional<std::pair<uintptr_t, size_t>> RaceChecker::allocation_of(const void* p) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto b = resolve(p)) return std::pair<uintptr_t, size_t>{b->begin, b->size};
  return std::nullopt;
}

void RaceChecker::check(size_t stream, const std::string& op_name,
                        const std::vector<Access>& accesses) {
  if (!enabled() || accesses.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  inherit_host(stream);
  // Pass 1: resolve and merge, then compare with each block's history.
  std::vector<std::pair<Block, bool>> touched;  // (block, writes)
  for (const Access& access : accesses) {
    std::optional<Block> block = resolve(access.ptr);
    if (!block) continue;  // not device memory we know of (host memory of a copy)
    auto same = std::find_if(touched.begin(), touched.end(), [&](const auto& t) {
      return t.first.begin == block->begin && t.first.size == block->size;
    });
    if (same == touched.end()) {
      touched.emplace_back(*block, access.write);
    } else {
      same->second = same->second || access.write;
    }
  }
  for (const auto& [block, writes] : touched) {
    auto h = histories_.find({block.begin, block.size});
    if (h == histories_.end()) continue;
    const History& history = h->second;
    if (history.write && !ordered_before(*history.write, stream)) {
      report(block, stream, op_name, writes, *history.write, true);
    }
    if (writes) {
      for (const Use& read : history.reads) {
        if (!ordered_before(read, stream)) report(block, stream, op_name, true, read, false);
      }
    }
  }
  // Pass 2: no race; tick and remember.
  VectorClock& clock = clocks_[stream];
  if (clock.size() <= stream) clock.resize(stream + 1, 0);
  const uint64_t tick = ++clock[stream];
  for (const auto& [block, writes] : touched) {
    History& history = histories_[{block.begin, block.size}];
    if (writes) {
      history.write = Use{stream, tick, op_name};
      history.reads.clear();
      continue;
    }
    auto mine = std::find_if(history.reads.begin(), history.reads.end(),
                             [&](const Use& u) { return u.stream == stream; });
    if (mine == history.reads.end()) {
      history.reads.push_back(Use{stream, tick, op_name});
    } else {
      *mine = Use{stream, tick, op_name};
    }
  }
}

void RaceChecker::report(const Block& block, size_t stream, const std::string& op, bool writes,
                         const Use& earlier, bool earlier_writes) const {
  const std::string& mine = labels_[stream];
  const std::string& theirs = labels_[earlier.stream];
  GLASS_CHECK(
      false, "stream race on the ", block.registered ? "tensor memory" : "device allocation",
      " at ", hex(block.begin), " (", block.size, " bytes): ", op, " on ", mine, " ",
      writes ? "writes" : "reads", " it while ", earlier.op, " on ", theirs,
      " (enqueued earlier) may still ", earlier_writes ? "write" : "read",
      " it. Order them: record a CUDAEvent on ", theirs, " after ", earlier.op, " and make ", mine,
      " wait on it (event.block(stream)) before ", op, ", or synchronize ", theirs, " first.");
  __builtin_unreachable();
}

VectorClock RaceChecker::record_event(size_t stream) {
  if (!enabled()) return {};
  std::lock_guard<std::mutex> lock(mutex_);
  inherit_host(stream);
  return clocks_[stream];
}

void RaceChecker::wait_event(size_t stream, const VectorClock& event_clock) {
  if (!enabled()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  inherit_host(stream);
  join(clocks_[stream], event_clock);
}

void RaceChecker::host_synchronized_stream(size_t stream) {
  if (!enabled()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  join(host_, clocks_[stream]);
  ++host_version_;
}

void RaceChecker::host_synchronized_event(const VectorClock& event_clock) {
  if (!enabled()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  join(host_, event_clock);
  ++host_version_;
}

void RaceChecker::register_block(const void* ptr, size_t nbytes) {
  const auto a = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  GLASS_CHECK(nbytes > 0, "register_block(", ptr, ", 0): a block needs at least one byte.");
  auto next = registered_.lower_bound(a);
  if (next != registered_.end()) {
    GLASS_CHECK(next->first >= a + nbytes, "register_block(", ptr, ", ", nbytes,
                "): overlaps the registered block at ", hex(next->first), " (", next->second,
                " bytes); unregister_block it first.");
  }
  if (next != registered_.begin()) {
    auto prev = std::prev(next);
    GLASS_CHECK(prev->first + prev->second <= a, "register_block(", ptr, ", ", nbytes,
                "): overlaps the registered block at ", hex(prev->first), " (", prev->second,
                " bytes); unregister_block it first.");
  }
  registered_.emplace(a, nbytes);
}

void RaceChecker::unregister_block(const void* ptr) {
  const auto a = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = registered_.find(a);
  GLASS_CHECK(it != registered_.end(), "unregister_block(", ptr,
              "): no block was registered at this address (register_block(ptr, nbytes) first).");
  histories_.erase({it->first, it->second});
  registered_.erase(it);
}

void RaceChecker::forget_range(uintptr_t begin, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uintptr_t end = begin + size;
  histories_.erase(histories_.lower_bound({begin, 0}), histories_.lower_bound({end, 0}));
  registered_.erase(registered_.lower_bound(begin), registered_.lower_bound(end));
}

}  // namespace glass::cuda::sim
