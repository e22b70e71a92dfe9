// cuda/sim/sim_runtime.cpp — the Runtime calls, as the simulated GPU answers them.
//
// Each enqueuing call does the same four things: check its arguments (naming values and
// the fix), build an Op (what to run, on which engine, and its timeline record), let the
// race checker see its accesses under the scheduler's lock (so checks happen in enqueue
// order), and queue it. The copies, with the host-side rules of memcpy_async
// (runtime.h), are in sim_copies.cpp.
#include "cuda/sim/sim_runtime.h"

#include <cstring>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "cuda/sim/launch_watch.h"

namespace glass::cuda::sim {
namespace {

std::string dims(const Dim3& d) { return detail::str_cat("(", d.x, ", ", d.y, ", ", d.z, ")"); }

std::string hex(uintptr_t a) {
  std::ostringstream out;
  out << "0x" << std::hex << a;
  return out.str();
}

}  // namespace

SimRuntime::SimRuntime(const SimConfig& config)
    : config_(config),
      arena_(config.devices, config.memory_bytes),
      checker_([this](const void* p) -> std::optional<std::pair<uintptr_t, size_t>> {
        auto range = arena_.allocation_containing(p);
        if (!range) return std::nullopt;
        return std::make_pair(range->begin, range->size);
      }),
      scheduler_(config.devices, config.sms, timeline_) {
  timeline_now_ns();  // the timeline's epoch: now
  set_race_check(config.race_check);
  for (int d = 0; d < config.devices; ++d) {
    DeviceProperties p;
    p.name = detail::str_cat("glasstorch simulated GPU ", d, " (", config.sms, " SMs)");
    p.total_memory = static_cast<int64_t>(config.memory_bytes);
    p.multi_processor_count = config.sms;
    p.major = 9;
    p.minor = 0;
    properties_.push_back(p);
    Stream* s = scheduler_.create_stream(d);
    s->race_index = checker_.add_stream(detail::str_cat("stream 0 of cuda:", d));
    default_streams_.push_back(s);
  }
}

SimRuntime::~SimRuntime() { shutdown(); }

void SimRuntime::shutdown() { scheduler_.shutdown(); }

// ---- argument checks -------------------------------------------------------------------

void SimRuntime::check_device(int device, const char* call) const {
  GLASS_CHECK(device >= 0 && device < config_.devices, call, ": device ", device,
              " does not exist; the simulated GPU has ", config_.devices, " device",
              config_.devices == 1 ? "" : "s", " (cuda:0 to cuda:", config_.devices - 1,
              "; set GLASS_SIM_DEVICES for more).");
}

Stream* SimRuntime::stream_of(StreamHandle handle, const char* call) const {
  GLASS_CHECK(handle != nullptr, call,
              ": the stream handle is null; pass default_stream(device) for a device's default "
              "stream.");
  return static_cast<Stream*>(handle);
}

Event* SimRuntime::event_of(EventHandle handle, const char* call) const {
  GLASS_CHECK(handle != nullptr, call, ": the event handle is null; create one with event_create.");
  return static_cast<Event*>(handle);
}

void SimRuntime::check_device_range(const void* p, size_t nbytes, const char* call,
                                    const char* what) const {
  const int device = arena_.device_of(p);
  GLASS_CHECK(device >= 0, call, ": the ", what, " ", p,
              " is not device memory (a host pointer?); check the copy's direction (CopyKind).");
  const std::optional<Arena::Range> alloc = arena_.allocation_containing(p);
  GLASS_CHECK(alloc.has_value(), call, ": the ", what, " ", p, " on cuda:", device,
              " is not inside a live allocation (freed already, or never allocated).");
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  GLASS_CHECK(nbytes <= alloc->size - (begin - alloc->begin), call, ": ", nbytes, " bytes at the ",
              what, " ", p, " run past the end of its allocation on cuda:", device, " (",
              alloc->size, " bytes at ", hex(alloc->begin), ", so at most ",
              alloc->begin + alloc->size - begin, " bytes from there).");
}

std::shared_ptr<Op> SimRuntime::new_op(Stream* stream, OpKind kind, Engine engine,
                                       std::string name) const {
  auto op = std::make_shared<Op>();
  op->stream = stream;
  op->record.kind = kind;
  op->record.engine = engine;
  op->record.name = std::move(name);
  op->record.enqueue_ns = timeline_now_ns();
  return op;
}

void SimRuntime::host_synchronized(const VectorClock& clock) {
  if (!clock.empty()) checker_.host_synchronized_event(clock);
}

// ---- devices ---------------------------------------------------------------------------

const DeviceProperties& SimRuntime::properties(int device) {
  check_device(device, "properties()");
  return properties_[static_cast<size_t>(device)];
}

void SimRuntime::device_synchronize(int device) {
  check_device(device, "device_synchronize()");
  std::vector<std::shared_ptr<Op>> targets;
  std::vector<VectorClock> clocks;
  scheduler_.locked([&] {
    for (Stream* s : scheduler_.streams_locked(device)) {
      if (!s->queue.empty()) targets.push_back(s->queue.back());
      clocks.push_back(checker_.record_event(s->race_index));
    }
  });
  for (const auto& op : targets) scheduler_.wait(op, "device_synchronize()");
  for (const auto& clock : clocks) host_synchronized(clock);
  scheduler_.check_sticky(device);
}

// ---- memory ----------------------------------------------------------------------------

void* SimRuntime::malloc(int device, size_t nbytes) {
  check_device(device, "malloc()");
  return arena_.malloc(device, nbytes);
}

void SimRuntime::free(int device, void* ptr) {
  if (ptr == nullptr) return;  // as cudaFree(nullptr)
  check_device(device, "free()");
  const size_t size = arena_.free(device, ptr);
  checker_.forget_range(reinterpret_cast<uintptr_t>(ptr), size);
}

void* SimRuntime::host_alloc(size_t nbytes) { return pinned_.allocate(nbytes); }

void SimRuntime::host_free(void* ptr) { pinned_.free(ptr); }

bool SimRuntime::is_pinned(const void* host_ptr) { return pinned_.contains(host_ptr); }

int SimRuntime::device_of(const void* ptr) { return arena_.device_of(ptr); }

size_t SimRuntime::bytes_in_use(int device) {
  check_device(device, "bytes_in_use()");
  return arena_.bytes_in_use(device);
}

// ---- streams ---------------------------------------------------------------------------

StreamHandle SimRuntime::default_stream(int device) {
  check_device(device, "default_stream()");
  return default_streams_[static_cast<size_t>(device)];
}

StreamHandle SimRuntime::create_stream(int device) {
  check_device(device, "create_stream()");
  Stream* s = scheduler_.create_stream(device);
  s->race_index = checker_.add_stream(detail::str_cat("stream ", s->id, " of cuda:", device));
  return s;
}

void SimRuntime::destroy_stream(StreamHandle stream) {
  Stream* s = stream_of(stream, "destroy_stream()");
  GLASS_CHECK(s->id != 0, "destroy_stream(): stream 0 is the default stream of cuda:", s->device,
              " and lives as long as the process; destroy only streams from create_stream.");
  scheduler_.destroy_stream(s);
}

int SimRuntime::stream_device(StreamHandle stream) {
  return stream_of(stream, "stream_device()")->device;
}

int64_t SimRuntime::stream_id(StreamHandle stream) { return stream_of(stream, "stream_id()")->id; }

size_t SimRuntime::pending_ops(StreamHandle stream) {
  Stream* s = stream_of(stream, "pending_ops()");
  return scheduler_.locked([&] { return s->queue.size(); });
}

void SimRuntime::stream_synchronize(StreamHandle stream) {
  Stream* s = stream_of(stream, "stream_synchronize()");
  std::shared_ptr<Op> target;
  VectorClock clock;
  scheduler_.locked([&] {
    if (!s->queue.empty()) target = s->queue.back();
    clock = checker_.record_event(s->race_index);
  });
  if (target) scheduler_.wait(target, "stream_synchronize()");
  host_synchronized(clock);
  scheduler_.check_sticky(s->device);
}

bool SimRuntime::stream_query(StreamHandle stream) {
  Stream* s = stream_of(stream, "stream_query()");
  VectorClock clock;
  const bool idle = scheduler_.locked([&] {
    scheduler_.check_sticky_locked(s->device);
    if (!s->queue.empty()) return false;
    clock = checker_.record_event(s->race_index);
    return true;
  });
  // The host saw the work finish: what it enqueues next is ordered after it.
  host_synchronized(clock);
  return idle;
}

void SimRuntime::hold(StreamHandle stream) { scheduler_.hold(stream_of(stream, "hold()")); }

void SimRuntime::release(StreamHandle stream) {
  scheduler_.release(stream_of(stream, "release()"));
}

void SimRuntime::reset_sticky_error(int device) {
  check_device(device, "reset_sticky_error()");
  scheduler_.reset_sticky_error(device);
}

// ---- events ----------------------------------------------------------------------------

EventHandle SimRuntime::event_create(int device, bool enable_timing) {
  check_device(device, "event_create()");
  auto* e = new Event;
  e->device = device;
  e->id = next_event_id_++;
  e->timing = enable_timing;
  return e;
}

void SimRuntime::event_destroy(EventHandle event) {
  // A pending record keeps running: it does not refer to the event.
  delete static_cast<Event*>(event);
}

void SimRuntime::event_record(EventHandle event, StreamHandle stream) {
  Event* e = event_of(event, "event_record()");
  Stream* s = stream_of(stream, "event_record()");
  GLASS_CHECK(e->device == s->device, "event_record(): event ", e->id,
              " was created on cuda:", e->device, " but stream ", s->id, " is on cuda:", s->device,
              "; an event is recorded on a stream of its own device (create the event on cuda:",
              s->device, ", or record it on a stream of cuda:", e->device, ").");
  auto op = new_op(s, OpKind::Event, Engine::None, detail::str_cat("record event ", e->id));
  scheduler_.enqueue(op, [&] {
    e->last_record = op;
    e->clock = checker_.record_event(s->race_index);
  });
}

void SimRuntime::stream_wait_event(StreamHandle stream, EventHandle event) {
  Event* e = event_of(event, "stream_wait_event()");
  Stream* s = stream_of(stream, "stream_wait_event()");
  // Across devices is allowed, as in CUDA: a stream of cuda:1 may wait for cuda:0's work.
  auto op = new_op(s, OpKind::Event, Engine::None,
                   detail::str_cat("wait event ", e->id, " (cuda:", e->device, ")"));
  scheduler_.enqueue(op, [&] {
    op->waits_for = e->last_record;
    checker_.wait_event(s->race_index, e->clock);
  });
}

bool SimRuntime::event_query(EventHandle event) {
  Event* e = event_of(event, "event_query()");
  VectorClock clock;
  const bool done = scheduler_.locked([&] {
    scheduler_.check_sticky_locked(e->device);
    if (e->last_record && !e->last_record->done) return false;
    clock = e->clock;
    return true;
  });
  host_synchronized(clock);
  return done;
}

void SimRuntime::event_synchronize(EventHandle event) {
  Event* e = event_of(event, "event_synchronize()");
  std::shared_ptr<Op> target;
  VectorClock clock;
  scheduler_.locked([&] {
    target = e->last_record;
    clock = e->clock;
  });
  if (target) scheduler_.wait(target, "event_synchronize()");
  host_synchronized(clock);
  scheduler_.check_sticky(e->device);
}

float SimRuntime::event_elapsed_ms(EventHandle start, EventHandle end) {
  Event* a = event_of(start, "event_elapsed_ms()");
  Event* b = event_of(end, "event_elapsed_ms()");
  for (Event* e : {a, b}) {
    GLASS_CHECK(e->timing, "event_elapsed_ms(): event ", e->id, " on cuda:", e->device,
                " was created without timing; create both events with enable_timing "
                "(CUDAEvent(kEventDefault)).");
  }
  GLASS_CHECK(a->device == b->device, "event_elapsed_ms(): the start event is on cuda:", a->device,
              " and the end event on cuda:", b->device,
              "; time two events recorded on the same device.");
  return scheduler_.locked([&] {
    for (Event* e : {a, b}) {
      GLASS_CHECK(e->last_record != nullptr, "event_elapsed_ms(): event ", e->id,
                  " on cuda:", e->device, " has not been recorded; record it on a stream first.");
      GLASS_CHECK(e->last_record->done, "event_elapsed_ms(): event ", e->id, " on cuda:", e->device,
                  " has not completed yet (cudaErrorNotReady); synchronize it (or its stream) "
                  "first.");
    }
    const int64_t ns = b->last_record->record.end_ns - a->last_record->record.end_ns;
    return static_cast<float>(static_cast<double>(ns) / 1e6);
  });
}

// ---- kernels ---------------------------------------------------------------------------

void SimRuntime::enqueue_kernel(StreamHandle stream, KernelLaunch launch) {
  Stream* s = stream_of(stream, "enqueue_kernel()");
  const DeviceProperties& p = properties_[static_cast<size_t>(s->device)];
  const std::string& k = launch.name;
  const Dim3 g = launch.grid, b = launch.block;
  GLASS_CHECK(static_cast<bool>(launch.run_block), "kernel '", k,
              "': the launch has no run_block function.");
  GLASS_CHECK(g.x >= 1 && g.y >= 1 && g.z >= 1 && g.x <= p.max_grid_dim.x &&
                  g.y <= p.max_grid_dim.y && g.z <= p.max_grid_dim.z,
              "kernel '", k, "' launched with grid ", dims(g), " on cuda:", s->device,
              ": each grid dimension must be at least 1 and at most ", dims(p.max_grid_dim),
              " (cudaErrorInvalidConfiguration).");
  GLASS_CHECK(b.x >= 1 && b.y >= 1 && b.z >= 1 && b.x <= p.max_block_dim.x &&
                  b.y <= p.max_block_dim.y && b.z <= p.max_block_dim.z &&
                  b.count() <= static_cast<uint64_t>(p.max_threads_per_block),
              "kernel '", k, "' launched with block ", dims(b), " = ", b.count(),
              " threads on cuda:", s->device, ": a block has 1 to ", p.max_threads_per_block,
              " threads, each dimension at most ", dims(p.max_block_dim),
              " (cudaErrorInvalidConfiguration). Use more blocks of fewer threads.");
  GLASS_CHECK(launch.dynamic_shared_bytes <= p.shared_mem_per_block, "kernel '", k, "' asks for ",
              launch.dynamic_shared_bytes, " bytes of dynamic shared memory on cuda:", s->device,
              "; a block has at most ", p.shared_mem_per_block,
              " bytes. Use fewer threads per block or a smaller tile.");
  auto op = new_op(s, OpKind::Kernel, Engine::Compute, k);
  op->record.grid = g;
  op->record.block = b;
  op->num_chunks = static_cast<int64_t>(g.count());
  auto shared = std::make_shared<KernelLaunch>(std::move(launch));
  // What the blocks are checked against and count into (launch_watch.h).
  auto watch = std::make_shared<LaunchWatch>();
  if (kernel_checks()) {
    watch->bounds_resolved = true;
    for (const Access& a : shared->accesses)
      if (auto range = checker_.allocation_of(a.ptr))
        watch->ranges.push_back({range->first, range->second});
  }
  op->run = [shared, watch, g](int64_t c) {
    const auto i = static_cast<uint64_t>(c);
    const LaunchScope scope(watch.get());
    shared->run_block(Dim3(static_cast<unsigned>(i % g.x), static_cast<unsigned>(i / g.x % g.y),
                           static_cast<unsigned>(i / (uint64_t{g.x} * g.y))));
  };
  op->finish_record = [watch](TimelineRecord& record) {
    std::lock_guard<std::mutex> lock(watch->mutex);
    if (!watch->counted) return;
    watch->totals.launches = 1;
    record.has_stats = true;
    record.stats = watch->totals;
    record_launch_stats(watch->totals);
  };
  scheduler_.enqueue(op, [&] { checker_.check(s->race_index, shared->name, shared->accesses); });
}

void enqueue_kernel(StreamHandle stream, KernelLaunch launch) {
  simulator().enqueue_kernel(stream, std::move(launch));
}

// ---- timeline and race checker ---------------------------------------------------------

std::vector<TimelineRecord> SimRuntime::timeline() const { return timeline_.records(); }

void SimRuntime::clear_timeline() { timeline_.clear(scheduler_.next_seq()); }

std::string SimRuntime::chrome_trace_json() const { return timeline_.chrome_trace_json(); }

void SimRuntime::write_chrome_trace(const std::string& path) const {
  timeline_.write_chrome_trace(path);
}

// The stream-race checker and the kernel checks (bounds, shared-memory races) go together:
// GLASS_SIM_CHECK=1 is "check everything the simulator can".
void SimRuntime::set_race_check(bool on) {
  checker_.set_enabled(on);
  set_kernel_checks(on);
}

void SimRuntime::register_block(const void* ptr, size_t nbytes) {
  checker_.register_block(ptr, nbytes);
}

void SimRuntime::unregister_block(const void* ptr) { checker_.unregister_block(ptr); }

// ---- the process's instance ------------------------------------------------------------

SimRuntime& simulator() {
  // Never deleted, so calls from other objects' destructors at exit still find it; at
  // exit its work is finished and its threads joined (an object destroyed after every
  // static constructed later than it).
  static SimRuntime* const instance = new SimRuntime(config_from_env());
  static const struct FinishAtExit {
    ~FinishAtExit() { instance->shutdown(); }
  } finish_at_exit;
  return *instance;
}

}  // namespace glass::cuda::sim
