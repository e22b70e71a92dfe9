// distributed/backends/gloo.cpp — rendezvous and collectives of the gloo backend.
//
// Each run_* hook is one call of gloo's "new style" API (gloo::allreduce(AllreduceOptions)
// and friends), tagged with the collective's sequence number and bounded by its timeout.
// Debian's gloo 0.5 has no new-style reduce-scatter; run_reduce_scatter builds one from
// allreduce (see there). What gloo throws is turned into a glass::Error by call_gloo().
// [SECTION] Failures also holds the watchdog that notices a dead peer gloo misses.
#include "distributed/backends/gloo.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/common/logging.h>
#include <gloo/gather.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>

#include "core/error.h"

namespace glass::distributed {
namespace {

// [SECTION] Rendezvous: glass's Store seen through gloo's Store interface.
//
// connectFullMesh() publishes this rank's addresses under its rank number and reads
// everyone else's. The "gloo/" prefix keeps those keys apart from the store's other users.
class StoreForGloo final : public gloo::rendezvous::Store {
 public:
  StoreForGloo(glass::distributed::Store& store, std::chrono::milliseconds timeout)
      : store_(store), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    store_.set(prefixed(key), std::vector<uint8_t>(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    store_.wait({prefixed(key)}, timeout_);
    const std::vector<uint8_t> value = store_.get(prefixed(key));
    return std::vector<char>(value.begin(), value.end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    std::vector<std::string> full;
    for (const auto& key : keys) full.push_back(prefixed(key));
    store_.wait(full, timeout);
  }

 private:
  static std::string prefixed(const std::string& key) { return "gloo/" + key; }

  glass::distributed::Store& store_;
  std::chrono::milliseconds timeout_;
};

// A peer that dies leaves its sockets closed, and gloo's next write to one raises SIGPIPE,
// whose default action ends this rank silently, before gloo can report EPIPE as an error
// that names the dead rank. Python ignores SIGPIPE at startup, so every PyTorch job runs
// this way; a C++ program gets the same here, unless it chose its own handling. (Gloo
// writes from its own event-loop thread and from whichever thread posts a send, so a
// per-thread signal mask would not cover it.)
void ignore_sigpipe_unless_handled() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
    std::signal(SIGPIPE, SIG_IGN);
}

// "connection to rank 1 closed: it exited", or "... ranks 1, 3 ...: they exited".
std::string connections_closed(const std::vector<int>& exited) {
  if (exited.empty()) return "connection to a peer lost";
  std::string ranks;
  for (int r : exited) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  return detail::str_cat("connection to rank", exited.size() > 1 ? "s " : " ", ranks,
                         " closed: ", exited.size() > 1 ? "they" : "it", " exited");
}

bool is_loopback(const std::string& addr) {
  return addr == "localhost" || addr == "::1" || addr.rfind("127.", 0) == 0;
}

// [SECTION] Element types and reductions.
//
// Reductions need the element type; everything else moves bytes, so it uses uint8_t and
// works for every dtype (bool included).
template <class Fn>
void with_reducible_type(ScalarType dtype, ReduceOp op, Fn&& fn) {
  switch (dtype) {
    case kFloat: fn(float{}); return;
    case kDouble: fn(double{}); return;
    case kInt: fn(int32_t{}); return;
    case kLong: fn(int64_t{}); return;
    default:
      GLASS_CHECK(false, "gloo: cannot reduce (", to_string(op), ") tensors of dtype ",
                  to_string(dtype), "; gloo reduces float32, float64, int32 and int64");
  }
}

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

// ProcessGroup sends AVG as SUM and divides afterwards, the same for every backend.
template <class T>
ReduceFn reduce_function(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return static_cast<ReduceFn>(&gloo::sum<T>);
    case ReduceOp::PRODUCT: return static_cast<ReduceFn>(&gloo::product<T>);
    case ReduceOp::MAX: return static_cast<ReduceFn>(&gloo::max<T>);
    case ReduceOp::MIN: return static_cast<ReduceFn>(&gloo::min<T>);
    case ReduceOp::AVG: break;
  }
  GLASS_INTERNAL_ASSERT(false, "the gloo backend was asked for ", to_string(op),
                        "; ProcessGroup should have turned AVG into SUM");
  return nullptr;
}

uint8_t* bytes_of(const Tensor& t) { return static_cast<uint8_t*>(t.data_ptr()); }
size_t nbytes_of(const Tensor& t) { return static_cast<size_t>(t.nbytes()); }
uint32_t tag_of(uint64_t seq) { return static_cast<uint32_t>(seq); }

// Allreduce of n elements of type T at data, in place.
template <class T>
void gloo_allreduce(const std::shared_ptr<gloo::Context>& context, T* data, size_t n, ReduceOp op,
                    uint64_t seq, std::chrono::milliseconds timeout) {
  gloo::AllreduceOptions opts(context);
  opts.setOutput(data, n);
  opts.setReduceFunction(reduce_function<T>(op));
  opts.setTag(tag_of(seq));
  opts.setTimeout(timeout);
  gloo::allreduce(opts);
}

}  // namespace

// [SECTION] Construction.

GlooOptions GlooOptions::from_env() {
  GlooOptions options;
  if (const char* hostname = std::getenv("GLASS_GLOO_HOSTNAME"); hostname && *hostname) {
    options.hostname = hostname;
  } else if (const char* master = std::getenv("MASTER_ADDR"); master && !is_loopback(master)) {
    // Peers on other machines must reach us: listen on the address our name resolves to.
    char name[256] = {};
    GLASS_CHECK(gethostname(name, sizeof(name) - 1) == 0, "gloo: gethostname() failed (",
                std::strerror(errno),
                "); set GLASS_GLOO_HOSTNAME to the address this rank should listen on");
    options.hostname = name;
  }
  return options;
}

GlooProcessGroup::GlooProcessGroup(std::shared_ptr<Store> store, int rank, int size,
                                   const ProcessGroup::Options& options, GlooOptions gloo_options)
    : ProcessGroup(rank, size, options), gloo_options_(std::move(gloo_options)) {
  GLASS_CHECK(store != nullptr, "gloo: rank ", rank, " of ", size,
              " was given no store to meet the other ranks through");
  const std::string where = detail::str_cat("gloo: rank ", rank, " of ", size, " (listening on ",
                                            gloo_options_.hostname, ") could not connect: ");
  ignore_sigpipe_unless_handled();
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = gloo_options_.hostname;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(options.timeout);
    StoreForGloo rendezvous(*store, options.timeout);
    context->connectFullMesh(rendezvous, device);
    context_ = std::move(context);
  } catch (const gloo::EnforceNotMet& e) {
    detail::throw_error(where + e.what());
  } catch (const std::exception& e) {
    // glass::Error from the store (a missing rank names its key and the timeout) or
    // gloo::IoException from the transport (an address that does not resolve or bind).
    detail::throw_error(where + e.what());
  }
  start();
  if (options.store && size > 1) watchdog_ = std::thread([this] { watch_for_dead_peers(); });
}

GlooProcessGroup::~GlooProcessGroup() {
  if (watchdog_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(watch_mutex_);
      watch_stopping_ = true;
    }
    watch_wake_.notify_all();
    // A then() callback of the Work the watchdog failed may drop the last reference to this
    // group; the watchdog touches nothing after that, so it is let go rather than joined.
    if (watchdog_.get_id() == std::this_thread::get_id()) {
      watchdog_.detach();
    } else {
      watchdog_.join();
    }
  }
  stop();  // no collective runs past this line
  abandon_pending_p2p();
}

std::shared_ptr<ProcessGroup> make_gloo_group(std::shared_ptr<Store> store, int rank, int size,
                                              const ProcessGroup::Options& options) {
  return std::make_shared<GlooProcessGroup>(std::move(store), rank, size, options,
                                            GlooOptions::from_env());
}

// [SECTION] Failures.

void GlooProcessGroup::call_gloo(std::chrono::milliseconds timeout,
                                 const std::function<void()>& fn) const {
  if (const std::string why = broken_reason(); !why.empty())
    detail::throw_error("the group is unusable: " + why);
  try {
    fn();
  } catch (const gloo::IoException& e) {
    // A peer is gone or silent. gloo has already poisoned the failed pair; close the rest so
    // ranks that wait on us (not on the dead peer) learn of the failure now, not at their
    // timeout. The group is unusable either way.
    context_->closeConnections();
    detail::throw_error(explain_failure(e.what(), timeout));
  } catch (const gloo::EnforceNotMet& e) {
    detail::throw_error(std::string("gloo rejected the call (") + e.what() + ")");
  } catch (const gloo::Exception& e) {
    detail::throw_error(std::string("gloo failed (") + e.what() + ")");
  }
}

std::string GlooProcessGroup::explain_failure(const std::string& gloo_message,
                                              std::chrono::milliseconds timeout) const {
  const std::string quoted = " (gloo: " + gloo_message + ")";
  if (gloo_message.find("Timed out") != std::string::npos) {
    return detail::str_cat("timed out after ", timeout.count(), " ms waiting for a peer", quoted);
  }
  if (gloo_message.find("Application timeout") != std::string::npos) {
    return "the group is unusable: an earlier operation on it timed out" + quoted;
  }
  return connections_closed(exited_ranks()) + quoted;
}

std::vector<int> GlooProcessGroup::exited_ranks() const {
  const std::shared_ptr<Store>& store = options().store;
  if (!store) return {};
  // The store hears of an exit from its own connection to the dead process, usually a
  // moment after gloo did: give it a short, bounded grace period before giving up.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  std::vector<int> exited;
  try {
    while (exited.empty()) {
      for (int r = 0; r < size(); ++r) {
        if (r != rank() && store->check({"glass/exited/" + std::to_string(r)})) {
          exited.push_back(r);
        }
      }
      if (!exited.empty() || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a diagnosis poll
    }
  } catch (const std::exception&) {
    // The store's host may have died too; the message then says what gloo said.
  }
  return exited;
}

std::string GlooProcessGroup::broken_reason() const {
  std::lock_guard<std::mutex> lock(watch_mutex_);
  return broken_;
}

// gloo signals a connection's failure to the receives it has queued and the sends it has
// posted, but not to the receive whose message it is reading when the peer dies: that one
// waits out the whole timeout (30 minutes by default). The store learns of the death from its
// own connection to the dead process ("glass/exited/any", set by init_process_group), so
// this thread asks it — only while one collective has run for more than a tick (every
// kWatchTick after that), so a job of short collectives never touches the store.
void GlooProcessGroup::watch_for_dead_peers() {
  std::optional<uint64_t> seen;  // the collective running at the last tick
  bool suspect = false;          // a rank exited while the same collective kept running
  std::chrono::steady_clock::time_point suspect_since{};
  std::unique_lock<std::mutex> lock(watch_mutex_);
  for (;;) {
    if (watch_wake_.wait_for(lock, kWatchTick, [&] { return watch_stopping_; })) return;
    const std::optional<uint64_t> running = running_collective();
    const bool stalled = running.has_value() && running == seen;
    seen = running;
    if (!stalled) {
      suspect = false;
      continue;
    }
    lock.unlock();
    bool someone_exited = false;
    try {
      someone_exited = options().store->check({"glass/exited/any"});
    } catch (const std::exception&) {
      // The store's host is gone too; gloo's own timeout will end the collective.
    }
    lock.lock();
    if (!someone_exited) continue;
    const auto now = std::chrono::steady_clock::now();
    if (!suspect) {
      suspect = true;
      suspect_since = now;
    }
    if (now - suspect_since < kExitGrace) continue;
    lock.unlock();
    give_up_on_dead_peer();
    return;  // the group is unusable: there is nothing left to watch
  }
}

void GlooProcessGroup::give_up_on_dead_peer() {
  // A then() callback of a Work failed below may drop the last reference to this group:
  // keep it alive until this function is done with it (the destructor then runs here).
  const std::shared_ptr<ProcessGroup> keep = weak_from_this().lock();
  const std::string reason = connections_closed(exited_ranks()) +
                             detail::str_cat(" (recorded by the store; gloo was still waiting ",
                                             kExitGrace.count(), " ms later)");
  {
    std::lock_guard<std::mutex> lock(watch_mutex_);
    broken_ = reason;
  }
  // The collective's failure first, so it carries this message whichever thread wakes first.
  std::list<std::shared_ptr<PendingP2P>> pending;
  {
    std::lock_guard<std::mutex> lock(p2p_mutex_);
    pending = p2p_;
  }
  abandon_running_collective(reason);
  // Closed connections deliver nothing more into our tensors, and wake whatever gloo can.
  context_->closeConnections();
  abort_pending_p2p_waits(pending);
}

// [SECTION] Collectives.

void GlooProcessGroup::run_allreduce(Tensor& tensor, ReduceOp op, const CollectiveContext& ctx) {
  if (tensor.numel() == 0) return;
  const auto n = static_cast<size_t>(tensor.numel());
  with_reducible_type(tensor.dtype(), op, [&](auto zero) {
    using T = decltype(zero);
    T* data = static_cast<T*>(tensor.data_ptr());
    call_gloo(ctx.timeout, [&] { gloo_allreduce(context_, data, n, op, ctx.seq, ctx.timeout); });
  });
}

void GlooProcessGroup::run_broadcast(Tensor& tensor, int root, const CollectiveContext& ctx) {
  if (tensor.numel() == 0) return;
  call_gloo(ctx.timeout, [&] {
    gloo::BroadcastOptions opts(context_);
    opts.setOutput(bytes_of(tensor), nbytes_of(tensor));
    opts.setRoot(root);
    opts.setTag(tag_of(ctx.seq));
    opts.setTimeout(ctx.timeout);
    gloo::broadcast(opts);
  });
}

void GlooProcessGroup::run_allgather(Tensor& output, const Tensor& input,
                                     const CollectiveContext& ctx) {
  if (input.numel() == 0) return;
  call_gloo(ctx.timeout, [&] {
    gloo::AllgatherOptions opts(context_);
    opts.setInput(bytes_of(input), nbytes_of(input));
    opts.setOutput(bytes_of(output), nbytes_of(output));
    opts.setTag(tag_of(ctx.seq));
    opts.setTimeout(ctx.timeout);
    gloo::allgather(opts);
  });
}

// Debian's gloo 0.5 has reduce-scatter only as the old-style ReduceScatterHalvingDoubling
// class, which sets up its own pair buffers (a handshake with every peer) on each
// construction, so one object per call would be slow, and caching one per shape is more
// machinery than this backend should carry. Instead: allreduce a copy of the whole input
// and keep this rank's block. Simple and exact (every rank gets the same reduction gloo's
// allreduce computes), at twice the ideal traffic — a ring allreduce *is* a reduce-scatter
// followed by an allgather, and we throw the allgather's result away. DDP's hot path is
// allreduce and pays nothing; FSDP and ZeRO stage 2 reduce-scatter their gradients every
// step, and over gloo they move the bytes of an allreduce for it.
void GlooProcessGroup::run_reduce_scatter(Tensor& output, const Tensor& input, ReduceOp op,
                                          const CollectiveContext& ctx) {
  if (output.numel() == 0) return;
  const auto n = static_cast<size_t>(input.numel());
  const size_t block = static_cast<size_t>(output.numel());
  with_reducible_type(input.dtype(), op, [&](auto zero) {
    using T = decltype(zero);
    const T* in = static_cast<const T*>(input.data_ptr());
    std::vector<T> whole(in, in + n);  // the input is const: reduce a copy
    call_gloo(ctx.timeout,
              [&] { gloo_allreduce(context_, whole.data(), n, op, ctx.seq, ctx.timeout); });
    T* out = static_cast<T*>(output.data_ptr());
    std::memcpy(out, whole.data() + static_cast<size_t>(rank()) * block, block * sizeof(T));
  });
}

void GlooProcessGroup::run_barrier(const CollectiveContext& ctx) {
  call_gloo(ctx.timeout, [&] {
    gloo::BarrierOptions opts(context_);
    opts.setTag(tag_of(ctx.seq));
    opts.setTimeout(ctx.timeout);
    gloo::barrier(opts);
  });
}

// gloo gathers into one buffer of size() blocks on the root; the outputs are separate
// tensors, so the root receives into scratch and copies out.
void GlooProcessGroup::run_gather(std::vector<Tensor>& outputs, const Tensor& input, int root,
                                  const CollectiveContext& ctx) {
  if (input.numel() == 0) return;
  const size_t block = nbytes_of(input);
  std::vector<uint8_t> gathered(rank() == root ? block * static_cast<size_t>(size()) : 0);
  call_gloo(ctx.timeout, [&] {
    gloo::GatherOptions opts(context_);
    opts.setInput(bytes_of(input), block);
    if (rank() == root) opts.setOutput(gathered.data(), gathered.size());
    opts.setRoot(root);
    opts.setTag(tag_of(ctx.seq));
    opts.setTimeout(ctx.timeout);
    gloo::gather(opts);
  });
  if (rank() != root) return;
  for (int r = 0; r < size(); ++r) {
    std::memcpy(bytes_of(outputs[static_cast<size_t>(r)]),
                gathered.data() + static_cast<size_t>(r) * block, block);
  }
}

void GlooProcessGroup::run_scatter(Tensor& output, const std::vector<Tensor>& inputs, int root,
                                   const CollectiveContext& ctx) {
  if (output.numel() == 0) return;
  call_gloo(ctx.timeout, [&] {
    gloo::ScatterOptions opts(context_);
    if (rank() == root) {
      std::vector<uint8_t*> blocks;
      for (const Tensor& t : inputs) blocks.push_back(bytes_of(t));
      opts.setInputs(blocks, nbytes_of(output));
    }
    opts.setOutput(bytes_of(output), nbytes_of(output));
    opts.setRoot(root);
    opts.setTag(tag_of(ctx.seq));
    opts.setTimeout(ctx.timeout);
    gloo::scatter(opts);
  });
}

}  // namespace glass::distributed
