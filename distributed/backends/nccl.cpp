// distributed/backends/nccl.cpp — NCCL loaded at run time, the id exchange, and each
// collective as one NCCL call on the device's default stream.
#include "distributed/backends/nccl.h"

#include <dlfcn.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "core/device_guard.h"
#include "core/error.h"
#include "core/ops/factories.h"
#include "cuda/runtime.h"
#include "cuda/stream.h"

namespace glass::distributed {

// ---- [SECTION] the library, loaded once ---------------------------------------------------
namespace {

struct Nccl {
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclCommGetAsyncError) comm_get_async_error = nullptr;
  decltype(&ncclGetErrorString) get_error_string = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
};

// The NCCL this binary was compiled against (its soname), or null with the reason.
const Nccl* load(std::string* why_not) {
  static std::string error;
  static const Nccl* loaded = []() -> const Nccl* {
    const std::string soname = "libnccl.so." + std::to_string(NCCL_MAJOR);
    void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      error = soname + " could not be loaded (" + dlerror() + ")";
      return nullptr;
    }
    static Nccl n;
    bool ok = true;
    auto bind = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (fn == nullptr) {
        error = soname + " has no " + name;
        ok = false;
      }
    };
    bind(n.get_version, "ncclGetVersion");
    bind(n.get_unique_id, "ncclGetUniqueId");
    bind(n.comm_init_rank, "ncclCommInitRank");
    bind(n.comm_destroy, "ncclCommDestroy");
    bind(n.comm_abort, "ncclCommAbort");
    bind(n.comm_get_async_error, "ncclCommGetAsyncError");
    bind(n.get_error_string, "ncclGetErrorString");
    bind(n.all_reduce, "ncclAllReduce");
    bind(n.broadcast, "ncclBroadcast");
    bind(n.all_gather, "ncclAllGather");
    bind(n.reduce_scatter, "ncclReduceScatter");
    bind(n.send, "ncclSend");
    bind(n.recv, "ncclRecv");
    bind(n.group_start, "ncclGroupStart");
    bind(n.group_end, "ncclGroupEnd");
    return ok ? &n : nullptr;
  }();
  if (loaded == nullptr && why_not != nullptr) *why_not = error;
  return loaded;
}

const Nccl& nccl() {
  std::string why;
  const Nccl* n = load(&why);
  GLASS_CHECK(n != nullptr, "nccl backend: ", why,
              " (NCCL ships with the CUDA toolkit; without it use the gloo backend)");
  return *n;
}

void check(ncclResult_t result, const char* what) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  GLASS_CHECK(false, what, " failed: ", nccl().get_error_string(result));
}

ncclDataType_t nccl_dtype(ScalarType t, const char* op) {
  switch (t) {
    case ScalarType::Float32: return ncclFloat32;
    case ScalarType::Float64: return ncclFloat64;
    case ScalarType::Int32: return ncclInt32;
    case ScalarType::Int64: return ncclInt64;
    default: break;
  }
  GLASS_CHECK(false, op, ": the nccl backend reduces float32, float64, int32 and int64, not ",
              to_string(t));
  return ncclFloat32;
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return ncclSum;
    case ReduceOp::PRODUCT: return ncclProd;
    case ReduceOp::MAX: return ncclMax;
    case ReduceOp::MIN: return ncclMin;
    case ReduceOp::AVG: break;  // the base sends SUM and divides
  }
  GLASS_INTERNAL_ASSERT(false, "the nccl backend was asked for ", to_string(op));
  return ncclSum;
}

cudaStream_t as_cuda(cuda::StreamHandle s) { return static_cast<cudaStream_t>(s); }

}  // namespace

std::string nccl_version() {
  std::string why;
  const Nccl* n = load(&why);
  if (n == nullptr) return "not loadable: " + why;
  int v = 0;
  n->get_version(&v);
  // NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z since 2.9.
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

bool nccl_is_loadable(std::string* why_not) { return load(why_not) != nullptr; }

std::vector<uint8_t> nccl_unique_id() {
  ncclUniqueId id;
  check(nccl().get_unique_id(&id), "ncclGetUniqueId");
  return std::vector<uint8_t>(id.internal, id.internal + sizeof(id.internal));
}

// ---- [SECTION] the rendezvous ---------------------------------------------------------------

std::vector<uint8_t> exchange_unique_id(Store& store, int rank,
                                        const std::function<std::vector<uint8_t>()>& generate,
                                        std::chrono::milliseconds timeout, const std::string& key) {
  if (rank == 0) {
    std::vector<uint8_t> id = generate();
    store.set(key, id);
    return id;
  }
  store.wait({key}, timeout);
  return store.get(key);
}

// ---- [SECTION] the group ----------------------------------------------------------------------

NCCLProcessGroup::NCCLProcessGroup(std::shared_ptr<Store> store, int rank, int size,
                                   const Options& options, NCCLOptions nccl_options)
    : ProcessGroup(rank, size, options) {
  GLASS_CHECK(store != nullptr, "nccl backend: needs a store for the unique id");
  const Nccl& n = nccl();
  GLASS_CHECK(cuda::is_available() && !cuda::is_simulated(),
              "nccl backend: needs a GPU, and kCUDA here is ",
              cuda::is_available() ? "the simulated GPU" : "not available",
              " — use the gloo backend, which stages CUDA tensors through host memory");
  device_ = nccl_options.device;
  if (device_ < 0) {
    const char* local = std::getenv("LOCAL_RANK");
    device_ = local != nullptr ? std::atoi(local) : rank % cuda::device_count();
  }
  GLASS_CHECK(device_ >= 0 && device_ < cuda::device_count(), "nccl backend: rank ", rank,
              " wants cuda:", device_, " but this machine has ", cuda::device_count(),
              " GPU(s); run at most that many ranks per node (--nproc-per-node)");
  DeviceGuard guard(backend_device());
  auto join = [&](const std::string& key, ncclComm** comm) {
    std::vector<uint8_t> bytes =
        exchange_unique_id(*store, rank, nccl_unique_id, options.timeout, key);
    ncclUniqueId id;
    GLASS_CHECK(bytes.size() == sizeof(id.internal), "nccl backend: the unique id under '", key,
                "' has ", bytes.size(), " bytes, expected ", sizeof(id.internal),
                " (ranks built against different NCCL versions?)");
    std::memcpy(id.internal, bytes.data(), bytes.size());
    check(n.comm_init_rank(comm, size, id, rank), "ncclCommInitRank");
  };
  join("nccl/unique_id", &comm_);
  join("nccl/unique_id/p2p", &p2p_comm_);
  stream_ = cuda::getStreamFromPool(false, static_cast<cuda::DeviceIndex>(device_));
  p2p_stream_ = cuda::getStreamFromPool(false, static_cast<cuda::DeviceIndex>(device_));
  start();
}

NCCLProcessGroup::~NCCLProcessGroup() {
  stop();
  {
    std::lock_guard<std::mutex> lock(waiters_mutex_);
    for (Waiter& w : waiters_) w.thread.join();
  }
  const Nccl& n = nccl();
  if (aborted_) return;  // ncclCommAbort already freed both
  if (comm_ != nullptr) n.comm_destroy(comm_);
  if (p2p_comm_ != nullptr) n.comm_destroy(p2p_comm_);
}

Device NCCLProcessGroup::backend_device() const {
  return Device(kCUDA, static_cast<cuda::DeviceIndex>(device_));
}

std::shared_ptr<void> NCCLProcessGroup::capture_ready() {
  auto ready = std::make_shared<cuda::CUDAEvent>();
  ready->record(cuda::getCurrentCUDAStream(static_cast<cuda::DeviceIndex>(device_)));
  return ready;
}

void NCCLProcessGroup::order_after_inputs(const CollectiveContext& ctx) {
  if (ctx.ready) static_cast<cuda::CUDAEvent*>(ctx.ready.get())->block(*stream_);
  // The base staged the tensors (copies to the GPU, contiguous copies) on this thread's
  // current stream.
  cuda::CUDAEvent staged;
  staged.record(cuda::getCurrentCUDAStream(static_cast<cuda::DeviceIndex>(device_)));
  staged.block(*stream_);
}

void NCCLProcessGroup::wait_until_done(const cuda::CUDAStream& stream, ncclComm* comm,
                                       const char* what, std::chrono::milliseconds timeout) {
  const Nccl& n = nccl();
  cuda::CUDAEvent done;
  done.record(stream);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // The device gives no callback we could block on without also blocking on a peer that
  // never comes, so poll the event: spin briefly (most collectives finish in microseconds),
  // then back off to a millisecond.
  auto pause = std::chrono::microseconds(1);
  while (!done.query()) {
    ncclResult_t async = ncclSuccess;
    n.comm_get_async_error(comm, &async);
    const bool late = std::chrono::steady_clock::now() > deadline;
    if ((async != ncclSuccess && async != ncclInProgress) || late) {
      {
        std::lock_guard<std::mutex> lock(comm_mutex_);
        if (!aborted_) {
          n.comm_abort(comm_);
          n.comm_abort(p2p_comm_);
        }
        aborted_ = true;
      }
      GLASS_CHECK(!late, what, ": timed out after ", timeout.count(),
                  " ms waiting for the other ranks (the communicators are aborted; ",
                  "destroy this group)");
      GLASS_CHECK(false, what, ": ", n.get_error_string(async),
                  " (the communicators are aborted; destroy this group)");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

// Every collective: wait for its inputs, one NCCL call on the collective stream, then wait
// for the device to finish it.
#define GLASS_NCCL_COLLECTIVE(what, call)                                                \
  do {                                                                                   \
    DeviceGuard guard(backend_device());                                                 \
    GLASS_CHECK(!aborted_, what, ": this nccl group was aborted by an earlier failure"); \
    order_after_inputs(ctx);                                                             \
    check(call, "nccl " what);                                                           \
    wait_until_done(*stream_, comm_, what, ctx.timeout);                                 \
  } while (0)

void NCCLProcessGroup::run_allreduce(Tensor& t, ReduceOp op, const CollectiveContext& ctx) {
  const Nccl& n = nccl();
  GLASS_NCCL_COLLECTIVE("allreduce",
                        n.all_reduce(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()),
                                     nccl_dtype(t.scalar_type(), "allreduce"), nccl_op(op), comm_,
                                     as_cuda(stream_->stream())));
}

void NCCLProcessGroup::run_broadcast(Tensor& t, int root, const CollectiveContext& ctx) {
  const Nccl& n = nccl();
  // Moving bytes needs no dtype: any tensor goes as ncclUint8.
  GLASS_NCCL_COLLECTIVE("broadcast",
                        n.broadcast(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.nbytes()),
                                    ncclUint8, root, comm_, as_cuda(stream_->stream())));
}

void NCCLProcessGroup::run_allgather(Tensor& output, const Tensor& input,
                                     const CollectiveContext& ctx) {
  const Nccl& n = nccl();
  GLASS_NCCL_COLLECTIVE("allgather", n.all_gather(input.data_ptr(), output.data_ptr(),
                                                  static_cast<size_t>(input.nbytes()), ncclUint8,
                                                  comm_, as_cuda(stream_->stream())));
}

void NCCLProcessGroup::run_reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op,
                                          const CollectiveContext& ctx) {
  const Nccl& n = nccl();
  GLASS_NCCL_COLLECTIVE(
      "reduce_scatter",
      n.reduce_scatter(input.data_ptr(), output.data_ptr(), static_cast<size_t>(output.numel()),
                       nccl_dtype(output.scalar_type(), "reduce_scatter"), nccl_op(op), comm_,
                       as_cuda(stream_->stream())));
}

void NCCLProcessGroup::run_barrier(const CollectiveContext& ctx) {
  // NCCL has no barrier: an all-reduce of one number that every rank must join is one.
  Tensor one = ones({1}, TensorOptions().device(backend_device()));
  run_allreduce(one, ReduceOp::SUM, ctx);
}

std::shared_ptr<Work> NCCLProcessGroup::post_send(const Tensor& tensor, int dst, int tag,
                                                  std::chrono::milliseconds timeout) {
  std::vector<P2POp> ops{{P2POp::Kind::Send, tensor, dst, tag}};
  return post_batch(ops, timeout).at(0);
}

std::shared_ptr<Work> NCCLProcessGroup::post_recv(Tensor& tensor, int src, int tag,
                                                  std::chrono::milliseconds timeout) {
  std::vector<P2POp> ops{{P2POp::Kind::Recv, tensor, src, tag}};
  return post_batch(ops, timeout).at(0);
}

// NCCL matches sends and receives between a pair of ranks in the order they were issued; it
// has no tags, so messages with different tags between one pair must also be issued in
// matching order on both sides (PyTorch's NCCL backend has the same rule).
std::vector<std::shared_ptr<Work>> NCCLProcessGroup::post_batch(std::vector<P2POp>& ops,
                                                                std::chrono::milliseconds timeout) {
  const Nccl& n = nccl();
  DeviceGuard guard(backend_device());
  // The batch's tensors were written (or staged) on the caller's current stream.
  const cuda::CUDAStream stream = *p2p_stream_;
  {
    cuda::CUDAEvent inputs;
    inputs.record(cuda::getCurrentCUDAStream(static_cast<cuda::DeviceIndex>(device_)));
    inputs.block(stream);
  }
  {
    std::lock_guard<std::mutex> lock(comm_mutex_);
    GLASS_CHECK(!aborted_, "send/recv: this nccl group was aborted by an earlier failure");
    check(n.group_start(), "ncclGroupStart");
    for (P2POp& op : ops) {
      const size_t bytes = static_cast<size_t>(op.tensor.nbytes());
      if (op.kind == P2POp::Kind::Send)
        check(n.send(op.tensor.data_ptr(), bytes, ncclUint8, op.peer, p2p_comm_,
                     as_cuda(stream.stream())),
              "ncclSend");
      else
        check(n.recv(op.tensor.data_ptr(), bytes, ncclUint8, op.peer, p2p_comm_,
                     as_cuda(stream.stream())),
              "ncclRecv");
    }
    check(n.group_end(), "ncclGroupEnd");
  }
  std::vector<std::shared_ptr<Work>> works;
  for (const P2POp& op : ops)
    works.push_back(std::make_shared<Work>(op.kind == P2POp::Kind::Send ? "send" : "recv", 0,
                                           timeout, std::vector<Tensor>{op.tensor}));
  // One waiter per batch: the ops of a batch finish together, when the stream gets there.
  // Waiters that are done are joined here, so a long training run keeps only a few.
  std::lock_guard<std::mutex> lock(waiters_mutex_);
  std::erase_if(waiters_, [](Waiter& w) {
    if (!w.done->load()) return false;
    w.thread.join();
    return true;
  });
  auto done = std::make_shared<std::atomic<bool>>(false);
  waiters_.push_back({std::thread([this, works, stream, timeout, done] {
                        std::exception_ptr error;
                        try {
                          DeviceGuard guard(backend_device());
                          wait_until_done(stream, p2p_comm_, "send/recv", timeout);
                        } catch (...) {
                          error = std::current_exception();
                        }
                        for (auto& w : works) w->finish(error);
                        done->store(true);
                      }),
                      done});
  return works;
}

std::shared_ptr<ProcessGroup> make_nccl_group(std::shared_ptr<Store> store, int rank, int size,
                                              const ProcessGroup::Options& options) {
  return std::make_shared<NCCLProcessGroup>(std::move(store), rank, size, options);
}

}  // namespace glass::distributed
