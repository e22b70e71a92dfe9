// lessons/10_data_parallel/main.cpp — lesson 10 as a program: data parallelism, the seed's
// five steps (replica, scatter, forward/backward, all-reduce, update) as code that runs on
// one laptop. Ranks are threads (the threads backend, distributed/backends/threads.h); the
// same training function runs across processes and machines under glassrun with gloo:
//
//   lesson_10_data_parallel                                  the lesson (threads)
//   glassrun --nproc-per-node 2 lesson_10_data_parallel      section 1's training on gloo
//
// Sections: 1. the five steps, and the check that DDP equals one process on the global
// batch; 2. the ring all-reduce by hand for n = 4, and the bytes it sends against a naive
// gather-then-broadcast; 3. DDP's buckets and their all-reduce under backward; 4. no_sync
// for gradient accumulation.
//
// stdout is deterministic (the threads backend adds in rank order 0..n−1, and every model
// and batch comes from a fixed seed) and lesson_10_output compares it with README.md.
// Timings are not reproducible: they go to stderr, each line starting with "[time]".
//
// [SECTION] helpers   [SECTION] the model   [SECTION] 1-4   [SECTION] main
#include <glass/glass.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "../common/counting_group.h"
#include "autograd/variable.h"
#include "distributed/backends/threads.h"
#include "distributed/ddp.h"
#include "distributed/distributed.h"
#include "distributed/ring.h"
#include "nn/data/sampler.h"

namespace {

using glass::Tensor;
namespace dist = glass::distributed;
namespace nn = glass::nn;
namespace optim = glass::optim;
using nn::parallel::DistributedDataParallel;
using Clock = std::chrono::steady_clock;

// [SECTION] helpers ----------------------------------------------------------------------

const char* yes_no(bool b) { return b ? "yes" : "no"; }

void section(const char* title) { std::cout << "== " << title << " ==\n"; }

std::string fixed(double v, int decimals) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(decimals) << v;
  return os.str();
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// "[0, 3, 6, 9]"
template <class T>
std::string list(const std::vector<T>& values) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  return os.str() + "]";
}

// The first `n` values of a float tensor, 4 decimals: "[0.0123, -0.0301, 0.0087]".
std::string first_values(const Tensor& t, int64_t n) {
  Tensor flat = t.detach().reshape({-1}).contiguous();
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(fixed(flat.data_ptr<float>()[i], 4));
  return list(out);
}

// "about 1e-08": the power of ten nearest to a small difference, 0 or one above 1e-5 said
// as it is. Rounding differences are printed so, not to the digit, because their digits
// depend on how the machine's matmul splits its sums (the exact value goes to stderr).
std::string magnitude(double diff) {
  if (diff == 0) return "0 (bitwise equal)";
  if (diff > 1e-5) return fixed(diff, 6) + " (too large: more than float32 rounding)";
  std::ostringstream os;
  os << "about 1e" << std::lround(std::log10(diff))
     << " (float32 rounding: the same sums, added in another order)";
  return os.str();
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.detach() - b.detach()).abs().max().item<double>();
}

// Row indices as an int64 tensor, for index_select.
Tensor index_tensor(const std::vector<size_t>& rows) {
  Tensor idx = glass::empty({static_cast<int64_t>(rows.size())}, glass::kLong);
  for (size_t i = 0; i < rows.size(); ++i)
    idx.data_ptr<int64_t>()[i] = static_cast<int64_t>(rows[i]);
  return idx;
}

// Blocking point-to-point, as torch.distributed's send/recv.
void send(dist::ProcessGroup& group, const Tensor& t, int dst) {
  std::vector<Tensor> message{t};
  group.send(message, dst)->wait();
}
void recv(dist::ProcessGroup& group, Tensor& t, int src) {
  std::vector<Tensor> buffer{t};
  group.recv(buffer, src)->wait();
}

// A threads group for the rank-thread that calls it (inside run_threads).
std::shared_ptr<dist::ProcessGroup> threads_group(const char* name,
                                                  dist::ThreadsLinkModel link = {}) {
  const dist::ThreadsRendezvous* rv = dist::current_threads_rendezvous();
  dist::ProcessGroup::Options options;
  options.group_name = name;
  return dist::make_threads_group(rv->store, rv->rank, rv->world_size, options, link);
}

// [SECTION] the model --------------------------------------------------------------------

// Lesson 06's classifier, 784-512-512-10.
struct MLPImpl : nn::Module {
  MLPImpl(int64_t in, int64_t hidden, int64_t classes) : Module("MLP") {
    fc1 = register_module("fc1", nn::Linear(in, hidden));
    fc2 = register_module("fc2", nn::Linear(hidden, hidden));
    fc3 = register_module("fc3", nn::Linear(hidden, classes));
  }
  // x: (B, 784) -> logits (B, 10)
  Tensor forward(const Tensor& x) const { return fc3(fc2(fc1(x).relu()).relu()); }
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};
GLASS_MODULE(MLP);

// Ranks call it on their own threads at the same moment: run_threads gives each rank
// default generators of its own, as a process has, so each seeds and draws only its own.
MLP mlp_from_seed(uint64_t seed) {
  glass::manual_seed(seed);
  return MLP(784, 512, 10);
}

// A synthetic data set: random "images" and labels, the same on every rank (each rank
// reads only its slice of it, as each would read its own files).
struct DataSet {
  Tensor x;  // (N, 784)
  Tensor y;  // (N) int64 in [0, 10)
};
DataSet make_data(int64_t n, uint64_t seed) {
  glass::Generator gen = glass::make_generator(glass::Device(glass::kCPU), seed);
  Tensor x = glass::randn({n, 784}, gen);
  Tensor y = glass::randint(0, 10, {n}, gen);
  return {x, y};
}

// [SECTION] 1. the five steps ------------------------------------------------------------

constexpr int kWorld = 3;
constexpr int64_t kExamples = 120;  // 40 per rank
constexpr int64_t kLocalBatch = 8;  // a global batch of 24
constexpr int kSteps = 5;
constexpr double kLr = 0.05, kMomentum = 0.9;

// What one rank did, kept for printing after the threads end (printing from rank-threads
// would interleave).
struct RankLog {
  std::vector<float> before, after;         // fc1.weight[0][0..2] before / after DDP's constructor
  std::vector<size_t> indices;              // the sampler's slice
  double local_loss = 0;                    // step 1
  float own_grad = 0;                       // step 1: fc3.bias.grad[0] before the all-reduce
  float synced_grad = 0;                    // step 1: after it
  std::vector<std::vector<Tensor>> params;  // [step]: every parameter after the update
};

std::vector<float> first3(const Tensor& w) {
  Tensor flat = w.detach().reshape({-1}).contiguous();
  return {flat.data_ptr<float>()[0], flat.data_ptr<float>()[1], flat.data_ptr<float>()[2]};
}

// The training every rank runs: the same code on the threads backend (here) and on gloo
// under glassrun (main). `model` is this rank's own, built from its own seed.
void train_rank(MLP model, const DataSet& data, RankLog& log) {
  const int rank = dist::get_rank();
  const int world = dist::get_world_size();
  log.before = first3(model->fc1->weight);
  DistributedDataParallel ddp(model);  // 1. replica: rank 0's weights, broadcast
  log.after = first3(model->fc1->weight);

  glass::data::DistributedSampler sampler(world, rank, /*shuffle=*/true, /*seed=*/0);
  sampler.set_epoch(0);
  log.indices = sampler.indices(data.x.size(0), 0);  // 2. scatter: this rank's slice

  optim::SGD sgd(model->parameters(), optim::SGDOptions(kLr).momentum(kMomentum));
  for (int step = 0; step < kSteps; ++step) {
    std::vector<size_t> rows(log.indices.begin() + step * kLocalBatch,
                             log.indices.begin() + (step + 1) * kLocalBatch);
    Tensor idx = index_tensor(rows);
    Tensor x = data.x.index_select(0, idx), y = data.y.index_select(0, idx);
    if (step == 0) {
      // To see step 4 happen, the first batch is also run once without it (no_sync keeps
      // the gradient local; section 4), then the gradient is dropped.
      auto local_only = ddp.no_sync();
      nn::functional::cross_entropy(ddp(x), y).backward();
      log.own_grad = model->fc3->bias.grad().data_ptr<float>()[0];
      sgd.zero_grad();
    }
    sgd.zero_grad();
    Tensor loss = nn::functional::cross_entropy(ddp(x), y);  // 3. forward on the slice
    loss.backward();                                         // 3, 4. backward, all-reduce
    if (step == 0) {
      log.local_loss = loss.item<double>();
      log.synced_grad = model->fc3->bias.grad().data_ptr<float>()[0];
    }
    sgd.step();  // 5. update: the same averaged gradient on every rank
    std::vector<Tensor> snapshot;
    for (const Tensor& p : model->parameters()) snapshot.push_back(p.detach().clone());
    log.params.push_back(std::move(snapshot));
  }
}

// The reference: one process, one model (rank 0's starting weights: the same seed), each
// step on the global batch — the three ranks' slices together.
std::vector<Tensor> train_one_process(const DataSet& data, const std::vector<RankLog>& logs) {
  MLP model = mlp_from_seed(100);
  optim::SGD sgd(model->parameters(), optim::SGDOptions(kLr).momentum(kMomentum));
  for (int step = 0; step < kSteps; ++step) {
    std::vector<size_t> rows;
    for (const RankLog& log : logs)
      rows.insert(rows.end(), log.indices.begin() + step * kLocalBatch,
                  log.indices.begin() + (step + 1) * kLocalBatch);
    Tensor idx = index_tensor(rows);
    sgd.zero_grad();
    nn::functional::cross_entropy(model(data.x.index_select(0, idx)), data.y.index_select(0, idx))
        .backward();
    sgd.step();
  }
  return model->parameters();
}

void five_steps() {
  section("1. the five steps, on 3 rank-threads");
  // 2. scatter, shown first on a data set small enough to print.
  std::cout << "DistributedSampler over 10 examples and 3 ranks (padded to 12 by repeating "
               "the start):\n";
  for (bool shuffle : {false, true}) {
    for (size_t epoch : {size_t{0}, size_t{1}}) {
      if (!shuffle && epoch == 1) continue;
      std::cout << (shuffle ? "   shuffle, seed 0, epoch " + std::to_string(epoch) + ": "
                            : "   no shuffle:              ");
      for (int r = 0; r < kWorld; ++r) {
        glass::data::DistributedSampler s(kWorld, r, shuffle, /*seed=*/0);
        s.set_epoch(epoch);
        std::cout << (r ? "  " : "") << "rank " << r << " " << list(s.indices(10, 0));
      }
      std::cout << "\n";
    }
  }
  std::cout << "   the shuffle behind epoch 0, data::shuffled_order(10, seed 0 + epoch 0): "
            << list(glass::data::shuffled_order(10, 0)) << "\n";

  const DataSet data = make_data(kExamples, 1234);
  std::vector<RankLog> logs(kWorld);
  dist::run_threads(kWorld, [&](int rank) {
    dist::init_process_group("threads");
    train_rank(mlp_from_seed(100 + rank), data, logs[rank]);
    dist::destroy_process_group();
  });

  std::cout << "1. replica: each rank builds the MLP from its own seed (100 + rank); "
               "fc1.weight[0][0..2]:\n";
  for (int r = 0; r < kWorld; ++r)
    std::cout << "   rank " << r << "  before DistributedDataParallel(model) "
              << first_values(glass::tensor(std::vector<float>(logs[r].before)), 3) << "  after "
              << first_values(glass::tensor(std::vector<float>(logs[r].after)), 3) << "\n";
  std::cout << "2. scatter: " << kExamples << " examples, DistributedSampler(shuffle, seed 0); "
            << "each rank's first batch of " << kLocalBatch << ":\n";
  for (int r = 0; r < kWorld; ++r)
    std::cout << "   rank " << r << "  "
              << list(std::vector<size_t>(logs[r].indices.begin(),
                                          logs[r].indices.begin() + kLocalBatch))
              << "\n";
  std::cout << "3. forward/backward on the slice (step 1): local loss, and fc3.bias.grad[0] "
               "before the all-reduce:\n";
  double mean_own = 0;
  for (int r = 0; r < kWorld; ++r) {
    std::cout << "   rank " << r << "  loss " << fixed(logs[r].local_loss, 4) << "  gradient "
              << fixed(logs[r].own_grad, 6) << "\n";
    mean_own += logs[r].own_grad / kWorld;
  }
  bool same_grad = true;
  for (int r = 1; r < kWorld; ++r) same_grad &= logs[r].synced_grad == logs[0].synced_grad;
  std::cout << "4. all-reduce: after backward fc3.bias.grad[0] = " << fixed(logs[0].synced_grad, 6)
            << " on every rank: " << yes_no(same_grad)
            << "; the mean of the three: " << fixed(mean_own, 6) << "\n";

  bool bitwise = true;
  for (int s = 0; s < kSteps; ++s)
    for (int r = 1; r < kWorld; ++r)
      for (size_t i = 0; i < logs[0].params[s].size(); ++i)
        bitwise &= logs[r].params[s][i].equal(logs[0].params[s][i]);
  std::cout << "5. update: SGD(lr 0.05, momentum 0.9), " << kSteps << " steps; ranks bitwise "
            << "equal after every step: " << yes_no(bitwise) << "\n";
  const std::vector<Tensor> reference = train_one_process(data, logs);
  double worst = 0;
  for (size_t i = 0; i < reference.size(); ++i)
    worst = std::max(worst, max_abs_diff(logs[0].params[kSteps - 1][i], reference[i]));
  std::cout << "one process, same start, each step on the global batch of " << kWorld * kLocalBatch
            << ": max |DDP - one process| over all parameters " << magnitude(worst) << "\n";
  std::cout << "fc1.weight[0][0..2] after " << kSteps
            << " steps, on every rank: " << first_values(logs[0].params.back()[0], 3) << "\n";
  std::cerr << "[value] max |DDP - one process| after " << kSteps << " steps = " << worst << "\n";
}

// [SECTION] 2. the ring by hand ----------------------------------------------------------

int mod(int a, int n) { return ((a % n) + n) % n; }

// Chunk c of a flat tensor cut into n chunks (distributed/ring.h's ring_chunk).
Tensor chunk(const Tensor& flat, int n, int c) {
  const dist::RingChunk k = dist::ring_chunk(flat.numel(), n, c);
  return flat.narrow(0, k.begin, k.length);
}

// The ring all-reduce of distributed/ring.cpp, step by step, writing a copy of this rank's
// tensor into snapshots[step][rank] after every step (snapshots[0]: the start).
void ring_by_hand(dist::ProcessGroup& group, Tensor& t,
                  std::vector<std::vector<Tensor>>& snapshots) {
  const int n = group.size(), r = group.rank();
  const int right = mod(r + 1, n), left = mod(r - 1, n);
  Tensor flat = t.view({-1});
  snapshots[0][r] = t.clone();
  int step = 1;
  // One step: post the send right and the receive from the left, then wait for both.
  auto exchange = [&](int send_c, Tensor into) {
    std::vector<Tensor> out{chunk(flat, n, send_c)}, in{into};
    auto sent = group.send(out, right);
    auto received = group.recv(in, left);
    received->wait();
    sent->wait();
  };
  // Reduce-scatter: pass chunk r − s on, add your part to the chunk r − s − 1 that arrives.
  for (int s = 0; s < n - 1; ++s, ++step) {
    const int c = mod(r - s - 1, n);
    Tensor incoming = glass::empty_like(chunk(flat, n, c));
    exchange(mod(r - s, n), incoming);
    chunk(flat, n, c).add_(incoming);
    snapshots[step][r] = t.clone();
  }
  // All-gather: pass the finished chunks round; each arrives straight in its place.
  for (int s = 0; s < n - 1; ++s, ++step) {
    exchange(mod(r + 1 - s, n), chunk(flat, n, mod(r - s, n)));
    snapshots[step][r] = t.clone();
  }
}

// The naive all-reduce: everyone sends everything to rank 0, which adds and sends the sum
// back to everyone. Rank 0 sends and receives (n − 1) · size.
void gather_then_broadcast(dist::ProcessGroup& group, Tensor& t) {
  const int n = group.size();
  if (group.rank() == 0) {
    Tensor incoming = glass::empty_like(t);
    for (int src = 1; src < n; ++src) {
      recv(group, incoming, src);
      t.add_(incoming);
    }
    for (int dst = 1; dst < n; ++dst) send(group, t, dst);
  } else {
    send(group, t, 0);
    recv(group, t, 0);
  }
}

std::string row_of(const Tensor& t) {
  std::ostringstream os;
  Tensor flat = t.reshape({-1}).contiguous();
  for (int64_t i = 0; i < flat.numel(); ++i) os << std::setw(5) << flat.data_ptr<int64_t>()[i];
  return os.str();
}

void ring_schedule_and_sums() {
  constexpr int n = 4;
  section("2. the ring all-reduce by hand, n = 4");
  std::cout << "the tensor is cut into 4 chunks; at each of the 2(n-1) = 6 steps every rank "
               "sends one chunk to its right neighbour:\n";
  std::cout << "step  phase            rank 0 -> 1  rank 1 -> 2  rank 2 -> 3  rank 3 -> 0\n";
  for (int step = 0; step < 2 * (n - 1); ++step) {
    const bool scatter = step < n - 1;
    const int s = scatter ? step : step - (n - 1);
    std::cout << std::setw(4) << step + 1 << "  " << (scatter ? "reduce-scatter" : "all-gather    ")
              << "  ";
    for (int r = 0; r < n; ++r)
      std::cout << (r ? "      " : " ") << "chunk "
                << (scatter ? mod(r - s, n) : mod(r + 1 - s, n));
    std::cout << "\n";
  }

  // Rank r starts with 10^r in every element (element c is chunk c), so each partial sum
  // spells out which ranks it holds: 1101 = ranks 0, 2 and 3.
  std::vector<std::vector<Tensor>> snapshots(2 * n - 1, std::vector<Tensor>(n));
  std::vector<Tensor> library(n), allreduce(n);
  dist::run_threads(n, [&](int rank) {
    auto group = threads_group("ring");
    const int64_t start = static_cast<int64_t>(std::pow(10, rank));
    Tensor t = glass::full({n}, start, glass::kLong);
    ring_by_hand(*group, t, snapshots);
    library[rank] = glass::full({n}, start, glass::kLong);
    dist::ring_all_reduce(*group, library[rank]);
    allreduce[rank] = glass::full({n}, start, glass::kLong);
    group->allreduce(allreduce[rank])->wait();
  });
  std::cout << "partial sums: rank r starts with 10^r in every element, element c is chunk c\n";
  std::cout << std::setw(17) << "";
  for (int r = 0; r < n; ++r) std::cout << std::setw(20) << "rank " + std::to_string(r);
  std::cout << "\n";
  for (size_t step = 0; step < snapshots.size(); ++step) {
    std::string label = step == 0 ? "start" : "after step " + std::to_string(step);
    std::cout << "   " << std::left << std::setw(14) << label << std::right;
    for (int r = 0; r < n; ++r) std::cout << row_of(snapshots[step][r]);
    std::cout << "\n";
  }
  bool same = true;
  for (int r = 0; r < n; ++r)
    same &= snapshots.back()[r].equal(library[r]) && library[r].equal(allreduce[r]);
  std::cout << "after step 3 rank r holds the whole sum of chunk r + 1; the all-gather copies it "
               "round\n";
  std::cout << "equal to distributed::ring_all_reduce and to the group's allreduce on every rank: "
            << yes_no(same) << "\n";
}

// One all-reduce of `bytes` on n ranks, counted; returns what each rank sent and received
// (in bytes) and the slowest rank's time.
struct Traffic {
  std::vector<int64_t> sent, received;
  double ms = 0;
};
Traffic measure(int n, int64_t bytes, bool ring, dist::ThreadsLinkModel link = {}) {
  Traffic traffic{std::vector<int64_t>(n), std::vector<int64_t>(n), 0};
  std::mutex mutex;
  dist::run_threads(n, [&](int rank) {
    auto counted = std::make_shared<glass::lessons::CountingGroup>(threads_group("bytes", link));
    Tensor t = glass::full({bytes / 4}, 1.0);
    counted->barrier()->wait();  // start together (the link's latency is 0: no wait here)
    const auto t0 = Clock::now();
    if (ring)
      dist::ring_all_reduce(*counted, t);
    else
      gather_then_broadcast(*counted, t);
    const double ms = ms_since(t0);
    std::lock_guard<std::mutex> lock(mutex);
    traffic.sent[rank] = counted->bytes_sent();
    traffic.received[rank] = counted->bytes_received();
    traffic.ms = std::max(traffic.ms, ms);
  });
  return traffic;
}

std::string mib(int64_t bytes) { return fixed(static_cast<double>(bytes) / (1 << 20), 2) + " MiB"; }

void bandwidth() {
  std::cout << "bytes passed to send() for one all-reduce of 1 MiB (a CountingGroup wraps the "
               "threads group):\n";
  std::cout << "   n   ring: each rank sends   2(n-1)/n x 1 MiB   naive: rank 0 sends   "
               "rank 0 receives   rank 1 sends\n";
  const int64_t size = 1 << 20;
  for (int n : {2, 4, 8}) {
    const Traffic ring = measure(n, size, true);
    const Traffic naive = measure(n, size, false);
    bool even = true;
    for (int r = 1; r < n; ++r) even &= ring.sent[r] == ring.sent[0];
    std::cout << "   " << n << std::setw(25) << mib(ring.sent[0]) + (even ? "" : " (uneven)")
              << std::setw(19) << fixed(2.0 * (n - 1) / n, 2) + " MiB" << std::setw(22)
              << mib(naive.sent[0]) << std::setw(18) << mib(naive.received[0]) << std::setw(15)
              << mib(naive.sent[1]) << "\n";
  }
  // Time: the link model charges a sender bytes / bandwidth for each message, one message
  // after another on its thread (its outgoing wire).
  dist::ThreadsLinkModel link;
  link.bytes_per_second = 100e6;
  const double t1 = size / link.bytes_per_second * 1e3;  // one MiB over one link, in ms
  std::cout << "timed on a simulated link of 100 MB/s (on stderr): the ring's time is its "
               "busiest link's, 6 x 1/4 MiB; the naive one's, rank 0's\n";
  const Traffic ring = measure(4, size, true, link);
  const Traffic naive = measure(4, size, false, link);
  std::cerr << "[time] n = 4, 1 MiB at 100 MB/s: ring " << fixed(ring.ms, 1)
            << " ms (6 x 1/4 MiB: " << fixed(1.5 * t1, 1) << " ms); gather-then-broadcast "
            << fixed(naive.ms, 1) << " ms (1 MiB in, then 3 MiB out of rank 0: " << fixed(4 * t1, 1)
            << " ms)\n";
}

// [SECTION] 3. buckets and overlap -------------------------------------------------------

std::string bucket_line(const dist::Reducer& reducer, const std::vector<size_t>& bucket) {
  std::ostringstream os;
  int64_t bytes = 0;
  for (size_t k = 0; k < bucket.size(); ++k) {
    const auto& [name, p] = reducer.parameters()[bucket[k]];
    os << (k ? ", " : "") << name;
    bytes += p.nbytes();
  }
  os << "  (" << mib(bytes) << ")";
  return os.str();
}

void buckets_and_overlap() {
  section("3. buckets, and the all-reduce under backward");
  std::vector<std::string> lines;
  std::vector<dist::ReducerTimeline> timelines(2);
  std::vector<double> ms_ddp(2), ms_local(2);
  dist::ThreadsLinkModel link;
  link.latency = std::chrono::microseconds(100);
  link.bytes_per_second = 1e9;
  const DataSet data = make_data(128, 7);
  dist::run_threads(
      2,
      [&](int rank) {
        dist::init_process_group("threads");
        MLP model = mlp_from_seed(100);
        // A post-accumulate-grad hook runs once p.grad() holds this backward's gradient; the
        // reducer hangs its bucket bookkeeping on the same hook. This one only writes down
        // the order (shared_ptr: the hooks live as long as the model).
        auto hooked = std::make_shared<std::vector<std::string>>();
        for (const auto& [name, p] : model->named_parameters()) {
          const std::string key = name;
          glass::autograd::register_post_accumulate_grad_hook(
              p, [hooked, key](const Tensor&) { hooked->push_back(key); });
        }
        DistributedDataParallel ddp(model);
        const dist::Reducer& reducer = ddp.reducer();
        auto say = [&](const std::string& line) {
          if (rank == 0) lines.push_back(line);
        };
        say("DDP's buckets for the MLP (the first capped at 1 MiB, then 25 MiB; parameters in "
            "reverse order):");
        for (size_t b = 0; b < reducer.buckets().size(); ++b)
          say("   bucket " + std::to_string(b) + ": " + bucket_line(reducer, reducer.buckets()[b]));
        Tensor x = data.x.narrow(0, rank * 64, 64), y = data.y.narrow(0, rank * 64, 64);
        for (int step = 0; step < 3; ++step) {
          model->zero_grad();
          const auto t0 = Clock::now();
          nn::functional::cross_entropy(ddp(x), y).backward();
          ms_ddp[rank] = ms_since(t0);
          if (step == 0) {
            std::string order;
            for (size_t i : reducer.ready_order())
              order += (order.empty() ? "" : ", ") + reducer.parameters()[i].first;
            say("the order gradients became ready in step 1: " + order);
            std::string seen;
            for (const std::string& name : *hooked) seen += (seen.empty() ? "" : ", ") + name;
            say("the same, from a post-accumulate-grad hook of our own: " + seen);
          }
          if (step == 1) {
            say("rebuilt before step 2 in that order: " +
                std::string(yes_no(reducer.buckets_rebuilt())));
            for (size_t b = 0; b < reducer.buckets().size(); ++b)
              say("   bucket " + std::to_string(b) + ": " +
                  bucket_line(reducer, reducer.buckets()[b]));
          }
        }
        timelines[rank] = reducer.last_timeline();
        // The same backward with no communication, for the overlap figure on stderr.
        model->zero_grad();
        auto local_only = ddp.no_sync();
        const auto t0 = Clock::now();
        nn::functional::cross_entropy(ddp(x), y).backward();
        ms_local[rank] = ms_since(t0);
        dist::destroy_process_group();
      },
      link);
  for (const std::string& line : lines) std::cout << line << "\n";

  const dist::ReducerTimeline& t = timelines[0];
  bool started_early = true, in_order = true, finished = true;
  for (const dist::ReducerTimeline& tl : timelines) {
    started_early &= tl.buckets.at(0).ready < tl.backward_done;
    for (size_t b = 1; b < tl.buckets.size(); ++b)
      in_order &= tl.buckets[b - 1].ready <= tl.buckets[b].ready;
    for (const auto& b : tl.buckets) finished &= b.finished <= tl.all_done;
  }
  std::cout << "the reducer's timeline of step 3 (ReducerTimeline), on both ranks:\n"
            << "   bucket 0's all-reduce started before backward ended (fc1's gradients still "
               "to compute): "
            << yes_no(started_early) << "\n"
            << "   the buckets started in bucket order: " << yes_no(in_order) << "\n"
            << "   every bucket had finished when backward() returned: " << yes_no(finished)
            << "\n";
  // The times behind those facts, rank 0's (seconds since the first gradient, in ms).
  std::cerr << "[time] step 3 on 2 ranks, link 0.1 ms and 1 GB/s: bucket 0's all-reduce "
            << fixed(t.buckets[0].ready * 1e3, 2) << " to " << fixed(t.buckets[0].finished * 1e3, 2)
            << " ms, bucket 1's " << fixed(t.buckets[1].ready * 1e3, 2) << " to "
            << fixed(t.buckets[1].finished * 1e3, 2) << " ms; backward's last node done at "
            << fixed(t.backward_done * 1e3, 2) << " ms; backward() returned at "
            << fixed(t.all_done * 1e3, 2)
            << " ms. The same backward with no_sync: " << fixed(ms_local[0], 2)
            << " ms; with DDP: " << fixed(ms_ddp[0], 2) << " ms\n";
}

// [SECTION] 4. no_sync -------------------------------------------------------------------

void gradient_accumulation() {
  section("4. no_sync: gradient accumulation");
  const DataSet data = make_data(16, 99);
  std::vector<uint64_t> collectives(4);  // [rank * 2 + micro-batch]
  std::vector<Tensor> inside(2), grads(2);
  dist::run_threads(2, [&](int rank) {
    dist::init_process_group("threads");
    MLP model = mlp_from_seed(100 * (rank + 1));
    DistributedDataParallel ddp(model);
    auto& group = *ddp.process_group();
    // Rank r's 8 examples are rows [8r, 8r + 8): micro-batches of 4. Each loss is divided by
    // the number of micro-batches, so the accumulated gradient is the mean over all 8.
    auto micro_batch = [&](int m) {
      Tensor x = data.x.narrow(0, rank * 8 + m * 4, 4), y = data.y.narrow(0, rank * 8 + m * 4, 4);
      (nn::functional::cross_entropy(ddp(x), y) / 2).backward();
    };
    uint64_t seq = group.sequence_number();
    {
      auto accumulate = ddp.no_sync();
      micro_batch(0);
    }
    collectives[rank * 2] = group.sequence_number() - seq;
    inside[rank] = model->fc3->bias.grad().clone();
    seq = group.sequence_number();
    micro_batch(1);
    collectives[rank * 2 + 1] = group.sequence_number() - seq;
    grads[rank] = model->fc3->weight.grad().clone();
    dist::destroy_process_group();
  });
  MLP reference = mlp_from_seed(100);
  nn::functional::cross_entropy(reference(data.x), data.y).backward();
  std::cout << "2 ranks, 8 examples each, in 2 micro-batches of 4 (each loss / 2):\n"
            << "   micro-batch 1 inside ddp.no_sync(): collectives issued " << collectives[0]
            << " and " << collectives[2]
            << "; fc3.bias.grad differs between the ranks: " << yes_no(!inside[0].equal(inside[1]))
            << "\n"
            << "   micro-batch 2, synced: collectives issued " << collectives[1] << " and "
            << collectives[3]
            << " (one per bucket); ranks equal: " << yes_no(grads[0].equal(grads[1])) << "\n";
  const double diff = max_abs_diff(grads[0], reference->fc3->weight.grad());
  std::cout << "   fc3.weight.grad against one process's gradient on all 16 examples: max "
               "|difference| "
            << magnitude(diff) << "\n";
  std::cerr << "[value] no_sync: max |accumulated - one batch| = " << diff << "\n";
}

// [SECTION] main ---------------------------------------------------------------------------

// Under glassrun (RANK and WORLD_SIZE set): section 1's training, on gloo, one rank per
// process. glassrun prefixes each line with its rank.
int run_under_glassrun() {
  dist::init_process_group("gloo");
  const int rank = dist::get_rank();
  const DataSet data = make_data(kExamples, 1234);
  RankLog log;
  train_rank(mlp_from_seed(100 + rank), data, log);
  std::cout << "rank " << rank << " of " << dist::get_world_size() << " on gloo: loss at step 1 "
            << fixed(log.local_loss, 4) << ", fc1.weight[0][0..2] after " << kSteps << " steps "
            << first_values(log.params.back()[0], 3) << "\n";
  dist::destroy_process_group();
  return 0;
}

}  // namespace

int main() {
  try {
    if (std::getenv("RANK") != nullptr && std::getenv("WORLD_SIZE") != nullptr)
      return run_under_glassrun();
    five_steps();
    ring_schedule_and_sums();
    bandwidth();
    buckets_and_overlap();
    gradient_accumulation();
  } catch (const std::exception& e) {
    std::cerr << "lesson_10_data_parallel: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
