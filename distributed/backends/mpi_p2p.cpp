// distributed/backends/mpi_p2p.cpp — send and recv of the mpi backend, and the progress
// thread that completes them (Note [MPI needs a progress thread] in mpi.h).
//
// A send or recv is an MPI_Isend/MPI_Irecv over the tensor's memory with the caller's tag,
// posted at once from the caller's thread (so a ring can send right while it receives from
// the left). The progress thread owns every posted request from then on: it calls
// MPI_Testsome over all of them — which is what makes MPI move the bytes — and finishes each
// Work as MPI reports its request done, so is_completed() turns true whether or not anyone
// waits. A request still pending at its deadline fails its Work and is cancelled. While
// messages are moving it tests without pause (MPI moves TCP bytes only inside its calls);
// when nothing has moved for a few milliseconds, it backs off.
#include <algorithm>
#include <climits>
#include <exception>
#include <utility>

#include "core/error.h"
#include "distributed/backends/mpi_detail.h"

namespace glass::distributed {
namespace {

int tag_upper_bound(MPI_Comm comm) {
  int* bound = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &bound, &found);
  return found && bound ? *bound : 32767;  // the least the MPI standard promises
}

// Memory MPI may still touch after its group is gone (a cancelled request MPI had already
// matched): kept alive until the process ends rather than risk MPI writing freed memory.
void keep_until_exit(Tensor tensor) {
  static std::mutex mutex;
  static auto* kept = new std::vector<Tensor>();  // never freed, on purpose
  std::lock_guard<std::mutex> lock(mutex);
  kept->push_back(std::move(tensor));
}

}  // namespace

// [SECTION] Posting.

std::shared_ptr<Work> MPIProcessGroup::post_send(const Tensor& tensor, int dst, int tag,
                                                 std::chrono::milliseconds timeout) {
  return post_p2p(/*is_send=*/true, tensor, dst, tag, timeout);
}

std::shared_ptr<Work> MPIProcessGroup::post_recv(Tensor& tensor, int src, int tag,
                                                 std::chrono::milliseconds timeout) {
  return post_p2p(/*is_send=*/false, tensor, src, tag, timeout);
}

std::shared_ptr<Work> MPIProcessGroup::post_p2p(bool is_send, const Tensor& tensor, int peer,
                                                int tag, std::chrono::milliseconds timeout) {
  return progress_->post(is_send, tensor, peer, tag, timeout);
}

MPIProcessGroup::Progress::Progress(MPI_Comm comm) : comm_(comm) {
  thread_ = std::thread([this] { loop(); });
}

std::shared_ptr<Work> MPIProcessGroup::Progress::post(bool is_send, const Tensor& tensor, int peer,
                                                      int tag, std::chrono::milliseconds timeout) {
  const std::string what =
      detail::str_cat(is_send ? "send to rank " : "recv from rank ", peer, " (tag ", tag, ")");
  const int tag_ub = tag_upper_bound(comm_);
  GLASS_CHECK(tag <= tag_ub, "mpi: ", what, ": MPI allows tags up to ", tag_ub);
  GLASS_CHECK(tensor.numel() <= INT_MAX, "mpi: ", what, " of ", tensor.numel(),
              " elements: MPI counts elements in an int; split the tensor");
  const int count = static_cast<int>(tensor.numel());
  const MPI_Datatype type = mpi_type(tensor.dtype());

  Pending op;
  op.tensor = tensor;
  op.what = what;
  op.timeout = timeout;
  op.deadline = Clock::now() + timeout;
  // Posted under the lock, so requests enter the list in the order they were posted.
  std::lock_guard<std::mutex> lock(mutex_);
  GLASS_CHECK(!stopping_, "mpi: ", what, ": the group is being destroyed");
  op.work = std::make_shared<Work>(is_send ? "send" : "recv", seq_++, timeout,
                                   is_send ? std::vector<Tensor>{} : std::vector<Tensor>{tensor});
  if (is_send) {
    check_mpi(MPI_Isend(tensor.data_ptr(), count, type, peer, tag, comm_, &op.request),
              "mpi: " + what + ": MPI_Isend");
  } else {
    check_mpi(MPI_Irecv(tensor.data_ptr(), count, type, peer, tag, comm_, &op.request),
              "mpi: " + what + ": MPI_Irecv");
  }
  std::shared_ptr<Work> work = op.work;
  pending_.push_back(std::move(op));
  posted_.notify_all();
  return work;
}

// [SECTION] The progress thread.

void MPIProcessGroup::Progress::loop() {
  auto idle_wait = kFirstIdleWait;
  Clock::time_point last_event = Clock::now();  // the last post or completion seen
  uint64_t posts_seen = 0;
  for (;;) {
    size_t n = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Nothing pending: sleep until a post (no polling at all while idle).
      posted_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (stopping_) return;  // ~Progress deals with what is left
      n = pending_.size();
      if (seq_ != posts_seen) {
        posts_seen = seq_;
        last_event = Clock::now();
        idle_wait = kFirstIdleWait;
      }
    }
    std::vector<Finished> finished = test_pending(n);
    // Finished outside the lock: a Work's callbacks may post the next message.
    for (Finished& f : finished) f.work->finish(f.error);
    if (!finished.empty()) {
      last_event = Clock::now();
      idle_wait = kFirstIdleWait;
      continue;
    }
    if (Clock::now() - last_event < kBusyWindow) {
      std::this_thread::yield();  // bytes may be in flight: test again at once
      continue;
    }
    // Nothing for a while: wait a little (or until a new post), then ask MPI again.
    std::unique_lock<std::mutex> lock(mutex_);
    posted_.wait_for(lock, idle_wait, [&] { return stopping_ || seq_ != posts_seen; });
    idle_wait = std::min(idle_wait * 2, kMaxIdleWait);
  }
}

std::vector<MPIProcessGroup::Progress::Finished> MPIProcessGroup::Progress::test_pending(size_t n) {
  // Only this thread removes entries and post() only appends, so the first n entries stay
  // where they are while MPI is asked about copies of their requests without the lock.
  std::vector<MPI_Request> requests(n);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < n; ++i) requests[i] = pending_[i].request;
  }
  std::vector<int> indices(n);
  std::vector<MPI_Status> statuses(n);
  int done = 0;
  const int rc =
      MPI_Testsome(static_cast<int>(n), requests.data(), &done, indices.data(), statuses.data());
  std::vector<bool> remove(n, false);
  std::vector<Finished> finished;
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  const bool tested = rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS;
  const int completed = tested && done != MPI_UNDEFINED ? done : 0;
  for (int k = 0; k < completed; ++k) {
    const auto i = static_cast<size_t>(indices[static_cast<size_t>(k)]);
    remove[i] = true;
    Pending& op = pending_[i];
    if (!op.work) continue;  // it had timed out; MPI has let go of its memory now
    std::exception_ptr error;
    const int status =
        rc == MPI_ERR_IN_STATUS ? statuses[static_cast<size_t>(k)].MPI_ERROR : MPI_SUCCESS;
    try {
      check_mpi(status, "mpi: " + op.what);
    } catch (...) {
      error = std::current_exception();
    }
    finished.push_back({op.work, error});
  }
  if (!tested) {
    // MPI could not even test: every op tested fails with its message, and leaves the list
    // (left there, it would be tested, and fail, on every turn of the loop). MPI never said
    // these requests ended, so each is cancelled and freed, and its memory kept until exit —
    // except one MPI freed before failing part-way (its handle in `requests` is null now).
    for (size_t i = 0; i < n; ++i) {
      Pending& op = pending_[i];
      remove[i] = true;
      if (requests[i] != MPI_REQUEST_NULL) {
        if (op.work) MPI_Cancel(&op.request);  // one that timed out was cancelled then
        MPI_Request_free(&op.request);
      }
      if (op.work) {
        try {
          check_mpi(rc, "mpi: " + op.what + ": MPI_Testsome");
        } catch (...) {
          finished.push_back({op.work, std::current_exception()});
        }
        op.work = nullptr;
      }
      keep_until_exit(std::move(op.tensor));
    }
  }
  // Past the deadline: MPI has no timeouts of its own, so the Work fails here; the request
  // is cancelled but stays in the list until MPI confirms (its memory is MPI's till then).
  for (size_t i = 0; i < n; ++i) {
    Pending& op = pending_[i];
    if (remove[i] || !op.work || now < op.deadline) continue;
    finished.push_back(
        {op.work,
         std::make_exception_ptr(Error(detail::str_cat(
             "mpi: ", op.what, " timed out after ", op.timeout.count(), " ms (no matching ",
             op.what.rfind("send", 0) == 0 ? "recv" : "send",
             " was posted in time; MPI has no timeouts, so the request was cancelled)")))});
    op.work = nullptr;
    MPI_Cancel(&op.request);
  }
  std::vector<Pending> kept;
  kept.reserve(pending_.size());
  for (size_t i = 0; i < pending_.size(); ++i)
    if (i >= n || !remove[i]) kept.push_back(std::move(pending_[i]));
  pending_.swap(kept);
  return finished;
}

MPIProcessGroup::Progress::~Progress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  posted_.notify_all();
  thread_.join();
  // Still pending now: the peer never answered. Cancel what MPI still can, and keep the
  // memory of what it cannot (a send MPI had already started) alive until exit.
  for (Pending& op : pending_) {
    if (op.work) {
      op.work->finish(std::make_exception_ptr(
          Error("mpi: " + op.what + " was still pending when its mpi group was destroyed")));
    }
    if (!mpi_finalized()) {
      if (op.work) MPI_Cancel(&op.request);  // one that timed out was cancelled then
      MPI_Request_free(&op.request);
    }
    keep_until_exit(std::move(op.tensor));
  }
}

}  // namespace glass::distributed
