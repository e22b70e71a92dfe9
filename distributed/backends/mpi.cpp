// distributed/backends/mpi.cpp — MPI's life in the process, the group's communicators, and
// its collectives (send/recv are in mpi_p2p.cpp).
//
// Each run_* hook is one blocking MPI call on the group's own communicator, so concurrent
// groups never mix messages and no tag is needed (MPI orders collectives per communicator,
// and ProcessGroup issues them in the same order on every rank). Reductions use MPI's own
// types and ops; see mpi.h for what MPI's lack of timeouts means here.
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"
#include "distributed/backends/mpi_detail.h"

namespace glass::distributed {

// [SECTION] MPI's life in the process.

void check_mpi(int rc, const std::string& what) {
  if (rc == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, message, &length);
  detail::throw_error(what + " failed: " + std::string(message, static_cast<size_t>(length)));
}

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

namespace {

// Collectives inside a blocking MPI call right now, in the whole process.
std::atomic<int> g_collectives_in_mpi{0};

// MPI's "main thread". The MPI standard requires MPI_Finalize to run on the thread that
// called MPI_Init_thread, even under MPI_THREAD_MULTIPLE. MPI may be initialised from any
// thread (whichever calls init_process_group first), and the exit handler runs on whichever
// thread calls exit(); so neither call runs on those: one small thread of our own calls
// MPI_Init_thread, then sleeps until the exit handler asks it to call MPI_Finalize.
// Allocated once and never freed: it is still needed when static destructors run.
struct MpiMainThread {
  std::mutex mutex;
  std::condition_variable changed;
  bool initialized = false;  // MPI_Init_thread has returned (rc and provided are set)
  bool finalize = false;     // the exit handler asks for MPI_Finalize
  int rc = MPI_SUCCESS;
  int provided = MPI_THREAD_SINGLE;
  std::thread thread;

  void run() {
    int provided_level = MPI_THREAD_SINGLE;
    const int init_rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided_level);
    std::unique_lock<std::mutex> lock(mutex);
    rc = init_rc;
    provided = provided_level;
    initialized = true;
    changed.notify_all();
    if (init_rc != MPI_SUCCESS) return;  // nothing to finalise
    changed.wait(lock, [&] { return finalize; });
    MPI_Finalize();
  }
};
MpiMainThread* g_main_thread = nullptr;  // set once, under ensure_mpi_initialized's once_flag

// Only the MPI we started is ours to finish; a program that called MPI_Init itself
// finalises it itself. A collective still inside MPI (one a rank skipped: MPI has no
// timeouts) would make MPI_Finalize crash and its group's destructor wait forever, so the
// job is aborted instead: mpirun then ends every rank. Otherwise every live group's threads
// are stopped first (MPI_Finalize must not run while they may be inside MPI_Testsome or a
// collective), then MPI's main thread finalises.
void finalize_at_exit() {
  if (mpi_finalized() || g_main_thread == nullptr) return;
  if (g_collectives_in_mpi.load() > 0) {
    std::fprintf(stderr,
                 "glass::distributed: exiting while a collective is still inside MPI (not every "
                 "rank joined it, and MPI has no timeouts); MPI cannot be finalized under it, "
                 "so the job is aborted (MPI_Abort)\n");
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPIProcessGroup::stop_all_live_groups();
  {
    std::lock_guard<std::mutex> lock(g_main_thread->mutex);
    g_main_thread->finalize = true;
  }
  g_main_thread->changed.notify_all();
  g_main_thread->thread.join();
}

// The mpi groups alive in this process, for finalize_at_exit. Never freed, like the main
// thread: a group destroyed by a static destructor still unregisters here.
std::mutex& live_groups_mutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}
std::vector<MPIProcessGroup*>& live_groups() {
  static auto* groups = new std::vector<MPIProcessGroup*>();
  return *groups;
}

// One blocking MPI collective, counted while inside MPI (see finalize_at_exit).
template <class Call>
void run_collective(const char* name, Call&& call) {
  int rc = MPI_SUCCESS;
  {
    struct Counted {
      Counted() { g_collectives_in_mpi.fetch_add(1); }
      ~Counted() { g_collectives_in_mpi.fetch_sub(1); }
    } counted;
    rc = call();
  }
  check_mpi(rc, name);
}

}  // namespace

void ensure_mpi_initialized() {
  static std::once_flag once;  // a throw leaves it unset: the next call tries again
  std::call_once(once, [] {
    GLASS_CHECK(!mpi_finalized(),
                "mpi: MPI was already finalized in this process and cannot be initialised again "
                "(one process runs one MPI job)");
    int initialized = 0;
    MPI_Initialized(&initialized);
    int provided = MPI_THREAD_SINGLE;
    if (initialized) {
      MPI_Query_thread(&provided);
    } else {
      auto* main_thread = new MpiMainThread();
      main_thread->thread = std::thread([main_thread] { main_thread->run(); });
      {
        std::unique_lock<std::mutex> lock(main_thread->mutex);
        main_thread->changed.wait(lock, [&] { return main_thread->initialized; });
      }
      if (main_thread->rc != MPI_SUCCESS) {
        main_thread->thread.join();
        check_mpi(main_thread->rc, "mpi: MPI_Init_thread");
      }
      provided = main_thread->provided;
      g_main_thread = main_thread;
      std::atexit(finalize_at_exit);
    }
    // The communication thread runs collectives while the progress thread tests requests
    // and user threads post sends: three threads inside MPI at once.
    GLASS_CHECK(provided >= MPI_THREAD_MULTIPLE, "mpi: the MPI library provides thread level ",
                provided, ", but the mpi backend needs MPI_THREAD_MULTIPLE (", MPI_THREAD_MULTIPLE,
                "): its communication and progress threads call MPI at the same time. "
                "Use an MPI built with thread support (Debian's OpenMPI is)",
                initialized ? ", or call MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) "
                              "yourself before init_process_group"
                            : "");
  });
}

int mpi_world_rank() {
  ensure_mpi_initialized();
  int rank = 0;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "mpi: MPI_Comm_rank");
  return rank;
}

int mpi_world_size() {
  ensure_mpi_initialized();
  int size = 0;
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "mpi: MPI_Comm_size");
  return size;
}

// [SECTION] Communicators.

MPIProcessGroup::Comms::~Comms() {
  // After MPI_Finalize (a group that outlived main) there is nothing left to free.
  if (mpi_finalized()) return;
  if (control != MPI_COMM_NULL) MPI_Comm_free(&control);
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

namespace {

// Errors come back as codes (turned into glass::Error) instead of aborting the job, so the
// message can say which op of which group failed.
void return_errors(MPI_Comm comm) {
  check_mpi(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), "mpi: MPI_Comm_set_errhandler");
}

}  // namespace

std::unique_ptr<MPIProcessGroup::Comms> MPIProcessGroup::world_comms(int rank, int size) {
  ensure_mpi_initialized();
  const int world_rank = mpi_world_rank();
  const int world_size = mpi_world_size();
  GLASS_CHECK(rank == world_rank && size == world_size, "mpi: rank ", rank, " of ", size,
              " was asked for, but MPI says this process is rank ", world_rank, " of ", world_size,
              " (the mpi backend takes rank and world size from mpirun; do not "
              "pass rank= or world_size=)");
  // Started by glassrun or torchrun instead of mpirun, every process is an MPI job of one:
  // say so rather than run N disconnected "worlds".
  if (const char* env = std::getenv("WORLD_SIZE"); env && std::atoi(env) != world_size) {
    GLASS_CHECK(false, "mpi: WORLD_SIZE=", env,
                " (set by glassrun or torchrun) but MPI says the "
                "job has ",
                world_size, " process", world_size == 1 ? "" : "es",
                "; start mpi jobs with `mpirun -np N program`, or use the gloo backend under "
                "glassrun");
  }
  auto comms = std::make_unique<Comms>();
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comms->comm), "mpi: MPI_Comm_dup");
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comms->control), "mpi: MPI_Comm_dup");
  return_errors(comms->comm);
  return_errors(comms->control);
  return comms;
}

MPIProcessGroup::MPIProcessGroup(int rank, int size, const ProcessGroup::Options& options)
    : MPIProcessGroup(rank, size, options, world_comms(rank, size)) {}

MPIProcessGroup::MPIProcessGroup(int rank, int size, const ProcessGroup::Options& options,
                                 std::unique_ptr<Comms> comms)
    : ProcessGroup(rank, size, options),
      comms_(std::move(comms)),
      progress_(std::make_unique<Progress>(comms_->comm)) {
  start();
  std::lock_guard<std::mutex> lock(live_groups_mutex());
  live_groups().push_back(this);
}

MPIProcessGroup::~MPIProcessGroup() {
  {
    std::lock_guard<std::mutex> lock(live_groups_mutex());
    std::erase(live_groups(), this);
  }
  stop_threads();
}

void MPIProcessGroup::stop_threads() {
  stop();             // no collective runs past this line
  progress_.reset();  // nor any send/recv
}

void MPIProcessGroup::stop_all_live_groups() {
  // Under the lock, so a group cannot be half destroyed meanwhile: its destructor waits here
  // to unregister, then finds its threads already stopped.
  std::lock_guard<std::mutex> lock(live_groups_mutex());
  for (MPIProcessGroup* group : live_groups()) group->stop_threads();
}

std::shared_ptr<ProcessGroup> MPIProcessGroup::split(ProcessGroup& parent,
                                                     const std::vector<int>& ranks,
                                                     const ProcessGroup::Options& options) {
  auto* mpi_parent = dynamic_cast<MPIProcessGroup*>(&parent);
  GLASS_CHECK(mpi_parent != nullptr, "mpi: new_group needs an mpi parent group, got a '",
              parent.backend_name(), "' group");
  int index = -1;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] == parent.rank()) index = static_cast<int>(i);
  // The key orders the new communicator's ranks: member i of the list becomes rank i.
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(mpi_parent->comms_->control, index >= 0 ? 0 : MPI_UNDEFINED,
                           index >= 0 ? index : 0, &comm),
            detail::str_cat("mpi: new_group: MPI_Comm_split of group '",
                            parent.options().group_name, "' (rank ", parent.rank(), ")"));
  if (comm == MPI_COMM_NULL) return nullptr;  // not a member
  auto comms = std::make_unique<Comms>();
  comms->comm = comm;
  check_mpi(MPI_Comm_dup(comm, &comms->control), "mpi: new_group: MPI_Comm_dup");
  return_errors(comms->comm);
  return_errors(comms->control);
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "mpi: new_group: MPI_Comm_rank");
  GLASS_INTERNAL_ASSERT(rank == index, "MPI_Comm_split put list entry ", index, " at rank ", rank);
  return std::shared_ptr<ProcessGroup>(
      new MPIProcessGroup(rank, static_cast<int>(ranks.size()), options, std::move(comms)));
}

std::shared_ptr<ProcessGroup> make_mpi_group(std::shared_ptr<Store> /*store*/, int rank, int size,
                                             const ProcessGroup::Options& options) {
  return std::make_shared<MPIProcessGroup>(rank, size, options);
}

// [SECTION] Element types and reductions.

MPI_Datatype mpi_type(ScalarType dtype) {
  switch (dtype) {
    case kFloat: return MPI_FLOAT;
    case kDouble: return MPI_DOUBLE;
    case kInt: return MPI_INT32_T;
    case kLong: return MPI_INT64_T;
    default: break;
  }
  GLASS_CHECK(false, "mpi: tensors of dtype ", to_string(dtype),
              " have no MPI type here; the mpi backend moves float32, float64, int32 and int64");
  return MPI_DATATYPE_NULL;
}

namespace {

// ProcessGroup sends AVG as SUM and divides afterwards, the same for every backend.
MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return MPI_SUM;
    case ReduceOp::PRODUCT: return MPI_PROD;
    case ReduceOp::MAX: return MPI_MAX;
    case ReduceOp::MIN: return MPI_MIN;
    case ReduceOp::AVG: break;
  }
  GLASS_INTERNAL_ASSERT(false, "the mpi backend was asked for ", to_string(op),
                        "; ProcessGroup should have turned AVG into SUM");
  return MPI_OP_NULL;
}

// MPI counts are ints: a tensor of 2^31 elements or more needs splitting first.
int count_of(const Tensor& t, const char* op) {
  GLASS_CHECK(t.numel() <= INT_MAX, "mpi: ", op, " of ", t.numel(),
              " elements: MPI counts elements in an int (at most ", INT_MAX,
              "); split the tensor into smaller ones");
  return static_cast<int>(t.numel());
}

void* data_of(const Tensor& t) { return t.data_ptr(); }

}  // namespace

// [SECTION] Collectives.

void MPIProcessGroup::run_allreduce(Tensor& tensor, ReduceOp op, const CollectiveContext&) {
  run_collective("MPI_Allreduce", [&] {
    return MPI_Allreduce(MPI_IN_PLACE, data_of(tensor), count_of(tensor, "allreduce"),
                         mpi_type(tensor.dtype()), mpi_op(op), comms_->comm);
  });
}

void MPIProcessGroup::run_broadcast(Tensor& tensor, int root, const CollectiveContext&) {
  run_collective("MPI_Bcast", [&] {
    return MPI_Bcast(data_of(tensor), count_of(tensor, "broadcast"), mpi_type(tensor.dtype()), root,
                     comms_->comm);
  });
}

void MPIProcessGroup::run_allgather(Tensor& output, const Tensor& input, const CollectiveContext&) {
  const MPI_Datatype type = mpi_type(input.dtype());
  const int n = count_of(input, "allgather");
  count_of(output, "allgather");
  run_collective("MPI_Allgather", [&] {
    return MPI_Allgather(data_of(input), n, type, data_of(output), n, type, comms_->comm);
  });
}

// MPI_Reduce_scatter_block is exactly this op: size() equal blocks, rank r gets block r.
void MPIProcessGroup::run_reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op,
                                         const CollectiveContext&) {
  count_of(input, "reduce_scatter");
  run_collective("MPI_Reduce_scatter_block", [&] {
    return MPI_Reduce_scatter_block(data_of(input), data_of(output),
                                    count_of(output, "reduce_scatter"), mpi_type(input.dtype()),
                                    mpi_op(op), comms_->comm);
  });
}

void MPIProcessGroup::run_barrier(const CollectiveContext&) {
  run_collective("MPI_Barrier", [&] { return MPI_Barrier(comms_->comm); });
}

// MPI gathers into one buffer of size() blocks on the root; the outputs are separate
// tensors, so the root receives into scratch and copies out.
void MPIProcessGroup::run_gather(std::vector<Tensor>& outputs, const Tensor& input, int root,
                                 const CollectiveContext&) {
  const MPI_Datatype type = mpi_type(input.dtype());
  const int n = count_of(input, "gather");
  const size_t block = static_cast<size_t>(input.nbytes());
  std::vector<uint8_t> gathered(rank() == root ? block * static_cast<size_t>(size()) : 0);
  run_collective("MPI_Gather", [&] {
    return MPI_Gather(data_of(input), n, type, gathered.data(), n, type, root, comms_->comm);
  });
  if (rank() != root) return;
  for (int r = 0; r < size(); ++r) {
    std::memcpy(data_of(outputs[static_cast<size_t>(r)]),
                gathered.data() + static_cast<size_t>(r) * block, block);
  }
}

// The mirror image: the root packs the inputs into one buffer for MPI_Scatter.
void MPIProcessGroup::run_scatter(Tensor& output, const std::vector<Tensor>& inputs, int root,
                                  const CollectiveContext&) {
  const MPI_Datatype type = mpi_type(output.dtype());
  const int n = count_of(output, "scatter");
  const size_t block = static_cast<size_t>(output.nbytes());
  std::vector<uint8_t> packed(rank() == root ? block * static_cast<size_t>(size()) : 0);
  if (rank() == root) {
    for (int r = 0; r < size(); ++r) {
      std::memcpy(packed.data() + static_cast<size_t>(r) * block,
                  data_of(inputs[static_cast<size_t>(r)]), block);
    }
  }
  run_collective("MPI_Scatter", [&] {
    return MPI_Scatter(packed.data(), n, type, data_of(output), n, type, root, comms_->comm);
  });
}

}  // namespace glass::distributed
