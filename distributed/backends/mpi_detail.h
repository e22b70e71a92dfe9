// distributed/backends/mpi_detail.h — what mpi.cpp and mpi_p2p.cpp share: the group's
// communicators, the progress thread (Note [MPI needs a progress thread] in mpi.h), and a
// check that turns an MPI error code into a glass::Error. Includes <mpi.h>, so only the
// backend's own .cpp files include it.
//
// Invariant: every request in Progress's list is one MPI has not yet reported complete; its
// tensor stays alive until MPI has (or forever, if the group is destroyed first — see
// ~Progress — or MPI_Testsome itself fails), because MPI reads or writes that memory until
// then.
#pragma once

// MPI's C API only: the deprecated C++ bindings would need their own library.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/backends/mpi.h"
#include "distributed/work.h"

namespace glass::distributed {

// Throws a glass::Error "<what> failed: <MPI's message>" unless rc is MPI_SUCCESS.
void check_mpi(int rc, const std::string& what);
bool mpi_finalized();
// The MPI type of a collective's dtype (float32, float64, int32, int64); throws otherwise.
MPI_Datatype mpi_type(ScalarType dtype);

struct MPIProcessGroup::Comms {
  // Collectives (from the communication thread) and send/recv (from any thread): MPI keeps
  // the two apart by itself (a collective never matches a send), so they can share one.
  MPI_Comm comm = MPI_COMM_NULL;
  // new_group()'s MPI_Comm_split runs on the caller's thread; on `comm` it could interleave
  // with a collective the communication thread is running, which MPI forbids. A second
  // communicator over the same ranks keeps the two orders apart.
  MPI_Comm control = MPI_COMM_NULL;

  Comms() = default;
  Comms(const Comms&) = delete;
  Comms& operator=(const Comms&) = delete;
  ~Comms();
};

class MPIProcessGroup::Progress {
 public:
  explicit Progress(MPI_Comm comm);
  // Fails every Work still pending, cancels its request, and joins the thread.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  std::shared_ptr<Work> post(bool is_send, const Tensor& tensor, int peer, int tag,
                             std::chrono::milliseconds timeout);

 private:
  using Clock = std::chrono::steady_clock;
  struct Pending {
    MPI_Request request = MPI_REQUEST_NULL;
    Tensor tensor;  // the memory MPI reads (send) or writes (recv)
    // Null once it timed out: its request is cancelled then, and only MPI still owns it.
    // So a request is cancelled only while its Work is set, never twice: OpenMPI 4.1's ob1
    // does not notice a recv it already cancelled, unlinks it from the posted queue again and
    // completes it again, which writes through its completion marker (address 0x1).
    std::shared_ptr<Work> work;
    std::string what;  // "send to rank 1 (tag 3)"
    Clock::time_point deadline;
    std::chrono::milliseconds timeout;
  };
  // How often the thread tests. For kBusyWindow after a post or a completion it tests
  // continuously (yielding between tests): over TCP, MPI moves a message's bytes only while
  // some thread is inside an MPI call, so a thread that slept between tests would slow the
  // transfer itself, not just notice its end later. When nothing has happened for that
  // long, the partner is late rather than the bytes slow, and the thread backs off: it
  // waits between tests, briefly at first, doubling up to the ceiling, so a rank waiting
  // for a slow partner does not keep a core busy.
  static constexpr std::chrono::microseconds kBusyWindow{5000};
  static constexpr std::chrono::microseconds kFirstIdleWait{20};
  static constexpr std::chrono::microseconds kMaxIdleWait{2000};

  void loop();
  // One MPI_Testsome over the first `n` pending requests; returns the finished Works with
  // their errors, having removed their entries (and cancelled the ones past their deadline).
  struct Finished {
    std::shared_ptr<Work> work;
    std::exception_ptr error;
  };
  std::vector<Finished> test_pending(size_t n);

  MPI_Comm comm_;
  std::mutex mutex_;  // guards pending_, stopping_ and seq_
  std::condition_variable posted_;
  std::vector<Pending> pending_;  // the thread removes; post() only appends
  bool stopping_ = false;
  uint64_t seq_ = 0;  // also how many requests were ever posted: the loop sees new ones
  std::thread thread_;
};

}  // namespace glass::distributed
