// distributed/backends/mpi.h — the mpi backend: an MPI library (Debian's OpenMPI) for jobs
// started by mpirun or srun.
//
// MPI already knows who is in the job: rank and world size come from MPI_COMM_WORLD, so
// init_process_group("mpi") needs no env:// rendezvous and no store (as in torch). Each
// group owns its own communicator — a duplicate of MPI_COMM_WORLD for the default group, an
// MPI_Comm_split of its parent for new_group() — so messages of different groups never meet.
// Collectives are MPI's own blocking calls (MPI_Allreduce, MPI_Bcast, ...), run on the
// group's communication thread like every backend's; send/recv are MPI_Isend/MPI_Irecv,
// posted from the caller's thread.
//
// Note [MPI needs a progress thread]: MPI moves a non-blocking message only while some
// thread of the process is inside an MPI call (OpenMPI has no progress thread of its own),
// and it tells nobody when a request completes — it must be asked (MPI_Test). So each group
// runs a small progress thread that tests its pending send/recv requests and finishes their
// Work the moment MPI reports them done. It tests without pause for a few milliseconds
// after each post or completion (the bytes of a message in flight move only while it is
// inside MPI), and after that waits on a condition variable between tests for a short,
// growing interval (or until a new request is posted), so a late partner costs little CPU.
// Without it, a posted recv whose Work nobody waits on would never complete.
//
// Timeouts: MPI has none. A send/recv that passes its timeout fails its Work (the request
// is cancelled). A collective, though, is one blocking MPI call that cannot be interrupted:
// Work::wait(timeout) still returns at the timeout with an error naming the op and its
// number, but the MPI call stays stuck on the communication thread, and the group cannot be
// destroyed until it returns — end such a job, do not try to recover it. A process that
// exits with a collective still inside MPI aborts the job (MPI_Abort, exit status 1: MPI
// cannot be finalised under a call in flight), and mpirun then ends every rank. A rank that
// dies ends the whole job the same way: MPI's failure model is fail-stop for the job.
//
// Threads: MPI is initialised once per process with MPI_THREAD_MULTIPLE (the communication
// thread, the progress thread and the caller's thread all call MPI at once), and finalised
// at exit. MPI cannot be initialised again after that, so one process runs one MPI job.
// Finalising comes after every live group's threads are stopped and joined (a program need
// not call destroy_process_group: the default group, a global, is destroyed only after the
// exit handler ran), because MPI_Finalize must not run while another thread is inside MPI.
//
// No MPI header appears here, so code that includes this one needs none.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "distributed/process_group.h"
#include "distributed/store.h"

namespace glass::distributed {

// Initialises MPI for this process if it is not yet (MPI_THREAD_MULTIPLE; throws when the
// library provides less), and registers MPI_Finalize to run at exit.
void ensure_mpi_initialized();
// This process's rank and the job's size in MPI_COMM_WORLD (initialising MPI if needed).
int mpi_world_rank();
int mpi_world_size();

class MPIProcessGroup : public ProcessGroup {
 public:
  // The default group: every process of the job, in MPI_COMM_WORLD's order. rank and size
  // must be MPI's (init_process_group passes them so); options.store may be null.
  MPIProcessGroup(int rank, int size, const ProcessGroup::Options& options);
  ~MPIProcessGroup() override;

  // new_group for mpi: MPI_Comm_split is collective over the parent, so EVERY rank of
  // `parent` calls this, in the same order, with the same list (as torch.distributed's
  // new_group asks). Members get a group whose rank i is ranks[i]; the others nullptr.
  static std::shared_ptr<ProcessGroup> split(ProcessGroup& parent, const std::vector<int>& ranks,
                                             const ProcessGroup::Options& options);

  std::string backend_name() const override { return "mpi"; }

  // Stops and joins the threads of every mpi group still alive, so no thread of ours is
  // inside MPI (the exit handler calls it just before MPI_Finalize). The groups stay
  // usable only for destruction.
  static void stop_all_live_groups();

 protected:
  void run_allreduce(Tensor& tensor, ReduceOp op, const CollectiveContext& ctx) override;
  void run_broadcast(Tensor& tensor, int root, const CollectiveContext& ctx) override;
  void run_allgather(Tensor& output, const Tensor& input, const CollectiveContext& ctx) override;
  void run_reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op,
                          const CollectiveContext& ctx) override;
  void run_barrier(const CollectiveContext& ctx) override;
  void run_gather(std::vector<Tensor>& outputs, const Tensor& input, int root,
                  const CollectiveContext& ctx) override;
  void run_scatter(Tensor& output, const std::vector<Tensor>& inputs, int root,
                   const CollectiveContext& ctx) override;
  std::shared_ptr<Work> post_send(const Tensor& tensor, int dst, int tag,
                                  std::chrono::milliseconds timeout) override;
  std::shared_ptr<Work> post_recv(Tensor& tensor, int src, int tag,
                                  std::chrono::milliseconds timeout) override;

 private:
  struct Comms;    // the group's MPI communicators (mpi.cpp)
  class Progress;  // the progress thread and its pending requests (mpi_p2p.cpp)
  MPIProcessGroup(int rank, int size, const ProcessGroup::Options& options,
                  std::unique_ptr<Comms> comms);
  // Two duplicates of MPI_COMM_WORLD, after checking that rank and size are MPI's.
  static std::unique_ptr<Comms> world_comms(int rank, int size);

  std::shared_ptr<Work> post_p2p(bool is_send, const Tensor& tensor, int peer, int tag,
                                 std::chrono::milliseconds timeout);
  // The communication thread, then the progress thread; a second call does nothing.
  void stop_threads();

  std::unique_ptr<Comms> comms_;
  std::unique_ptr<Progress> progress_;
};

// The factory the backend registry calls for "mpi" (the default group).
std::shared_ptr<ProcessGroup> make_mpi_group(std::shared_ptr<Store> store, int rank, int size,
                                             const ProcessGroup::Options& options);

}  // namespace glass::distributed
