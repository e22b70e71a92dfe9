// distributed/rank_memory.cpp — the per-rank ledger of allocator events (rank_memory.h).
// Invariant: blocks_ holds exactly the counted live blocks, and current_[r] is the sum of
// the bytes of those whose rank is r.
#include "distributed/rank_memory.h"

#include <algorithm>

#include "core/error.h"
#include "core/events.h"

namespace glass::distributed {

RankMemoryLedger::RankMemoryLedger(int world_size, Device device)
    : world_size_(world_size), device_(device) {
  GLASS_CHECK(world_size >= 1, "RankMemoryLedger: world_size must be >= 1, got ", world_size);
  current_.assign(world_size, 0);
  peak_.assign(world_size, 0);
  handle_ = events::subscribe([this](const events::Event& e) {
    if (e.device != device_) return;
    if (e.kind == events::Kind::Allocation)
      on_allocation(e.rank, e.ptr, e.bytes);
    else if (e.kind == events::Kind::Free)
      on_free(e.ptr);
  });
}

RankMemoryLedger::~RankMemoryLedger() { events::unsubscribe(handle_); }

void RankMemoryLedger::on_allocation(int rank, const void* ptr, int64_t bytes) {
  if (rank < 0 || rank >= world_size_) return;  // not a rank of this job
  std::lock_guard<std::mutex> lock(mutex_);
  blocks_[ptr] = Block{rank, bytes};
  current_[rank] += bytes;
  peak_[rank] = std::max(peak_[rank], current_[rank]);
  if (recording_) samples_.push_back({order_++, rank, current_[rank]});
}

void RankMemoryLedger::on_free(const void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end()) return;  // allocated before the ledger, or by no rank
  const Block block = it->second;
  blocks_.erase(it);
  current_[block.rank] -= block.bytes;
  if (recording_) samples_.push_back({order_++, block.rank, current_[block.rank]});
}

void RankMemoryLedger::check_rank(int rank, const char* what) const {
  GLASS_CHECK(rank >= 0 && rank < world_size_, "RankMemoryLedger::", what, ": rank ", rank,
              " is not in [0, ", world_size_, ")");
}

int64_t RankMemoryLedger::current(int rank) const {
  check_rank(rank, "current");
  std::lock_guard<std::mutex> lock(mutex_);
  return current_[rank];
}

int64_t RankMemoryLedger::peak(int rank) const {
  check_rank(rank, "peak");
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_[rank];
}

void RankMemoryLedger::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  peak_ = current_;
}

void RankMemoryLedger::set_recording(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  recording_ = on;
}

std::vector<RankMemoryLedger::Sample> RankMemoryLedger::samples() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_;
}

void RankMemoryLedger::clear_samples() {
  std::lock_guard<std::mutex> lock(mutex_);
  samples_.clear();
  order_ = 0;
}

}  // namespace glass::distributed
