// distributed/backends/threads_world.cpp — slots, mailboxes and the simulated wire.
//
// Invariant: mutex_ guards every slot and mailbox; nothing slow runs under it (combining,
// copying a message, sleeping on the wire, finishing a Work — whose callbacks may call back
// in), so ranks only ever wait on each other, never on a lock holder.
#include "distributed/backends/threads_world.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "core/error.h"
#include "core/events.h"
#include "core/scalar_type.h"
#include "distributed/diagnosis.h"

namespace glass::distributed {

// [SECTION] the registry: which world a (store, group) names ---------------------------

namespace {

struct RegistryEntry {
  std::weak_ptr<Store> store;  // expired: the address may be reused, the entry is stale
  std::shared_ptr<ThreadsWorld> world;
};
using Registry = std::map<std::pair<const Store*, std::string>, RegistryEntry>;

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}
Registry& registry() {
  static Registry entries;
  return entries;
}

}  // namespace

std::shared_ptr<ThreadsWorld> ThreadsWorld::join(const std::shared_ptr<Store>& store,
                                                 const std::string& group, int rank, int size,
                                                 ThreadsLinkModel link) {
  std::lock_guard<std::mutex> registry_lock(registry_mutex());
  std::erase_if(registry(), [](const auto& entry) { return entry.second.store.expired(); });
  RegistryEntry& entry = registry()[{store.get(), group}];
  std::shared_ptr<ThreadsWorld> world = entry.world;
  if (world) {
    std::lock_guard<std::mutex> lock(world->mutex_);
    if (world->joined_[rank]) {
      world = nullptr;  // this rank made the group before: this is a new incarnation
    } else {
      GLASS_CHECK(world->size_ == size, "threads group '", group, "': rank ", rank,
                  " says the group has ", size, " ranks, but it was made with ", world->size_);
      world->joined_[rank] = true;
    }
  }
  if (!world) {
    world = std::make_shared<ThreadsWorld>(size, link);
    world->joined_[rank] = true;
    entry = {store, world};
  }
  return world;
}

ThreadsWorld::ThreadsWorld(int size, ThreadsLinkModel link)
    : size_(size), link_(link), joined_(size, false), left_(size, false) {}

std::chrono::nanoseconds ThreadsWorld::wire_time(int64_t hops, double bytes) const {
  double seconds = static_cast<double>(hops) * std::chrono::duration<double>(link_.latency).count();
  if (link_.bytes_per_second > 0) seconds += bytes / link_.bytes_per_second;
  return std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9));
}

// [SECTION] collectives ----------------------------------------------------------------

std::string ThreadsWorld::missing_ranks(const Slot& slot) const {
  std::ostringstream out;
  int count = 0;
  for (int r = 0; r < size_; ++r) {
    if (slot.calls[r]) continue;
    out << (count++ ? ", " : "") << r;
  }
  return (count == 1 ? "rank " : "ranks ") + out.str();
}

void ThreadsWorld::fail_slot(Slot& slot, std::string why, bool names_culprit) {
  if (slot.failure.empty()) {
    slot.failure = std::move(why);
    slot.failure_names_culprit = names_culprit;
  }
  changed_.notify_all();
}

void ThreadsWorld::throw_failure(const Slot& slot) {
  if (slot.failure_names_culprit) throw RanksAtFaultError(slot.failure);
  throw Error(slot.failure);
}

Tensor ThreadsWorld::collective(int rank, uint64_t slot_id, Call call, const Combine& combine,
                                std::chrono::nanoseconds wire, std::chrono::milliseconds timeout) {
  return run_slot(rank, slot_id, std::move(call), &combine, nullptr, wire, timeout);
}

void ThreadsWorld::collective_shared(int rank, uint64_t slot_id, Call call, const Share& share,
                                     std::chrono::nanoseconds wire,
                                     std::chrono::milliseconds timeout) {
  run_slot(rank, slot_id, std::move(call), nullptr, &share, wire, timeout);
}

Tensor ThreadsWorld::run_slot(int rank, uint64_t slot_id, Call call, const Combine* combine,
                              const Share* share, std::chrono::nanoseconds wire,
                              std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mutex_);
  std::shared_ptr<Slot>& entry = slots_[slot_id];
  if (!entry) entry = std::make_shared<Slot>(size_);
  std::shared_ptr<Slot> slot = entry;
  if (!slot->failure.empty()) throw_failure(*slot);

  // Everyone must be doing the same thing, or the combining rank would read garbage.
  for (int r = 0; r < size_; ++r) {
    const Call* other = slot->calls[r].get();
    if (!other) continue;
    if (std::strcmp(other->op, call.op) != 0 || other->dtype != call.dtype ||
        other->numel != call.numel) {
      fail_slot(*slot,
                detail::str_cat("ranks called different collectives: rank ", rank, " ", call.op,
                                " (", call.numel, " ", dtype_name(call.dtype), " elements), rank ",
                                r, " ", other->op, " (", other->numel, " ",
                                dtype_name(other->dtype), " elements)"),
                true);
      throw_failure(*slot);
    }
    break;
  }
  for (int r = 0; r < size_; ++r) {
    if (left_[r] && !slot->calls[r] && r != rank)
      fail_slot(*slot,
                detail::str_cat("rank ", r,
                                " left the group (destroyed its process group)"
                                " without joining"),
                true);
  }
  if (!slot->failure.empty()) throw_failure(*slot);
  slot->calls[rank] = std::make_unique<Call>(std::move(call));
  ++slot->arrived;

  const bool last = slot->arrived == size_;
  if (last && share != nullptr) changed_.notify_all();  // the others' parts can start
  if (!last) {
    const bool done = changed_.wait_until(lock, deadline, [&] {
      return slot->ready || !slot->failure.empty() || slot->arrived == size_;
    });
    if (!done) {
      const std::string missing = missing_ranks(*slot);
      fail_slot(*slot, detail::str_cat("rank ", rank, " gave up after ", timeout.count(),
                                       " ms waiting for ", missing));
      ++slot->departed;
      GLASS_CHECK(false, "timed out after ", timeout.count(), " ms waiting for ", missing,
                  " to join (threads backend)");
    }
  }
  // Everyone has arrived. The last to arrive combines — or every rank does its share — outside
  // the lock: the others are waiting in this slot, so their inputs stay untouched meanwhile,
  // and the work ends in bounded time whatever anyone's deadline.
  if (slot->failure.empty() && (last || share != nullptr)) {
    std::vector<std::vector<Tensor>> inputs(size_);
    for (int r = 0; r < size_; ++r) inputs[r] = slot->calls[r]->inputs;
    ++slot->working;
    lock.unlock();
    Tensor result;
    std::string failure;
    try {
      if (share != nullptr) {
        (*share)(inputs, rank);
      } else {
        // The combined result is the simulated wire's buffer, not this rank's memory: on a
        // real transport it does not exist (each rank receives into its own output). Its
        // allocation is tagged with no rank, so RankMemoryLedger does not charge it to
        // whichever rank happened to arrive last — which would make per-rank peaks vary
        // from run to run.
        events::ThreadRankGuard no_rank(-1);
        result = (*combine)(inputs);
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
    lock.lock();
    --slot->working;
    if (!failure.empty()) {
      fail_slot(*slot, failure);
    } else if (share == nullptr || ++slot->parts_done == size_) {
      slot->result = result;
      slot->wire_done = std::chrono::steady_clock::now() + wire;
      slot->ready = true;
    }
    changed_.notify_all();
  }
  // Nobody leaves while a rank still works on the slot: a share writes into every rank's
  // tensor, so even a failed slot must wait for the parts that had started.
  changed_.wait(lock,
                [&] { return (slot->ready || !slot->failure.empty()) && slot->working == 0; });
  ++slot->departed;
  // Nobody reads this rank's inputs again (the slot is ready and no part is running), so they
  // go now rather than with the slot, when the last rank leaves: a rank's tensors are then
  // freed by the time its collective completes, not at a moment another rank decides.
  if (slot->calls[rank]) slot->calls[rank]->inputs.clear();
  if (!slot->failure.empty()) throw_failure(*slot);
  Tensor result = slot->result;
  const auto wire_done = slot->wire_done;
  if (slot->departed == size_) slots_.erase(slot_id);  // nobody reads it again
  lock.unlock();
  std::this_thread::sleep_until(wire_done);  // the simulated wire (a no-op without a link)
  return result;
}

// [SECTION] point-to-point -------------------------------------------------------------

namespace {

// Copies a message into a posted receive's buffer, or fails the receive if they differ.
void deliver(const Tensor& message, Tensor& buffer, Work& work, int src, int tag) {
  if (message.dtype() != buffer.dtype() || message.numel() != buffer.numel()) {
    work.finish(std::make_exception_ptr(Error(detail::str_cat(
        "recv from rank ", src, " (tag ", tag, "): the message holds ", message.numel(), " ",
        dtype_name(message.dtype()), " elements but the buffer holds ", buffer.numel(), " ",
        dtype_name(buffer.dtype())))));
    return;
  }
  std::memcpy(buffer.data_ptr(), message.data_ptr(), static_cast<size_t>(message.nbytes()));
  work.finish();
}

}  // namespace

std::shared_ptr<Work> ThreadsWorld::send(int src, int dst, int tag, const Tensor& tensor,
                                         std::chrono::milliseconds timeout) {
  auto work = std::make_shared<Work>("send", 0, timeout);
  Tensor message = tensor.clone();  // the sender may reuse its buffer once send returns
  std::this_thread::sleep_for(wire_time(1, static_cast<double>(message.nbytes())));
  std::unique_lock<std::mutex> lock(mutex_);
  if (left_[dst]) {
    lock.unlock();
    work->finish(std::make_exception_ptr(Error(detail::str_cat(
        "send to rank ", dst, " (tag ", tag, "): rank ", dst, " has left the group"))));
    return work;
  }
  Mailbox& box = mailboxes_[{src, dst, tag}];
  // Receives whose time ran out fail now, unfilled: their callers were already told.
  std::vector<std::shared_ptr<Work>> expired;
  const auto now = std::chrono::steady_clock::now();
  while (!box.waiting.empty() && box.waiting.front().deadline < now) {
    expired.push_back(box.waiting.front().work);
    box.waiting.pop_front();
  }
  std::optional<PendingRecv> pending;
  if (box.waiting.empty()) {
    box.messages.push_back(message);
  } else {
    pending = std::move(box.waiting.front());
    box.waiting.pop_front();
  }
  lock.unlock();
  for (auto& late : expired)
    late->finish(std::make_exception_ptr(Error(detail::str_cat(
        "recv from rank ", src, " (tag ", tag, "): timed out before the message came"))));
  if (pending) deliver(message, pending->buffer, *pending->work, src, tag);
  work->finish();
  return work;
}

std::shared_ptr<Work> ThreadsWorld::recv(int dst, int src, int tag, Tensor& buffer,
                                         std::chrono::milliseconds timeout) {
  auto work = std::make_shared<Work>("recv", 0, timeout);
  std::unique_lock<std::mutex> lock(mutex_);
  Mailbox& box = mailboxes_[{src, dst, tag}];
  if (!box.messages.empty()) {
    Tensor message = box.messages.front();
    box.messages.pop_front();
    lock.unlock();
    deliver(message, buffer, *work, src, tag);
  } else if (left_[src]) {
    lock.unlock();
    work->finish(std::make_exception_ptr(
        Error(detail::str_cat("recv from rank ", src, " (tag ", tag, "): rank ", src,
                              " left the group without sending"))));
  } else {
    const auto deadline = timeout.count() < 0 ? std::chrono::steady_clock::time_point::max()
                                              : std::chrono::steady_clock::now() + timeout;
    box.waiting.push_back({buffer, work, deadline});
  }
  return work;
}

// [SECTION] leaving --------------------------------------------------------------------

void ThreadsWorld::leave(int rank) {
  std::vector<std::pair<std::shared_ptr<Work>, std::string>> failed;
  bool all_left = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    left_[rank] = true;
    for (auto& [id, slot] : slots_) {
      if (slot->ready || !slot->failure.empty() || slot->calls[rank]) continue;
      fail_slot(*slot,
                detail::str_cat("rank ", rank,
                                " left the group (destroyed its process group) without joining"),
                true);
    }
    for (auto& [key, box] : mailboxes_) {
      const auto [src, dst, tag] = key;
      for (PendingRecv& pending : box.waiting) {
        if (dst == rank)
          failed.emplace_back(pending.work, detail::str_cat("recv from rank ", src, " (tag ", tag,
                                                            "): the group was destroyed first"));
        else if (src == rank)
          failed.emplace_back(
              pending.work, detail::str_cat("recv from rank ", src, " (tag ", tag, "): rank ", src,
                                            " left the group without sending"));
      }
      if (dst == rank || src == rank) box.waiting.clear();
    }
    changed_.notify_all();
    all_left = std::find(left_.begin(), left_.end(), false) == left_.end();
  }
  for (auto& [work, why] : failed) work->finish(std::make_exception_ptr(Error(why)));
  if (all_left) {  // nobody can need this world any more
    std::lock_guard<std::mutex> registry_lock(registry_mutex());
    std::erase_if(registry(),
                  [this](const auto& entry) { return entry.second.world.get() == this; });
  }
}

}  // namespace glass::distributed
