// viewer/distributed_ring.cpp — record_ring: the ring all-reduce on rank-threads, one frame
// per step (distributed_ring.h).
//
// Each rank-thread installs a RingObserver that copies its tensor after every step into
// its own row of `after[step][rank]`; no two threads write the same slot, and run_threads
// joins them all before the frames are assembled, so the copies need no lock. The transfers
// are what the observer reported, not recomputed: the animation shows what the ring did.
#include "viewer/distributed_ring.h"

#include <bit>

#include "core/error.h"
#include "core/ops/factories.h"
#include "distributed/backends/threads.h"
#include "distributed/ring.h"

namespace glass::viz {

std::string RingFrame::caption() const {
  if (step < 0) return "start: rank r holds 2^r in every element";
  const int steps = static_cast<int>(cells.size()) - 1;  // per phase: n − 1, for n ranks
  return std::string(gather_phase ? "all-gather" : "reduce-scatter") + " step " +
         std::to_string(phase_step + 1) + " of " + std::to_string(steps);
}

namespace {

// What the observer saw on one rank in one step.
struct Seen {
  distributed::RingStep step;
  std::vector<double> values;  // the rank's whole tensor after the step
};

std::vector<double> values_of_flat(const Tensor& t) {
  Tensor c = t.contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<double>(p, p + c.numel());
}

// The tensor's values cut into the ring's chunks, each read as the set of ranks in it.
std::vector<RingCell> cells_of(const std::vector<double>& values,
                               const std::vector<int64_t>& lengths) {
  std::vector<RingCell> cells;
  int64_t begin = 0;
  for (int64_t len : lengths) {
    RingCell cell;
    cell.values.assign(values.begin() + begin, values.begin() + begin + len);
    cell.mask = len > 0 ? static_cast<uint32_t>(cell.values.front()) : 0;
    cell.count = std::popcount(cell.mask);
    cells.push_back(std::move(cell));
    begin += len;
  }
  return cells;
}

}  // namespace

RingRecording record_ring(const RingRecordingOptions& options) {
  const int n = options.world_size;
  GLASS_CHECK(n >= 1 && n <= 16, "record_ring: world_size must be 1..16 (rank r holds 2^r), got ",
              n);
  const int64_t numel = options.numel > 0 ? options.numel : 2 * static_cast<int64_t>(n);
  GLASS_CHECK(numel >= n, "record_ring: numel ", numel, " is less than world_size ", n,
              " (every rank needs a chunk of at least one element)");
  RingRecording rec;
  rec.world_size = n;
  rec.numel = numel;
  for (int c = 0; c < n; ++c)
    rec.chunk_lengths.push_back(distributed::ring_chunk(numel, n, c).length);

  const int steps = 2 * (n - 1);
  std::vector<std::vector<Seen>> after(static_cast<size_t>(steps), std::vector<Seen>(n));
  std::vector<std::vector<double>> start(static_cast<size_t>(n));
  EventTrace trace;
  distributed::run_threads(n, [&](int rank) {
    const distributed::ThreadsRendezvous* rv = distributed::current_threads_rendezvous();
    auto group = distributed::make_threads_group(rv->store, rank, n, {});
    Tensor t = full({numel}, static_cast<double>(1 << rank), TensorOptions().dtype(kFloat));
    start[static_cast<size_t>(rank)] = values_of_flat(t);
    distributed::RingObserverGuard watch([&](const distributed::RingStep& s) {
      const int global = (s.gather_phase ? n - 1 : 0) + s.step;
      Seen& seen = after[static_cast<size_t>(global)][static_cast<size_t>(rank)];
      seen = {s, values_of_flat(s.tensor)};
      seen.step.tensor = Tensor();  // the values are copied; the rank's memory stays its own
    });
    distributed::ring_all_reduce(*group, t);
  });
  trace.stop();
  for (TracedEvent& e : trace.events())
    if (e.rank >= 0) rec.events.push_back(std::move(e));  // the ring's ranks, not the app's UI

  RingFrame first;
  for (int r = 0; r < n; ++r)
    first.cells.push_back(cells_of(start[static_cast<size_t>(r)], rec.chunk_lengths));
  rec.frames.push_back(std::move(first));
  for (int k = 0; k < steps; ++k) {
    RingFrame f;
    f.step = k;
    f.gather_phase = k >= n - 1;
    f.phase_step = f.gather_phase ? k - (n - 1) : k;
    for (int r = 0; r < n; ++r) {
      const Seen& seen = after[static_cast<size_t>(k)][static_cast<size_t>(r)];
      GLASS_CHECK(seen.step.world == n, "record_ring: rank ", r, " reported no step ", k);
      f.transfers.push_back(
          {r, (r + 1) % n, (r + n - 1) % n, seen.step.send_chunk, seen.step.recv_chunk});
      f.cells.push_back(cells_of(seen.values, rec.chunk_lengths));
    }
    rec.frames.push_back(std::move(f));
  }
  return rec;
}

std::string RingRecording::chrome_trace() const { return chrome_trace_json(events); }

}  // namespace glass::viz
