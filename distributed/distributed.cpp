// distributed/distributed.cpp — the default group: backends by name, init_process_group,
// destroy_process_group and new_group. (The free functions that run on it are in
// distributed_functions.cpp.)
//
// Index
//   [SECTION] backends by name
//   [SECTION] the default group's slot (process-wide, or per thread for "threads")
//   [SECTION] stores: env://, tcp://, a given one, the threads rendezvous
//   [SECTION] init / destroy / new_group
//
// Invariant: a slot holds a group only between a successful init_process_group and
// destroy_process_group; a failed init leaves it empty, so it can simply be called again.
#include "distributed/distributed.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/events.h"
#include "distributed/backends/threads.h"
#include "distributed/env.h"
#include "distributed/prefix_store.h"
#include "distributed/tcp_store.h"
#ifdef GLASS_HAVE_GLOO
#include "distributed/backends/gloo.h"
#endif
#ifdef GLASS_HAVE_NCCL
#include "distributed/backends/nccl.h"
#endif
#ifdef GLASS_HAVE_MPI
#include "distributed/backends/mpi.h"
#endif

namespace glass::distributed {

// ---- [SECTION] backends by name -------------------------------------------------------------
namespace {

// A function-local static: the built-in backends are in the map before anyone can ask,
// whatever order static initialisers of other files run in.
struct BackendRegistry {
  std::mutex mutex;
  std::map<std::string, BackendFactory> factories;

  BackendRegistry() {
    factories["threads"] = [](std::shared_ptr<Store> store, int rank, int size,
                              const ProcessGroup::Options& options) {
      return make_threads_group(std::move(store), rank, size, options);
    };
#ifdef GLASS_HAVE_GLOO
    factories["gloo"] = make_gloo_group;
#endif
#ifdef GLASS_HAVE_NCCL
    factories["nccl"] = make_nccl_group;
#endif
#ifdef GLASS_HAVE_MPI
    factories["mpi"] = make_mpi_group;
#endif
  }
};

BackendRegistry& backend_registry() {
  static BackendRegistry registry;
  return registry;
}

std::string available_backends() {
  BackendRegistry& registry = backend_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::string names;
  for (const auto& [name, factory] : registry.factories)
    names += (names.empty() ? "" : ", ") + name;
  return names;
}

// Why a backend glasstorch knows of is missing from this build.
std::optional<std::string> why_not_built(const std::string& name) {
  if (name == "gloo") return "it needs Debian's libgloo-dev at build time";
  if (name == "nccl") return "it needs NCCL and the CUDA toolkit at build time, and a GPU";
  if (name == "mpi") return "it needs an MPI library (Debian's libopenmpi-dev) at build time";
  return std::nullopt;
}

BackendFactory find_backend(const std::string& name) {
  {
    BackendRegistry& registry = backend_registry();
    std::lock_guard<std::mutex> lock(registry.mutex);
    if (auto it = registry.factories.find(name); it != registry.factories.end()) return it->second;
  }
  if (const auto why = why_not_built(name))
    GLASS_CHECK(false, "init_process_group: backend '", name,
                "' was not built into this glasstorch (", *why,
                "; available: ", available_backends(), ")");
  GLASS_CHECK(false, "init_process_group: unknown backend '", name,
              "' (available: ", available_backends(), ")");
  return {};
}

}  // namespace

void register_backend(const std::string& name, BackendFactory factory) {
  GLASS_CHECK(!name.empty() && factory, "register_backend: needs a name and a factory");
  BackendRegistry& registry = backend_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.factories[name] = std::move(factory);
}

bool is_backend_available(const std::string& name) {
  BackendRegistry& registry = backend_registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.factories.count(name) > 0;
}

// ---- [SECTION] the default group's slot -----------------------------------------------------
namespace {

// A group whose communication thread is stuck in a transport call it gave up on (a peer
// died mid-message; see ProcessGroup::transport_stuck) would make its destructor wait until
// the transport's timeout — up to 30 minutes. destroy_process_group() and process exit keep
// such a group here instead, never destroyed: the stuck thread ends with the process.
void keep_until_exit(std::shared_ptr<ProcessGroup> group) {
  static std::mutex mutex;
  static auto* kept = new std::vector<std::shared_ptr<ProcessGroup>>;  // never freed: see above
  std::lock_guard<std::mutex> lock(mutex);
  kept->push_back(std::move(group));
}

// Everything init_process_group made, kept until destroy_process_group.
struct DefaultGroup {
  DefaultGroup() = default;
  DefaultGroup(DefaultGroup&&) = default;
  DefaultGroup& operator=(DefaultGroup&&) = default;
  ~DefaultGroup() {
    if (group && group->transport_stuck()) keep_until_exit(std::move(group));
  }

  std::string backend;
  BackendFactory factory;
  std::shared_ptr<Store> root_store;  // before any group's prefix
  std::shared_ptr<ProcessGroup> group;
  std::chrono::milliseconds timeout{0};
  // "" for the first init, "#2" for the second, ...: after destroy_process_group and a new
  // init, the groups get fresh names (and store namespaces), so a rank that re-inits early
  // never meets the previous group's world or keys, which slower ranks may still hold.
  std::string generation;
  int new_groups = 0;  // new_group calls so far: the same count on every rank
};

// The threads backend's ranks are threads of one process, so each needs its own default
// group: a thread-local slot. Every other backend has one rank per process: a global slot.
// default_group() looks in the thread's slot first.
thread_local std::optional<DefaultGroup> t_default;
thread_local int t_inits = 0;  // successful inits on this thread (threads backend)
std::mutex g_default_mutex;
std::optional<DefaultGroup> g_default;
int g_inits = 0;  // successful inits in this process (other backends), under the mutex

// The calling thread's default group, or nullptr. The global slot is read under its mutex;
// the pointer stays valid because destroy_process_group is, like in torch, not called
// while other threads of the same rank still run collectives on it.
DefaultGroup* current_default() {
  if (t_default.has_value()) return &*t_default;
  std::lock_guard<std::mutex> lock(g_default_mutex);
  return g_default.has_value() ? &*g_default : nullptr;
}

DefaultGroup& require_default(const char* caller) {
  DefaultGroup* current = current_default();
  GLASS_CHECK(current != nullptr, caller,
              ": the default process group is not initialized; call init_process_group() first");
  return *current;
}

}  // namespace

// ---- [SECTION] stores -----------------------------------------------------------------------
namespace {

// One PrefixStore object per (store, prefix), shared by every caller: the threads backend
// finds a group's world by its store's address, so all rank-threads must pass the same one.
std::shared_ptr<Store> shared_prefix_store(const std::shared_ptr<Store>& root,
                                           const std::string& prefix) {
  static std::mutex mutex;
  static std::map<std::pair<const Store*, std::string>, std::weak_ptr<Store>> stores;
  std::lock_guard<std::mutex> lock(mutex);
  std::erase_if(stores, [](const auto& entry) { return entry.second.expired(); });
  auto& entry = stores[{root.get(), prefix}];
  std::shared_ptr<Store> store = entry.lock();
  if (!store) {
    store = std::make_shared<PrefixStore>(prefix, root);
    entry = store;
  }
  return store;
}

// A connected TCPStore for env:// or tcp://. Under glassrun (agent_store) every rank is a
// client; otherwise rank 0 hosts the store on the master port, as torchrun's ranks do, and
// waits until every rank has connected.
std::shared_ptr<Store> connect_tcp_store(const std::string& host, uint16_t port, int rank,
                                         int world_size, bool agent_store,
                                         std::chrono::milliseconds timeout) {
  TCPStoreOptions opts;
  opts.port = port;
  opts.is_server = rank == 0 && !agent_store;
  opts.num_workers = world_size;
  opts.wait_for_workers = true;
  opts.timeout = timeout;
  // TCPStore's message names host:port and the cause; this says which rank, in which role,
  // and which setting the reader should look at.
  try {
    return std::make_shared<TCPStore>(host, opts);
  } catch (const Error& e) {
    detail::throw_error(
        detail::str_cat("init_process_group: rank ", rank,
                        opts.is_server ? " could not host the store" : " could not reach the store",
                        " at the master address ", host, ":", port,
                        " (MASTER_ADDR:MASTER_PORT, or the tcp:// init_method): ", e.what()));
  }
}

// The TCPStore under `store` (through any PrefixStores), and the prefix that leads to it.
TCPStore* find_tcp_store(Store* store, std::string& prefix) {
  while (auto* prefixed = dynamic_cast<PrefixStore*>(store)) {
    prefix = prefixed->prefix() + "/" + prefix;
    store = prefixed->underlying_store().get();
  }
  return dynamic_cast<TCPStore*>(store);
}

// Asks the store's server to write "glass/exited/<rank>" (in the group's namespace) when
// this process's connection closes, so the other ranks can name a rank that died.
void record_exit_in(const std::shared_ptr<Store>& group_store, int rank) {
  std::string prefix;
  TCPStore* tcp = find_tcp_store(group_store.get(), prefix);
  if (tcp == nullptr) return;  // a HashStore: ranks are threads and cannot die alone
  char host[256] = "?";
  ::gethostname(host, sizeof(host) - 1);
  const std::string who = "pid " + std::to_string(::getpid()) + " on " + host;
  tcp->set_on_disconnect(prefix + "glass/exited/" + std::to_string(rank), who);
  // One key for "someone exited", so a watchdog asks once, not once per rank.
  tcp->set_on_disconnect(prefix + "glass/exited/any", "rank " + std::to_string(rank) + ", " + who);
}

struct Rendezvous {
  std::shared_ptr<Store> store;
  int rank = -1;
  int world_size = -1;
  std::chrono::milliseconds timeout{0};
};

Rendezvous rendezvous_for(const std::string& backend, const InitOptions& options) {
  Rendezvous rv{options.store, options.rank, options.world_size, options.timeout};
  const ThreadsRendezvous* threads = current_threads_rendezvous();
  if (backend == "threads") {
    GLASS_CHECK(options.store != nullptr || threads != nullptr,
                "init_process_group(\"threads\"): the threads backend runs ranks as threads: "
                "call it inside run_threads() (or pass store=, rank= and world_size=)");
    if (!rv.store) {
      rv.store = threads->store;
      if (rv.rank < 0) rv.rank = threads->rank;
      if (rv.world_size < 0) rv.world_size = threads->world_size;
      // run_threads' timeout bounds its ranks' collectives unless one was asked for.
      if (options.timeout == kDefaultTimeout && threads->timeout.count() > 0)
        rv.timeout = threads->timeout;
    }
#ifdef GLASS_HAVE_MPI
  } else if (backend == "mpi") {
    // mpirun (or srun) already told MPI who is in the job, as torch's mpi backend relies
    // on: no rendezvous, and no store unless one is given (for failure diagnosis).
    if (rv.rank < 0) rv.rank = mpi_world_rank();
    if (rv.world_size < 0) rv.world_size = mpi_world_size();
#endif
  } else if (!rv.store && options.init_method == "env://") {
    const EnvRendezvous env = read_env(options.rank, options.world_size);
    rv.rank = env.rank;
    rv.world_size = env.world_size;
    rv.store = connect_tcp_store(env.master_addr, env.master_port, env.rank, env.world_size,
                                 env.agent_store, options.timeout);
  } else if (!rv.store) {
    std::string host;
    uint16_t port = 0;
    parse_tcp_init_method(options.init_method, host, port);
    GLASS_CHECK(options.rank >= 0 && options.world_size >= 1, "init_process_group: init_method='",
                options.init_method, "' needs rank= and world_size= (got rank=", options.rank,
                ", world_size=", options.world_size, ")");
    rv.store = connect_tcp_store(host, port, options.rank, options.world_size,
                                 /*agent_store=*/false, options.timeout);
  }
  GLASS_CHECK(rv.rank >= 0 && rv.world_size >= 1, "init_process_group(\"", backend,
              "\"): with store=, pass rank= and world_size= too (got rank=", rv.rank,
              ", world_size=", rv.world_size, ")");
  GLASS_CHECK(rv.rank < rv.world_size, "init_process_group(\"", backend, "\"): rank=", rv.rank,
              " is not less than world_size=", rv.world_size);
  return rv;
}

std::shared_ptr<ProcessGroup> make_group(const DefaultGroup& base, const std::string& name,
                                         int rank, int size) {
  ProcessGroup::Options options;
  options.timeout = base.timeout;
  options.group_name = name;
  options.store = base.root_store ? shared_prefix_store(base.root_store, name) : nullptr;
  // Before the backend connects: a rank that dies during the rendezvous is named too.
  record_exit_in(options.store, rank);
  std::shared_ptr<ProcessGroup> group = base.factory(options.store, rank, size, options);
  GLASS_INTERNAL_ASSERT(group != nullptr, "the '", base.backend, "' factory returned no group");
  return group;
}

}  // namespace

// ---- [SECTION] init / destroy / new_group ---------------------------------------------------

void init_process_group(const std::string& backend, const InitOptions& options) {
  if (const DefaultGroup* current = current_default()) {
    GLASS_CHECK(false, "init_process_group(\"", backend,
                "\"): the default process group is already initialized (backend '",
                current->backend, "', rank ", current->group->rank(), " of ",
                current->group->size(), "); call destroy_process_group() first");
  }
  DefaultGroup made;
  made.backend = backend;
  made.factory = find_backend(backend);
  const Rendezvous rv = rendezvous_for(backend, options);
  made.root_store = rv.store;
  made.timeout = rv.timeout;
  const bool threads = backend == "threads";
  int inits = 0;
  if (threads) {
    inits = t_inits;
  } else {
    std::lock_guard<std::mutex> lock(g_default_mutex);
    inits = g_inits;
  }
  made.generation = inits == 0 ? "" : "#" + std::to_string(inits + 1);
  made.group = make_group(made, options.group_name + made.generation, rv.rank, rv.world_size);

  if (threads) {
    t_default = std::move(made);  // run_threads already tags each thread's events
    ++t_inits;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(g_default_mutex);
    GLASS_CHECK(!g_default.has_value(), "init_process_group(\"", backend,
                "\"): another thread initialized the default process group meanwhile");
    g_default = std::move(made);
    ++g_inits;
  }
  events::set_process_rank(rv.rank);
}

void destroy_process_group() {
  if (t_default.has_value()) {
    t_default.reset();
    return;
  }
  std::optional<DefaultGroup> destroyed;
  {
    std::lock_guard<std::mutex> lock(g_default_mutex);
    GLASS_CHECK(g_default.has_value(),
                "destroy_process_group: the default process group is not initialized");
    destroyed.swap(g_default);
  }
  events::set_process_rank(-1);
  // `destroyed` goes out of scope here, outside the lock: the group's destructor finishes
  // its queued collectives, which may take a while.
}

bool is_initialized() { return current_default() != nullptr; }

int get_rank() { return require_default("get_rank").group->rank(); }

int get_world_size() { return require_default("get_world_size").group->size(); }

std::shared_ptr<ProcessGroup> default_group() { return require_default("default_group").group; }

std::shared_ptr<ProcessGroup> new_group(const std::vector<int>& ranks) {
  DefaultGroup& base = require_default("new_group");
  const int world_size = base.group->size();
  std::ostringstream list;
  for (size_t i = 0; i < ranks.size(); ++i) list << (i ? ", " : "") << ranks[i];
  GLASS_CHECK(!ranks.empty(), "new_group: the list of ranks is empty");
  for (size_t i = 0; i < ranks.size(); ++i) {
    GLASS_CHECK(ranks[i] >= 0 && ranks[i] < world_size, "new_group([", list.str(), "]): rank ",
                ranks[i], " is not in the default group (ranks 0..", world_size - 1, ")");
    GLASS_CHECK(std::find(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(i),
                          ranks[i]) == ranks.begin() + static_cast<std::ptrdiff_t>(i),
                "new_group([", list.str(), "]): rank ", ranks[i], " appears twice");
  }
  // Counted on every rank, members or not, so the k-th call names the same group everywhere.
  const std::string name = "group/" + std::to_string(++base.new_groups) + base.generation;
#ifdef GLASS_HAVE_MPI
  if (base.backend == "mpi") {
    // MPI makes a sub-communicator collectively over the whole parent: members or not,
    // every rank takes part (and non-members get nullptr from it).
    ProcessGroup::Options options;
    options.timeout = base.timeout;
    options.group_name = name;
    options.store = base.root_store ? shared_prefix_store(base.root_store, name) : nullptr;
    return MPIProcessGroup::split(*base.group, ranks, options);
  }
#endif
  const auto me = std::find(ranks.begin(), ranks.end(), base.group->rank());
  if (me == ranks.end()) return nullptr;
  return make_group(base, name, static_cast<int>(me - ranks.begin()),
                    static_cast<int>(ranks.size()));
}

}  // namespace glass::distributed
