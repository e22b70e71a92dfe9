// distributed/process_group.cpp — what every backend shares: checks, numbering, staging,
// the communication thread, AVG, events, the DETAIL fingerprint check and failure diagnosis.
//
// Invariant: a public method either throws (the arguments are wrong, or the group gave up;
// nothing was queued and no sequence number was used) or queues exactly one task and
// returns its Work; every task's Work completes exactly once — on the communication thread,
// in queue order, or at once for all of them when a backend gives up on the group
// (abandon_running_collective) — so stop(), which drains the queue, leaves no Work pending.
//
// [SECTION] debug level  [SECTION] argument checks  [SECTION] the communication thread
// [SECTION] collectives  [SECTION] default gather/scatter  [SECTION] point-to-point
#include "distributed/process_group.h"

#include <atomic>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/events.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/parallel.h"
#include "distributed/diagnosis.h"
#include "distributed/fingerprint.h"
#include "distributed/staging.h"

namespace glass::distributed {

// [SECTION] debug level ---------------------------------------------------------------

namespace {

DebugLevel read_debug_level() {
  const char* v = std::getenv("GLASS_DISTRIBUTED_DEBUG");
  if (v == nullptr) return DebugLevel::Off;
  const std::string s(v);
  if (s == "DETAIL") return DebugLevel::Detail;
  if (s == "INFO") return DebugLevel::Info;
  return DebugLevel::Off;
}

std::atomic<DebugLevel>& debug_level_slot() {
  static std::atomic<DebugLevel> level{read_debug_level()};
  return level;
}

}  // namespace

DebugLevel debug_level() { return debug_level_slot().load(std::memory_order_relaxed); }
void set_debug_level(DebugLevel level) { debug_level_slot().store(level); }

// [SECTION] argument checks -----------------------------------------------------------

namespace {

void check_one_tensor(const char* op, const std::vector<Tensor>& tensors) {
  GLASS_CHECK(tensors.size() == 1, op, ": expected one tensor per rank, got ", tensors.size());
}

void check_tensor(const char* op, const Tensor& t, const char* what = "tensor") {
  GLASS_CHECK(t.defined(), op, ": the ", what, " is undefined");
  GLASS_CHECK(is_supported_dtype(t.dtype()), op, ": the ", what, " has dtype ",
              dtype_name(t.dtype()),
              ", which collectives do not support (use float32, float64, int32 or int64)");
}

void check_root(const char* op, int64_t root, int size) {
  GLASS_CHECK(root >= 0 && root < size, op, ": root rank ", root,
              " is out of range for a group of size ", size);
}

void check_same_kind(const char* op, const Tensor& a, const char* a_name, const Tensor& b,
                     const char* b_name) {
  GLASS_CHECK(a.dtype() == b.dtype(), op, ": the ", a_name, " has dtype ", dtype_name(a.dtype()),
              " but the ", b_name, " has ", dtype_name(b.dtype()));
  GLASS_CHECK(a.device() == b.device(), op, ": the ", a_name, " is on ", a.device(), " but the ",
              b_name, " is on ", b.device());
}

void check_same_shape(const char* op, const Tensor& a, const char* a_name, const Tensor& b,
                      const char* b_name) {
  check_same_kind(op, a, a_name, b, b_name);
  GLASS_CHECK(a.sizes() == b.sizes(), op, ": the ", a_name, " has shape ", a.sizes(), " but the ",
              b_name, " has shape ", b.sizes());
}

// AVG is SUM followed by this: every backend sums, so AVG is the same bits everywhere.
// Integers divide truncating (as C++ does), which keeps the result an integer.
void divide_by(Tensor& t, int n) {
  NoGradGuard no_grad;
  if (t.is_floating_point()) {
    t.div_(static_cast<int64_t>(n));
    return;
  }
  Tensor host = t.is_cpu() ? t : t.cpu();
  dispatch_numeric(host.dtype(), "allreduce(AVG)", [&]<class T>() {
    T* p = host.data_ptr<T>();
    for (int64_t i = 0; i < host.numel(); ++i) p[i] = static_cast<T>(p[i] / static_cast<T>(n));
  });
  if (!host.is_same(t)) t.copy_(host);
}

}  // namespace

// [SECTION] the communication thread --------------------------------------------------

struct ProcessGroup::Task {
  const char* op = nullptr;  // a static string: events keep the pointer
  std::shared_ptr<Work> work;
  CollectiveContext ctx;
  Fingerprint fingerprint;
  std::function<void(const CollectiveContext&)> body;
};

struct ProcessGroup::Impl {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Task> queue;
  bool stopping = false;
  uint64_t next_seq = 0;
  std::atomic<uint64_t> next_p2p_seq{0};
  std::thread thread;
  // The task the thread runs now (null between tasks), and whether it was abandoned.
  std::shared_ptr<Work> running;
  const char* running_op = nullptr;
  uint64_t running_seq = 0;
  bool running_abandoned = false;
  std::string broken;  // why the group gave up (abandon_running_collective); "" while usable
};

ProcessGroup::ProcessGroup(int rank, int size, Options options)
    : rank_(rank), size_(size), options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  GLASS_CHECK(size >= 1, "ProcessGroup: the group size must be at least 1, got ", size);
  GLASS_CHECK(rank >= 0 && rank < size, "ProcessGroup: rank ", rank,
              " is out of range for a group of size ", size);
  GLASS_CHECK(options_.timeout.count() > 0, "ProcessGroup: the timeout must be positive, got ",
              options_.timeout.count(), " ms");
}

ProcessGroup::~ProcessGroup() { stop(); }

uint64_t ProcessGroup::sequence_number() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->next_seq;
}

void ProcessGroup::start() {
  GLASS_INTERNAL_ASSERT(!impl_->thread.joinable(), "ProcessGroup::start() called twice");
  // The communication thread draws its events on the timeline of the rank that made the
  // group (with the threads backend each rank is a thread, so it cannot be read later).
  const int event_rank = events::current_rank();
  impl_->thread = std::thread([this, event_rank] {
    events::ThreadRankGuard rank_guard(event_rank);
    // Its copies and reductions run single-threaded, so it never takes the intra-op pool
    // from backward's matmuls (which it is meant to overlap).
    ThreadSerialGuard serial;
    NoGradGuard no_grad;  // staging writes gradients and leaves in place
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(impl_->mutex);
        impl_->changed.wait(lock, [&] { return impl_->stopping || !impl_->queue.empty(); });
        if (impl_->queue.empty()) return;  // stopping, and everything queued is done
        task = std::move(impl_->queue.front());
        impl_->queue.pop_front();
      }
      run_task(task);
    }
  });
}

void ProcessGroup::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  GLASS_INTERNAL_ASSERT(std::this_thread::get_id() != impl_->thread.get_id(),
                        "a ProcessGroup was destroyed on its own communication thread (a Work "
                        "callback held the last reference to it)");
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->changed.notify_all();
  impl_->thread.join();
}

void ProcessGroup::run_task(Task& task) {
  if (events::enabled()) {
    events::Event e{events::Kind::CollectiveStep};
    e.name = task.op;
    e.value = static_cast<int64_t>(task.ctx.seq);
    events::publish(e);
  }
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->running = task.work;
    impl_->running_op = task.op;
    impl_->running_seq = task.ctx.seq;
    impl_->running_abandoned = false;
  }
  std::exception_ptr error;
  try {
    if (debug_level() == DebugLevel::Detail) check_fingerprints(task);
    task.body(task.ctx);
  } catch (const RanksAtFaultError& e) {
    error = std::make_exception_ptr(
        RanksAtFaultError(detail::str_cat(task.op, " #", task.ctx.seq, ": ", e.what())));
  } catch (const std::exception& e) {
    error = std::make_exception_ptr(Error(failure_message(task.op, task.ctx.seq, e.what())));
  } catch (...) {
    error = std::make_exception_ptr(
        Error(detail::str_cat(task.op, " #", task.ctx.seq, ": unknown exception")));
  }
  // The body's captures (the collective's tensors) go before the Work completes, so a tensor
  // its owner dropped is freed by the time wait() returns — not a moment later, when this
  // thread gets round to it, which would make the memory a rank holds depend on timing.
  task.body = nullptr;
  bool abandoned = false;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    abandoned = impl_->running_abandoned;
    impl_->running.reset();
    impl_->running_abandoned = false;
  }
  try {
    if (abandoned) {
      task.work->finish_if_pending(error);  // whoever came first decided
    } else {
      task.work->finish(error);
    }
  } catch (const std::exception& e) {
    // Nobody is there to catch it on this thread: a callback's bug must not end the process.
    std::cerr << "glass::distributed: a callback on " << task.op << " #" << task.ctx.seq
              << " threw: " << e.what() << "\n";
  }
}

std::string ProcessGroup::failure_message(const char* op, uint64_t seq,
                                          const std::string& what) const {
  std::string message = detail::str_cat(op, " #", seq, ": ", what);
  if (options_.store)
    message +=
        " — " + diagnose_collective(*options_.store, options_.group_name, rank_, size_, op, seq);
  return message;
}

std::optional<uint64_t> ProcessGroup::running_collective() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (!impl_->running) return std::nullopt;
  return impl_->running_seq;
}

bool ProcessGroup::abandon_running_collective(const std::string& reason) {
  std::shared_ptr<Work> work;
  const char* op = nullptr;
  uint64_t seq = 0;
  std::deque<Task> queued;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    // The group is done for: nothing new is queued, and what waits behind the stuck
    // collective fails now rather than at the transport's timeout.
    impl_->broken = reason;
    queued.swap(impl_->queue);
    if (impl_->running) {
      impl_->running_abandoned = true;
      work = impl_->running;
      op = impl_->running_op;
      seq = impl_->running_seq;
    }
  }
  // Outside the lock: the diagnosis waits on the store, and callbacks may queue collectives.
  if (work)
    work->finish_if_pending(std::make_exception_ptr(Error(failure_message(op, seq, reason))));
  for (Task& task : queued) {
    task.work->finish(std::make_exception_ptr(Error(
        detail::str_cat(task.op, " #", task.ctx.seq, ": the ", backend_name(), " process group '",
                        options_.group_name, "' is unusable: ", reason))));
  }
  return work != nullptr;
}

bool ProcessGroup::transport_stuck() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->running != nullptr && impl_->running_abandoned;
}

// Every rank all-gathers its fingerprint through the backend itself, so a disagreement is
// found before the real collective reads the wrong number of bytes.
void ProcessGroup::check_fingerprints(const Task& task) {
  const Fingerprint& mine = task.fingerprint;
  const int64_t n = static_cast<int64_t>(mine.size());
  Tensor local = empty({n}, TensorOptions(kInt64));
  std::copy(mine.begin(), mine.end(), local.data_ptr<int64_t>());
  Tensor wire_in = stage_in(local, backend_device());
  Tensor wire_out = empty({size_ * n}, TensorOptions(kInt64).device(backend_device()));
  run_allgather(wire_out, wire_in, task.ctx);
  Tensor host = wire_out.cpu();
  const int64_t* p = host.data_ptr<int64_t>();
  std::string why = compare_fingerprints(std::vector<int64_t>(p, p + size_ * n), size_);
  if (!why.empty()) throw RanksAtFaultError(why);
}

std::shared_ptr<Work> ProcessGroup::enqueue(const char* op, std::chrono::milliseconds timeout,
                                            std::vector<Tensor> outputs, const Tensor& described,
                                            std::function<void(const CollectiveContext&)> body) {
  GLASS_INTERNAL_ASSERT(impl_->thread.joinable(), backend_name(),
                        " process group: start() was not called");
  if (timeout == kUnsetTimeout) timeout = options_.timeout;
  Task task{
      op, nullptr, {0, timeout, capture_ready()}, make_fingerprint(op, described), std::move(body)};
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    GLASS_CHECK(!impl_->stopping, op, ": the ", backend_name(), " process group '",
                options_.group_name, "' is shutting down");
    GLASS_CHECK(impl_->broken.empty(), op, ": the ", backend_name(), " process group '",
                options_.group_name, "' is unusable: ", impl_->broken);
    task.ctx.seq = impl_->next_seq++;
    task.work = std::make_shared<Work>(op, task.ctx.seq, timeout, std::move(outputs));
    if (options_.store) {
      task.work->set_timeout_diagnosis([store = options_.store, group = options_.group_name,
                                        rank = rank_, size = size_, name = std::string(op),
                                        seq = task.ctx.seq] {
        return diagnose_collective(*store, group, rank, size, name, seq);
      });
    }
    impl_->queue.push_back(task);
  }
  impl_->changed.notify_all();
  return task.work;
}

// [SECTION] collectives ---------------------------------------------------------------

std::shared_ptr<Work> ProcessGroup::allreduce(std::vector<Tensor>& tensors,
                                              const AllreduceOptions& opts) {
  check_one_tensor("allreduce", tensors);
  return allreduce(tensors[0], opts);
}

std::shared_ptr<Work> ProcessGroup::allreduce(Tensor& tensor, const AllreduceOptions& opts) {
  check_tensor("allreduce", tensor);
  const ReduceOp op = opts.reduceOp;
  return enqueue("allreduce", opts.timeout, {tensor}, tensor,
                 [this, tensor, op](const CollectiveContext& ctx) {
                   Tensor wire = stage_in(tensor, backend_device());
                   run_allreduce(wire, op == ReduceOp::AVG ? ReduceOp::SUM : op, ctx);
                   if (op == ReduceOp::AVG) divide_by(wire, size_);
                   unstage(tensor, wire);
                 });
}

std::shared_ptr<Work> ProcessGroup::broadcast(std::vector<Tensor>& tensors,
                                              const BroadcastOptions& opts) {
  check_one_tensor("broadcast", tensors);
  GLASS_CHECK(opts.rootTensor == 0, "broadcast: rootTensor must be 0 (one tensor per rank), got ",
              opts.rootTensor);
  return broadcast(tensors[0], opts);
}

std::shared_ptr<Work> ProcessGroup::broadcast(Tensor& tensor, const BroadcastOptions& opts) {
  check_tensor("broadcast", tensor);
  check_root("broadcast", opts.rootRank, size_);
  const int root = static_cast<int>(opts.rootRank);
  return enqueue("broadcast", opts.timeout, {tensor}, tensor,
                 [this, tensor, root](const CollectiveContext& ctx) {
                   Tensor wire = stage_in(tensor, backend_device());
                   run_broadcast(wire, root, ctx);
                   unstage(tensor, wire);
                 });
}

namespace {

// The shapes all_gather_into_tensor accepts for `size` copies of `one` (and reduce_scatter
// for its input): concatenated along dim 0, [size * n0, ...], or stacked, [size, n0, ...].
bool holds_copies(IntArrayRef all, IntArrayRef one, int64_t size) {
  std::vector<int64_t> stacked{size};
  stacked.insert(stacked.end(), one.begin(), one.end());
  if (all == IntArrayRef(stacked)) return true;
  if (one.empty()) return false;
  std::vector<int64_t> concatenated(one.begin(), one.end());
  concatenated[0] *= size;
  return all == IntArrayRef(concatenated);
}

}  // namespace

std::shared_ptr<Work> ProcessGroup::allgather(Tensor& output, const Tensor& input,
                                              const AllgatherOptions& opts) {
  check_tensor("allgather", input, "input");
  check_tensor("allgather", output, "output");
  check_same_kind("allgather", output, "output", input, "input");
  GLASS_CHECK(holds_copies(output.sizes(), input.sizes(), size_),
              "allgather: the output has shape ", output.sizes(), " but must hold ", size_,
              " copies of the input's ", input.sizes(),
              ", concatenated along dim 0 or stacked in a new dim 0");
  return enqueue("allgather", opts.timeout, {output}, input,
                 [this, output, input](const CollectiveContext& ctx) {
                   Tensor wire_in = stage_in(input, backend_device());
                   Tensor wire_out = stage_out_buffer(output, backend_device());
                   run_allgather(wire_out, wire_in, ctx);
                   unstage(output, wire_out);
                 });
}

std::shared_ptr<Work> ProcessGroup::reduce_scatter(Tensor& output, const Tensor& input,
                                                   const ReduceScatterOptions& opts) {
  check_tensor("reduce_scatter", input, "input");
  check_tensor("reduce_scatter", output, "output");
  check_same_kind("reduce_scatter", output, "output", input, "input");
  GLASS_CHECK(holds_copies(input.sizes(), output.sizes(), size_),
              "reduce_scatter: the input has shape ", input.sizes(), " but must hold ", size_,
              " blocks of the output's ", output.sizes(),
              ", concatenated along dim 0 or stacked in a new dim 0");
  const ReduceOp op = opts.reduceOp;
  return enqueue("reduce_scatter", opts.timeout, {output}, output,
                 [this, output, input, op](const CollectiveContext& ctx) {
                   Tensor wire_in = stage_in(input, backend_device());
                   Tensor wire_out = stage_out_buffer(output, backend_device());
                   run_reduce_scatter(wire_out, wire_in, op == ReduceOp::AVG ? ReduceOp::SUM : op,
                                      ctx);
                   if (op == ReduceOp::AVG) divide_by(wire_out, size_);
                   unstage(output, wire_out);
                 });
}

std::shared_ptr<Work> ProcessGroup::gather(std::vector<Tensor>& outputs, const Tensor& input,
                                           const GatherOptions& opts) {
  check_tensor("gather", input, "input");
  check_root("gather", opts.rootRank, size_);
  const int root = static_cast<int>(opts.rootRank);
  if (rank_ == root) {
    GLASS_CHECK(static_cast<int>(outputs.size()) == size_, "gather: the root (rank ", root,
                ") needs one output tensor per rank (", size_, "), got ", outputs.size());
    for (const Tensor& out : outputs) {
      check_tensor("gather", out, "output");
      check_same_shape("gather", out, "output", input, "input");
    }
  } else {
    GLASS_CHECK(outputs.empty(), "gather: rank ", rank_, " is not the root (", root,
                "), so its output list must be empty, got ", outputs.size(), " tensors");
  }
  return enqueue("gather", opts.timeout, outputs, input,
                 [this, outputs, input, root](const CollectiveContext& ctx) {
                   Tensor wire_in = stage_in(input, backend_device());
                   std::vector<Tensor> wire_out;
                   for (const Tensor& out : outputs)
                     wire_out.push_back(stage_out_buffer(out, backend_device()));
                   run_gather(wire_out, wire_in, root, ctx);
                   for (size_t r = 0; r < outputs.size(); ++r) unstage(outputs[r], wire_out[r]);
                 });
}

std::shared_ptr<Work> ProcessGroup::scatter(Tensor& output, const std::vector<Tensor>& inputs,
                                            const ScatterOptions& opts) {
  check_tensor("scatter", output, "output");
  check_root("scatter", opts.rootRank, size_);
  const int root = static_cast<int>(opts.rootRank);
  if (rank_ == root) {
    GLASS_CHECK(static_cast<int>(inputs.size()) == size_, "scatter: the root (rank ", root,
                ") needs one input tensor per rank (", size_, "), got ", inputs.size());
    for (const Tensor& in : inputs) {
      check_tensor("scatter", in, "input");
      check_same_shape("scatter", in, "input", output, "output");
    }
  } else {
    GLASS_CHECK(inputs.empty(), "scatter: rank ", rank_, " is not the root (", root,
                "), so its input list must be empty, got ", inputs.size(), " tensors");
  }
  return enqueue("scatter", opts.timeout, {output}, output,
                 [this, output, inputs, root](const CollectiveContext& ctx) {
                   std::vector<Tensor> wire_in;
                   for (const Tensor& in : inputs)
                     wire_in.push_back(stage_in(in, backend_device()));
                   Tensor wire_out = stage_out_buffer(output, backend_device());
                   run_scatter(wire_out, wire_in, root, ctx);
                   unstage(output, wire_out);
                 });
}

std::shared_ptr<Work> ProcessGroup::barrier(const BarrierOptions& opts) {
  return enqueue("barrier", opts.timeout, {}, Tensor(),
                 [this](const CollectiveContext& ctx) { run_barrier(ctx); });
}

// [SECTION] default gather/scatter ----------------------------------------------------

// gather = allgather, of which the root keeps everything and the others nothing: simple,
// and every backend has allgather. It moves size× the bytes a real gather would.
void ProcessGroup::run_gather(std::vector<Tensor>& outputs, const Tensor& input, int root,
                              const CollectiveContext& ctx) {
  const int64_t n = input.numel();
  Tensor all = empty({size_ * n}, TensorOptions(input.dtype()).device(backend_device()));
  run_allgather(all, input, ctx);
  if (rank_ != root) return;
  for (int r = 0; r < size_; ++r) outputs[r].view({-1}).copy_(all.narrow(0, r * n, n));
}

// scatter = the root broadcasts every rank's block; each rank keeps its own.
void ProcessGroup::run_scatter(Tensor& output, const std::vector<Tensor>& inputs, int root,
                               const CollectiveContext& ctx) {
  const int64_t n = output.numel();
  Tensor all = empty({size_ * n}, TensorOptions(output.dtype()).device(backend_device()));
  if (rank_ == root)
    for (int r = 0; r < size_; ++r) all.narrow(0, r * n, n).copy_(inputs[r].reshape({-1}));
  run_broadcast(all, root, ctx);
  output.view({-1}).copy_(all.narrow(0, rank_ * n, n));
}

// [SECTION] point-to-point ------------------------------------------------------------

namespace {

void check_peer(const char* op, int peer, int rank, int size, int tag) {
  GLASS_CHECK(peer >= 0 && peer < size, op, ": peer rank ", peer,
              " is out of range for a group of size ", size);
  GLASS_CHECK(peer != rank, op, ": rank ", rank, " cannot ", op, " to itself");
  GLASS_CHECK(tag >= 0, op, ": the tag must be >= 0, got ", tag);
}

}  // namespace

std::shared_ptr<Work> ProcessGroup::send(std::vector<Tensor>& tensors, int dst_rank, int tag) {
  check_one_tensor("send", tensors);
  std::vector<P2POp> ops{{P2POp::Kind::Send, tensors[0], dst_rank, tag}};
  return batch_isend_irecv(ops).at(0);
}

std::shared_ptr<Work> ProcessGroup::recv(std::vector<Tensor>& tensors, int src_rank, int tag) {
  check_one_tensor("recv", tensors);
  std::vector<P2POp> ops{{P2POp::Kind::Recv, tensors[0], src_rank, tag}};
  return batch_isend_irecv(ops).at(0);
}

// The caller's Work wraps the transport's, so staging can copy back before it completes
// and p2p ops get their own numbers ("recv #4").
std::vector<std::shared_ptr<Work>> ProcessGroup::batch_isend_irecv(std::vector<P2POp>& ops) {
  std::vector<P2POp> wire_ops;
  std::vector<std::shared_ptr<Work>> works;
  for (const P2POp& op : ops) {
    const bool is_send = op.kind == P2POp::Kind::Send;
    const char* name = is_send ? "send" : "recv";
    check_tensor(name, op.tensor);
    check_peer(name, op.peer, rank_, size_, op.tag);
    Tensor wire = is_send ? stage_in(op.tensor, backend_device())
                          : stage_out_buffer(op.tensor, backend_device());
    wire_ops.push_back({op.kind, wire, op.peer, op.tag});
    works.push_back(std::make_shared<Work>(name, impl_->next_p2p_seq++, options_.timeout,
                                           std::vector<Tensor>{op.tensor}));
  }
  // Posted before the transport sees them, so a trace always has a message's start first.
  const bool traced = events::enabled();
  std::vector<events::Event> messages;
  if (traced) {
    for (size_t i = 0; i < ops.size(); ++i) {
      messages.push_back({.kind = events::Kind::MessagePosted,
                          .name = ops[i].kind == P2POp::Kind::Send ? "send" : "recv",
                          .bytes = ops[i].tensor.nbytes(),
                          .value = ops[i].peer,
                          .ptr = works[i].get(),
                          .rank = events::current_rank()});
      events::publish(messages.back());
      messages.back().kind = events::Kind::MessageDone;
    }
  }
  std::vector<std::shared_ptr<Work>> transport = post_batch(wire_ops, options_.timeout);
  GLASS_INTERNAL_ASSERT(transport.size() == ops.size(), backend_name(), ": post_batch returned ",
                        transport.size(), " works for ", ops.size(), " ops");
  for (size_t i = 0; i < ops.size(); ++i) {
    // The transport's Work completes on its own thread (gloo's loop, MPI's progress thread,
    // the sending rank's thread), or at once, here, inside then(): the event carries the
    // poster's rank, stamped above.
    std::optional<events::Event> done_event;
    if (traced) done_event = messages[i];
    if (ops[i].kind == P2POp::Kind::Send) {
      transport[i]->then([work = works[i], wire = wire_ops[i].tensor, done_event](Work& done) {
        if (done_event) events::publish(*done_event);
        work->finish(done.exception());
      });
    } else {
      transport[i]->then([work = works[i], user = ops[i].tensor, wire = wire_ops[i].tensor,
                          done_event](Work& done) {
        std::exception_ptr error = done.exception();
        if (!error) {
          try {
            unstage(user, wire);
          } catch (...) {
            error = std::current_exception();
          }
        }
        if (done_event) events::publish(*done_event);
        work->finish(error);
      });
    }
  }
  return works;
}

std::vector<std::shared_ptr<Work>> ProcessGroup::post_batch(std::vector<P2POp>& ops,
                                                            std::chrono::milliseconds timeout) {
  std::vector<std::shared_ptr<Work>> works;
  for (P2POp& op : ops)
    works.push_back(op.kind == P2POp::Kind::Send ? post_send(op.tensor, op.peer, op.tag, timeout)
                                                 : post_recv(op.tensor, op.peer, op.tag, timeout));
  return works;
}

}  // namespace glass::distributed
