// distributed/rank_memory.cpp — the per-rank ledger of allocator events (rank_memory.h).
// Invariant: blocks holds exactly the counted live blocks, and current[r] is the sum of
// the bytes of those whose rank is r.
#include "distributed/rank_memory.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "core/error.h"
#include "core/events.h"

namespace glass::distributed {

struct RankMemoryLedger::State {
  State(int world_size, Device d) : device(d), current(world_size, 0), peak(world_size, 0) {}

  void on_allocation(int rank, const void* ptr, int64_t bytes) {
    if (rank < 0 || rank >= static_cast<int>(current.size())) return;  // not a rank of this job
    std::lock_guard<std::mutex> lock(mutex);
    blocks[ptr] = Block{rank, bytes};
    current[rank] += bytes;
    peak[rank] = std::max(peak[rank], current[rank]);
    if (recording) samples.push_back({order++, rank, current[rank]});
  }

  void on_free(const void* ptr) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = blocks.find(ptr);
    if (it == blocks.end()) return;  // allocated before the ledger, or by no rank
    const Block block = it->second;
    blocks.erase(it);
    current[block.rank] -= block.bytes;
    if (recording) samples.push_back({order++, block.rank, current[block.rank]});
  }

  struct Block {
    int rank;
    int64_t bytes;
  };
  const Device device;
  std::mutex mutex;
  std::unordered_map<const void*, Block> blocks;
  std::vector<int64_t> current, peak;
  bool recording = false;
  int64_t order = 0;
  std::vector<Sample> samples;
};

RankMemoryLedger::RankMemoryLedger(int world_size, Device device) : world_size_(world_size) {
  GLASS_CHECK(world_size >= 1, "RankMemoryLedger: world_size must be >= 1, got ", world_size);
  state_ = std::make_shared<State>(world_size, device);
  handle_ = events::subscribe([state = state_](const events::Event& e) {
    if (e.device != state->device) return;
    if (e.kind == events::Kind::Allocation)
      state->on_allocation(e.rank, e.ptr, e.bytes);
    else if (e.kind == events::Kind::Free)
      state->on_free(e.ptr);
  });
}

RankMemoryLedger::~RankMemoryLedger() { events::unsubscribe(handle_); }

void RankMemoryLedger::check_rank(int rank, const char* what) const {
  GLASS_CHECK(rank >= 0 && rank < world_size_, "RankMemoryLedger::", what, ": rank ", rank,
              " is not in [0, ", world_size_, ")");
}

int64_t RankMemoryLedger::current(int rank) const {
  check_rank(rank, "current");
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->current[rank];
}

int64_t RankMemoryLedger::peak(int rank) const {
  check_rank(rank, "peak");
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->peak[rank];
}

void RankMemoryLedger::reset_peak() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->peak = state_->current;
}

void RankMemoryLedger::set_recording(bool on) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->recording = on;
}

std::vector<RankMemoryLedger::Sample> RankMemoryLedger::samples() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->samples;
}

int64_t RankMemoryLedger::sample_count() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return static_cast<int64_t>(state_->samples.size());
}

void RankMemoryLedger::clear_samples() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->samples.clear();
  state_->order = 0;
}

}  // namespace glass::distributed
