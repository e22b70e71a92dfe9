// tests/distributed/worker/mpi_scenarios.cpp — ranks started by mpirun, meeting through
// init_process_group("mpi"): every collective against results worked out by hand (integers,
// so exact), a send/recv ring, new_group, and the written-out ring against MPI_Allreduce
// (exact on integers, within the bound of a different summation order on floats).
// Also the progress thread (mpi_progress). What mpi_test.cpp checks: each rank prints
// "ok rank R of N" last, or names the first result that was wrong (on stderr) and exits 1.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/ops/factories.h"
#include "distributed/distributed.h"
#include "distributed/ring.h"
#include "scenarios.h"

namespace glass::distributed::worker {
namespace {

Tensor longs(const std::vector<int64_t>& values) {
  Tensor t = empty({static_cast<int64_t>(values.size())}, TensorOptions().dtype(kLong));
  for (size_t i = 0; i < values.size(); ++i) t.data_ptr<int64_t>()[i] = values[i];
  return t;
}

std::string show(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::string s = "[";
  for (int64_t i = 0; i < c.numel(); ++i)
    s += (i ? ", " : "") + std::to_string(c.data_ptr<int64_t>()[i]);
  return s + "]";
}

void expect(const Tensor& got, const std::vector<int64_t>& want, const std::string& what) {
  GLASS_CHECK(show(got) == show(longs(want)), what, ": got ", show(got), ", expected ",
              show(longs(want)));
}

}  // namespace

int mpi_collectives(const Args& args) {
  exit_after(20);
  init_process_group("mpi");
  const int64_t r = get_rank();
  const int64_t n = get_world_size();
  const std::string me = "rank " + std::to_string(r) + " of " + std::to_string(n);
  if (!args.empty()) {
    GLASS_CHECK(n == std::stoll(args[0]), me, ": mpirun started ", args[0], " ranks");
  }
  const int64_t tri = n * (n + 1) / 2;  // 1 + 2 + ... + n

  // Rank r contributes [r + 1, 10 (r + 1)].
  Tensor t = longs({r + 1, 10 * (r + 1)});
  all_reduce(t);
  expect(t, {tri, 10 * tri}, me + ": allreduce(SUM)");
  t = longs({r + 1, -(r + 1)});
  all_reduce(t, ReduceOp::MAX);
  expect(t, {n, -1}, me + ": allreduce(MAX)");
  t = longs({r + 1, -(r + 1)});
  all_reduce(t, ReduceOp::MIN);
  expect(t, {1, -n}, me + ": allreduce(MIN)");
  t = longs({r + 1, 2});
  all_reduce(t, ReduceOp::PRODUCT);
  int64_t factorial = 1;
  for (int64_t k = 2; k <= n; ++k) factorial *= k;
  expect(t, {factorial, int64_t{1} << n}, me + ": allreduce(PRODUCT)");
  t = longs({r + 1, 10 * (r + 1)});
  all_reduce(t, ReduceOp::AVG);  // integer division of the sum
  expect(t, {tri / n, 10 * tri / n}, me + ": allreduce(AVG)");
  Tensor f = full({3}, static_cast<double>(r + 1), TensorOptions().dtype(kFloat));
  all_reduce(f);
  GLASS_CHECK(f.data_ptr<float>()[2] == static_cast<float>(tri), me, ": allreduce float32: got ",
              f.data_ptr<float>()[2], ", expected ", tri);

  // The last rank broadcasts [7, 8, 9].
  t = r == n - 1 ? longs({7, 8, 9}) : longs({0, 0, 0});
  broadcast(t, static_cast<int>(n - 1));
  expect(t, {7, 8, 9}, me + ": broadcast from the last rank");

  // Rank r gives [r, 100 r]; everyone gets [0, 0, 1, 100, 2, 200, ...].
  Tensor gathered = zeros({2 * n}, TensorOptions().dtype(kLong));
  all_gather_into_tensor(gathered, longs({r, 100 * r}));
  std::vector<int64_t> want;
  for (int64_t k = 0; k < n; ++k) want.insert(want.end(), {k, 100 * k});
  expect(gathered, want, me + ": allgather");

  // Rank k's block b is [k + b, k b]; rank r gets the sum over k of block r.
  std::vector<int64_t> blocks;
  for (int64_t b = 0; b < n; ++b) blocks.insert(blocks.end(), {r + b, r * b});
  Tensor scattered = zeros({2}, TensorOptions().dtype(kLong));
  reduce_scatter_tensor(scattered, longs(blocks));
  expect(scattered, {n * (n - 1) / 2 + n * r, r * n * (n - 1) / 2}, me + ": reduce_scatter");

  // Rank 0 gathers every rank's [r r].
  std::vector<Tensor> list;
  if (r == 0)
    for (int64_t k = 0; k < n; ++k) list.push_back(zeros({1}, TensorOptions().dtype(kLong)));
  gather(longs({r * r}), list, 0);
  for (int64_t k = 0; r == 0 && k < n; ++k)
    expect(list[static_cast<size_t>(k)], {k * k}, me + ": gather, from rank " + std::to_string(k));

  // The last rank scatters [1000 + k] to rank k.
  list.clear();
  if (r == n - 1)
    for (int64_t k = 0; k < n; ++k) list.push_back(longs({1000 + k}));
  Tensor piece = zeros({1}, TensorOptions().dtype(kLong));
  scatter(piece, list, static_cast<int>(n - 1));
  expect(piece, {1000 + r}, me + ": scatter from the last rank");

  barrier();

  if (n > 1) {
    // A ring of send/recv: each rank sends [r, 2r] right and receives from its left.
    const int right = static_cast<int>((r + 1) % n);
    const int left = static_cast<int>((r + n - 1) % n);
    Tensor outgoing = longs({r, 2 * r});
    Tensor incoming = zeros({2}, TensorOptions().dtype(kLong));
    auto sent = isend(outgoing, right, nullptr, /*tag=*/5);
    auto received = irecv(incoming, left, nullptr, /*tag=*/5);
    received->wait();
    sent->wait();
    GLASS_CHECK(received->is_completed() && sent->is_completed(), me, ": p2p not completed");
    expect(incoming, {left, 2 * left}, me + ": recv from the left neighbour");
  }

  // The written-out ring against MPI's own allreduce, on a size n does not divide.
  const int64_t numel = 1003;
  Tensor ring = empty({numel}, TensorOptions().dtype(kLong));
  for (int64_t i = 0; i < numel; ++i) ring.data_ptr<int64_t>()[i] = (r + 1) * 1000003 + i * (r + 7);
  Tensor library = ring.clone();
  ring_all_reduce(*default_group(), ring);
  all_reduce(library);
  GLASS_CHECK(show(ring) == show(library), me, ": ring_all_reduce differs from MPI_Allreduce");
  GLASS_CHECK(ring.data_ptr<int64_t>()[5] == tri * 1000003 + 5 * (tri + 6 * n), me,
              ": ring_all_reduce element 5 is ", ring.data_ptr<int64_t>()[5]);

  // On floats, MPI adds in an order of its own: the ring agrees within the bound of two
  // summation orders, 2(n − 1)·u·Σ|x| (u = 2^-24; tests/distributed/test_util.h says why),
  // every rank's input known to every rank.
  auto input = [](int64_t rank, int64_t i) {
    return static_cast<float>(std::sin(0.37 * static_cast<double>(i) + static_cast<double>(rank)) *
                              static_cast<double>(rank + 1));
  };
  Tensor ring_f = empty({numel}, TensorOptions().dtype(kFloat));
  for (int64_t i = 0; i < numel; ++i) ring_f.data_ptr<float>()[i] = input(r, i);
  Tensor library_f = ring_f.clone();
  ring_all_reduce(*default_group(), ring_f);
  all_reduce(library_f);
  for (int64_t i = 0; i < numel; ++i) {
    double abs_sum = 0;
    for (int64_t k = 0; k < n; ++k) abs_sum += std::fabs(input(k, i));
    const double bound = 2.0 * static_cast<double>(n - 1) * 0x1.0p-24 * abs_sum;
    const double diff =
        std::fabs(double(ring_f.data_ptr<float>()[i]) - library_f.data_ptr<float>()[i]);
    GLASS_CHECK(diff <= bound, me, ": float ring_all_reduce element ", i, " is ",
                ring_f.data_ptr<float>()[i], ", MPI_Allreduce's ", library_f.data_ptr<float>()[i],
                ": further apart than 2(n-1)u*sum|x| = ", bound);
  }

  // new_group: every rank reversed (rank i of the new group is ranks[i]), then the even ranks.
  std::vector<int> reversed;
  for (int64_t k = n - 1; k >= 0; --k) reversed.push_back(static_cast<int>(k));
  auto backwards = new_group(reversed);
  GLASS_CHECK(backwards && backwards->rank() == n - 1 - r && backwards->size() == n, me,
              ": new_group(reversed) gave rank ", backwards ? backwards->rank() : -1);
  t = longs({backwards->rank()});
  broadcast(t, 0, backwards);  // its rank 0 is world rank n - 1
  expect(t, {0}, me + ": broadcast in the reversed group");
  std::vector<int> evens;
  int64_t even_sum = 0;
  for (int64_t k = 0; k < n; k += 2) {
    evens.push_back(static_cast<int>(k));
    even_sum += k + 1;
  }
  auto even_group = new_group(evens);
  GLASS_CHECK((even_group != nullptr) == (r % 2 == 0), me, ": new_group(evens) membership");
  if (even_group) {
    t = longs({r + 1});
    all_reduce(t, ReduceOp::SUM, even_group);
    expect(t, {even_sum}, me + ": allreduce in the even ranks' group");
  }
  even_group.reset();
  backwards.reset();

  barrier();
  destroy_process_group();
  std::printf("ok %s\n", me.c_str());
  std::fflush(stdout);
  return 0;
}

// Two ranks. A recv completes with nobody waiting on it (MPI moves it only because the
// progress thread keeps testing), and a recv that nothing matches fails at the group's
// timeout, naming the peer and the tag, with the group still usable afterwards. Last, the
// group is destroyed while a timed-out recv's cancel is not yet confirmed by MPI.
int mpi_progress(const Args&) {
  exit_after(20);
  InitOptions opts;
  opts.timeout = std::chrono::milliseconds(400);
  init_process_group("mpi", opts);
  const int r = get_rank();
  const std::string me = "rank " + std::to_string(r) + " of " + std::to_string(get_world_size());
  GLASS_CHECK(get_world_size() == 2, me, ": mpi_progress needs 2 ranks");

  Tensor message = zeros({4}, TensorOptions().dtype(kLong));
  std::shared_ptr<Work> incoming;
  if (r == 0) incoming = irecv(message, 1, nullptr, /*tag=*/9);
  barrier();  // rank 0's recv is posted; rank 1 sends only now
  if (r == 1) isend(longs({1, 2, 3, 4}), 0, nullptr, /*tag=*/9)->wait();
  if (r == 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!incoming->is_completed() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the test's own poll
    GLASS_CHECK(incoming->is_completed(), me, ": the recv never completed without a wait()");
    expect(message, {1, 2, 3, 4}, me + ": recv completed by the progress thread");

    Tensor never = zeros({2}, TensorOptions().dtype(kLong));
    std::string error;
    try {
      irecv(never, 1, nullptr, /*tag=*/11)->wait(std::chrono::seconds(5));  // MPI fails it first
    } catch (const std::exception& e) {
      error = e.what();
    }
    GLASS_CHECK(error.find("recv from rank 1 (tag 11) timed out after 400 ms") != std::string::npos,
                me, ": an unmatched recv should time out naming rank 1 and tag 11, got: '", error,
                "'");
  }
  // Rank 1 reaches this barrier while rank 0 still waits out its recv's 400 ms: a wait
  // longer than the group's timeout.
  barrier(nullptr, /*async_op=*/true)->wait(std::chrono::seconds(5));  // still usable
  Tensor t = longs({r + 1});
  all_reduce(t);
  expect(t, {3}, me + ": allreduce after a timed-out recv");
  if (r == 0) {
    // A group destroyed right after a recv timed out, before the progress thread tests
    // again: the request MPI_Cancel was called on at the deadline is still in the list.
    // The Work's callback holds the progress thread (callbacks run on it) for 300 ms, far
    // longer than this thread takes to start the destroy; ~Progress must not cancel that
    // request a second time (OpenMPI's ob1 crashes on a second MPI_Cancel of one recv).
    Tensor late = zeros({2}, TensorOptions().dtype(kLong));
    std::shared_ptr<Work> work = irecv(late, 1, nullptr, /*tag=*/13);
    work->then([](Work&) { std::this_thread::sleep_for(std::chrono::milliseconds(300)); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!work->is_completed() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    GLASS_CHECK(work->is_completed() && !work->is_success(), me,
                ": the recv of tag 13 should have failed at the group's timeout");
  }
  destroy_process_group();
  std::printf("ok %s\n", me.c_str());
  std::fflush(stdout);
  return 0;
}

// Two ranks; rank 1 skips the allreduce. Rank 0's Work fails at the group's timeout naming
// the op and its number; its MPI call stays stuck (MPI has no timeouts), so on exit the
// backend aborts the job instead of finalising MPI under it, and mpirun ends every rank.
int mpi_skip(const Args&) {
  exit_after(20);
  InitOptions opts;
  opts.timeout = std::chrono::milliseconds(300);
  init_process_group("mpi", opts);
  if (get_rank() == 1) {
    std::printf("rank 1 skips allreduce #0\n");
    std::fflush(stdout);
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // until mpirun ends us
  }
  Tensor t = longs({1});
  all_reduce(t);  // throws "allreduce #0 timed out after 300 ms"
  return 0;
}

// Two ranks that return from main with their groups alive (no destroy_process_group) and
// each with a recv nothing matches, so the progress thread is busy inside MPI_Testsome when
// the exit handler runs. It must stop every group's threads before MPI_Finalize: the job
// then ends with status 0, not a crash, a hang or an abort.
int mpi_exit_live(const Args&) {
  exit_after(20);
  init_process_group("mpi");
  const int r = get_rank();
  const std::string me = "rank " + std::to_string(r) + " of " + std::to_string(get_world_size());
  GLASS_CHECK(get_world_size() == 2, me, ": mpi_exit_live needs 2 ranks");
  std::shared_ptr<ProcessGroup> both = new_group({0, 1});
  Tensor t = longs({r + 1});
  all_reduce(t, ReduceOp::SUM, both);
  expect(t, {3}, me + ": allreduce on a new group");
  Tensor never = zeros({2}, TensorOptions().dtype(kLong));  // the pending recv keeps it alive
  std::shared_ptr<Work> unmatched = irecv(never, 1 - r, nullptr, /*tag=*/21);
  barrier();  // both recvs are posted and being tested
  GLASS_CHECK(!unmatched->is_completed(), me, ": a recv nothing sends completed");
  std::printf("ok %s, exiting with its groups alive\n", me.c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace glass::distributed::worker
