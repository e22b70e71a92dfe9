// lessons/10_data_parallel/exercises/exercises_test.cpp — grades lesson 10's exercises on the
// threads backend (ranks are threads; every wait is bounded by run_threads' timeout, so a
// wrong answer fails instead of hanging).
// Invariant: an answer passes only if its own code did the work, the way the exercise asks:
//  - exercise 1 runs on a CountingGroup (lessons/common/counting_group.h) round a threads group,
//    its sends completing only once the receiver has posted the recv (send_rendezvous.h), so
//    a ring that waits on its send before posting its recv fails as it would on gloo or MPI:
//    the values must be the sum (exact for int64), no collective may have been issued
//    (sequence_number() stays 0), every message goes to the right neighbour and comes from
//    the left one, and each rank sends exactly 2(n−1)/n of the tensor's bytes;
//  - exercise 2 trains 3 steps on 2 ranks with the answer's hooks and must end where
//    DistributedDataParallel ends and where one process on the global batch ends;
//  - exercise 3 must equal DistributedSampler index for index over a grid of cases;
//  - the compiled answers may not call what the exercises ban: `nm -u` lists the functions
//    an object file calls but does not define, and ring_all_reduce, DistributedDataParallel,
//    Reducer, DistributedSampler and the ways to build a group of one's own must not be
//    among them; and the relocations of the ring's own function section (objdump -r,
//    followed through helpers and lambdas) must reach no collective.
// Each grader is a function returning "" or what was wrong, and each is shown rejecting the
// deliberately wrong answers of wrong_answers.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../common/answer_symbols.h"
#include "../../common/counting_group.h"
#include "distributed/backends/threads.h"
#include "distributed/ddp.h"
#include "distributed/distributed.h"
#include "exercises.h"
#include "nn/data/sampler.h"
#include "wrong_answers.h"

namespace glass::lesson10 {
namespace {

namespace dist = glass::distributed;
using lessons::Ban;
using lessons::banned_among;
using lessons::calls_reachable_from;
using lessons::CountingGroup;
using lessons::SendRendezvous;
using lessons::undefined_symbols;
constexpr std::chrono::seconds kTimeout{10};
// How long a ring's send waits for its receiver to post the recv: a right ring posts it at
// once, and one that waits on its own send first fails in this time, not kTimeout.
constexpr std::chrono::seconds kRendezvousTimeout{
    3};  // generous: CI runs tests two at a time on 2 cores

// A threads group for the calling rank-thread (inside run_threads).
std::shared_ptr<dist::ProcessGroup> threads_group() {
  const dist::ThreadsRendezvous* rv = dist::current_threads_rendezvous();
  return dist::make_threads_group(rv->store, rv->rank, rv->world_size, {});
}

// [SECTION] exercise 1: the ring ----------------------------------------------------------

using RingFn = std::function<void(dist::ProcessGroup&, Tensor&)>;

// Rank r's input: integers (exact sums whatever the order) or floats.
Tensor ring_input(int rank, int64_t numel, ScalarType dtype) {
  if (dtype == kLong) return arange(numel, kLong).mul(rank + 1).add(1000 * rank);
  Generator gen = make_generator(Device(kCPU), 17 + rank);
  return randn({numel}, gen);
}

// One all-reduce of `numel` elements on n ranks; "" or what was wrong.
std::string grade_ring_once(const RingFn& ring, int n, int64_t numel, ScalarType dtype) {
  std::ostringstream why;
  std::vector<Tensor> inputs, outputs(n);
  for (int r = 0; r < n; ++r) inputs.push_back(ring_input(r, numel, dtype));
  Tensor expected = zeros({numel}, dtype);
  for (const Tensor& x : inputs) expected.add_(x);
  std::vector<int64_t> sent(n);
  std::vector<uint64_t> collectives(n);
  std::vector<std::set<int>> to(n), from(n);
  // Every rank's group shares the board, so a send completes only once its recv is posted.
  auto board = std::make_shared<SendRendezvous>(kRendezvousTimeout);
  try {
    dist::run_threads(
        n,
        [&](int rank) {
          CountingGroup group(threads_group(), board);
          Tensor t = inputs[rank].clone();
          ring(group, t);
          outputs[rank] = t;
          sent[rank] = group.bytes_sent();
          collectives[rank] = group.sequence_number();
          to[rank] = group.sent_to();
          from[rank] = group.received_from();
        },
        {}, kTimeout);
  } catch (const std::exception& e) {
    return e.what();
  }
  const int64_t bytes = numel * static_cast<int64_t>(element_size(dtype));
  int64_t total = 0;
  for (int r = 0; r < n; ++r) {
    const bool exact = dtype == kLong;
    if (!(exact ? outputs[r].equal(expected) : outputs[r].allclose(expected, 1e-5, 1e-6)))
      why << "rank " << r << " ends with " << outputs[r] << ", not the sum " << expected << ". ";
    if (collectives[r] != 0)
      why << "rank " << r << " issued " << collectives[r] << " collective(s) on the group; "
          << "the ring uses send and recv only. ";
    const std::set<int> right{(r + 1) % n}, left{(r + n - 1) % n};
    if (!to[r].empty() && to[r] != right)
      why << "rank " << r << " sent to other ranks than its right neighbour " << (r + 1) % n
          << ". ";
    if (!from[r].empty() && from[r] != left)
      why << "rank " << r << " received from other ranks than its left neighbour "
          << (r + n - 1) % n << ". ";
    if (numel % n == 0 && sent[r] != 2 * (n - 1) * bytes / n)
      why << "rank " << r << " sent " << sent[r] << " bytes; a ring sends 2(n-1)/n of the " << bytes
          << " bytes, " << 2 * (n - 1) * bytes / n << ". ";
    total += sent[r];
  }
  if (n > 1 && total != 2 * (n - 1) * bytes)
    why << "the ranks sent " << total << " bytes in all; a ring's n ranks send 2(n-1) times the "
        << "tensor, " << 2 * (n - 1) * bytes << ". ";
  return why.str();
}

std::string grade_ring(const RingFn& ring) {
  struct Case {
    int n;
    int64_t numel;
    ScalarType dtype;
  };
  // Sizes n divides, sizes it does not, fewer elements than ranks, and floats.
  const std::vector<Case> cases{{2, 8, kLong},     {3, 12, kLong},  {4, 4096, kLong},
                                {3, 7, kLong},     {4, 2, kLong},   {4, 1, kLong},
                                {4, 1000, kFloat}, {5, 33, kFloat}, {1, 5, kLong}};
  for (const Case& c : cases) {
    std::string why = grade_ring_once(ring, c.n, c.numel, c.dtype);
    if (!why.empty())
      return "n = " + std::to_string(c.n) + ", " + std::to_string(c.numel) + " " +
             to_string(c.dtype) + " elements: " + why;
  }
  return "";
}

TEST(Lesson10Ring, MyRingAllReduceIsARing) { EXPECT_EQ(grade_ring(my_ring_all_reduce), ""); }

TEST(Lesson10Ring, TheGraderRejectsWhatIsNotARing) {
  EXPECT_NE(grade_ring(wrong::ring_reduce_scatter_only).find("not the sum"), std::string::npos);
  const std::string gather = grade_ring(wrong::ring_gather_to_rank_zero);
  EXPECT_NE(gather.find("other ranks than its right neighbour"), std::string::npos) << gather;
  EXPECT_NE(gather.find("bytes"), std::string::npos) << gather;
  EXPECT_NE(grade_ring(wrong::ring_everyone_to_everyone).find("sent"), std::string::npos);
  EXPECT_NE(grade_ring(wrong::ring_with_allreduce).find("collective"), std::string::npos);
  // The library's ring is a ring: only the symbol check below can tell it from yours.
  EXPECT_EQ(grade_ring(wrong::ring_from_the_library), "");
  // Its all-reduce on a fresh group is unseen, but it sent nothing: a dodge that also sent
  // the ring's bytes would pass here, and only the symbol checks below would catch it.
  const std::string own_group = grade_ring(wrong::ring_on_a_group_of_its_own);
  EXPECT_NE(own_group.find("sent 0 bytes"), std::string::npos) << own_group;
}

TEST(Lesson10Ring, TheGraderRejectsARingThatWaitsOnItsSendFirst) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string why = grade_ring(wrong::ring_send_then_recv);
  EXPECT_NE(why.find("posted no matching recv"), std::string::npos) << why;
  EXPECT_NE(why.find("before waiting for either"), std::string::npos) << why;
  // Failed at the rendezvous timeout, not at run_threads' much longer one.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, kTimeout / 2) << why;
}

// [SECTION] exercise 2: gradient-averaging hooks ------------------------------------------

using HookFn = std::function<void(nn::Module&, dist::ProcessGroup&)>;

// A small classifier (6 -> 5 -> 3), the same on every rank: the same seed.
nn::Sequential small_model() {
  manual_seed(3);
  nn::Sequential seq;
  seq->push_back(nn::Linear(6, 5));
  seq->push_back(nn::ReLU());
  seq->push_back(nn::Linear(5, 3));
  return seq;
}

struct Batch {
  Tensor x, y;
};
std::vector<Batch> global_batches() {  // 3 steps of 8 examples: 4 per rank
  Generator gen = make_generator(Device(kCPU), 11);
  std::vector<Batch> batches;
  for (int s = 0; s < 3; ++s) batches.push_back({randn({8, 6}, gen), randint(0, 3, {8}, gen)});
  return batches;
}

constexpr double kLr = 0.5;

// Trains on 2 rank-threads, each on its half of every batch; `setup` makes the model data
// parallel (the answer's hooks, or DDP). Returns each rank's parameters after the 3 steps.
std::vector<std::vector<Tensor>> train_two_ranks(
    const std::function<std::function<Tensor(const Tensor&)>(nn::Sequential&, dist::ProcessGroup&)>&
        setup) {
  const auto batches = global_batches();
  std::vector<std::vector<Tensor>> params(2);
  dist::run_threads(
      2,
      [&](int rank) {
        dist::init_process_group("threads");
        auto group = dist::default_group();
        // Each rank seeds and draws its own default generators (run_threads gives every
        // rank its own), so both build the same model at the same moment.
        nn::Sequential model = small_model();
        auto forward = setup(model, *group);
        optim::SGD sgd(model->parameters(), optim::SGDOptions(kLr));
        for (const Batch& b : batches) {
          sgd.zero_grad();
          nn::functional::cross_entropy(forward(b.x.narrow(0, 4 * rank, 4)),
                                        b.y.narrow(0, 4 * rank, 4))
              .backward();
          sgd.step();
        }
        for (const Tensor& p : model->parameters()) params[rank].push_back(p.detach().clone());
        dist::destroy_process_group();
      },
      {}, kTimeout);
  return params;
}

std::vector<Tensor> train_one_process() {
  nn::Sequential model = small_model();
  optim::SGD sgd(model->parameters(), optim::SGDOptions(kLr));
  for (const Batch& b : global_batches()) {
    sgd.zero_grad();
    nn::functional::cross_entropy(model->forward(b.x), b.y).backward();
    sgd.step();
  }
  return model->parameters();
}

std::string grade_hooks(const HookFn& hooks) {
  std::vector<std::vector<Tensor>> mine, ddp;
  try {
    mine = train_two_ranks([&](nn::Sequential& model, dist::ProcessGroup& group) {
      hooks(*model, group);
      return std::function<Tensor(const Tensor&)>(
          [model](const Tensor& x) mutable { return model->forward(x); });
    });
  } catch (const std::exception& e) {
    return e.what();
  }
  // Kept alive by the forward function the trainer holds until its rank ends.
  ddp = train_two_ranks([](nn::Sequential& model, dist::ProcessGroup&) {
    auto wrapped = std::make_shared<nn::parallel::DistributedDataParallel<nn::Sequential>>(model);
    return std::function<Tensor(const Tensor&)>(
        [wrapped](const Tensor& x) { return (*wrapped)(x); });
  });
  const std::vector<Tensor> one = train_one_process();
  std::ostringstream why;
  for (size_t i = 0; i < one.size(); ++i) {
    if (!mine[1][i].equal(mine[0][i]))
      why << "parameter " << i << " differs between the ranks after 3 steps. ";
    if (!mine[0][i].allclose(ddp[0][i], 1e-6, 1e-7))
      why << "parameter " << i << " ends at " << mine[0][i] << "; DistributedDataParallel "
          << "ends at " << ddp[0][i] << ". ";
    if (!mine[0][i].allclose(one[i], 1e-5, 1e-7))
      why << "parameter " << i << " is not where one process on the global batch ends. ";
  }
  return why.str();
}

TEST(Lesson10Hooks, AverageGradientsWithHooksTrainsLikeDDP) {
  EXPECT_EQ(grade_hooks(average_gradients_with_hooks), "");
}

TEST(Lesson10Hooks, TheGraderRejectsHooksThatDoNotAverageEverything) {
  EXPECT_NE(grade_hooks(wrong::hooks_sum_without_dividing).find("DistributedDataParallel"),
            std::string::npos);
  EXPECT_NE(grade_hooks(wrong::hooks_weights_only).find("differs between the ranks"),
            std::string::npos);
}

// [SECTION] exercise 3: the sampler -------------------------------------------------------

using IndicesFn =
    std::function<std::vector<size_t>(size_t, size_t, size_t, bool, uint64_t, size_t)>;

std::string grade_sampler(const IndicesFn& indices) {
  for (size_t n : {1, 2, 3, 5, 10, 11, 12, 100, 101})
    for (size_t replicas : {1, 2, 3, 4, 7, 12})
      for (bool shuffle : {false, true})
        for (uint64_t seed : {0, 42})
          for (size_t epoch : {0, 1, 3})
            for (size_t rank = 0; rank < replicas; ++rank) {
              data::DistributedSampler sampler(replicas, rank, shuffle, seed);
              sampler.set_epoch(epoch);
              const std::vector<size_t> expected = sampler.indices(n, 0);
              std::vector<size_t> got;
              try {
                got = indices(n, replicas, rank, shuffle, seed, epoch);
              } catch (const std::exception& e) {
                return e.what();
              }
              if (got == expected) continue;
              std::ostringstream why;
              why << "n = " << n << ", num_replicas = " << replicas << ", rank = " << rank
                  << ", shuffle = " << shuffle << ", seed = " << seed << ", epoch = " << epoch
                  << ": got " << got.size() << " indices [";
              for (size_t i = 0; i < got.size() && i < 12; ++i) why << (i ? ", " : "") << got[i];
              why << "], DistributedSampler gives " << expected.size() << " [";
              for (size_t i = 0; i < expected.size() && i < 12; ++i)
                why << (i ? ", " : "") << expected[i];
              why << "]";
              return why.str();
            }
  return "";
}

TEST(Lesson10Sampler, MyDistributedIndicesMatchDistributedSampler) {
  EXPECT_EQ(grade_sampler(my_distributed_indices), "");
}

TEST(Lesson10Sampler, TheGraderRejectsSamplersThatDoNotPadShuffleOrStride) {
  EXPECT_NE(grade_sampler(wrong::indices_without_padding), "");
  const std::string same_every_epoch = grade_sampler(wrong::indices_ignoring_epoch);
  EXPECT_NE(same_every_epoch.find("shuffle = 1"), std::string::npos) << same_every_epoch;
  EXPECT_EQ(same_every_epoch.find("epoch = 0"), std::string::npos) << same_every_epoch;
  EXPECT_NE(grade_sampler(wrong::indices_in_blocks), "");
  EXPECT_EQ(grade_sampler(wrong::indices_from_the_library), "");  // the symbol check's job
}

// [SECTION] the bans: what the compiled answers call -------------------------------------

// "" or the banned functions anything in `object` calls, with the exercise that bans each.
std::string banned_calls(const std::string& object) {
  const std::string own_group =
      "no exercise may build a group of its own, where the tests "
      "cannot see what it does";
  return banned_among(
      undefined_symbols(object),
      {{"glass::distributed::ring_all_reduce(", "exercise 1 bans distributed::ring_all_reduce"},
       {"glass::nn::parallel::DistributedDataParallelBase::",
        "exercise 2 bans DistributedDataParallel"},
       {"glass::distributed::Reducer::", "exercise 2 bans distributed::Reducer"},
       {"glass::data::DistributedSampler::", "exercise 3 bans data::DistributedSampler"},
       {"glass::distributed::make_threads_group(", own_group},
       {"glass::distributed::current_threads_rendezvous(", own_group},
       {"glass::distributed::init_process_group(", own_group},
       {"glass::distributed::new_group(", own_group}});
}

// "" or the collectives the ring `function` of `object` reaches (exercise 1's ban).
std::string collectives_in_ring(const std::string& object, const std::string& function) {
  const std::set<std::string> calls = calls_reachable_from(object, function);
  std::vector<Ban> bans;
  for (const char* op : {"allreduce(", "broadcast(", "allgather(", "reduce_scatter(", "gather(",
                         "scatter(", "barrier("})
    bans.push_back({std::string("glass::distributed::ProcessGroup::") + op,
                    "exercise 1 bans the group's collectives"});
  for (const char* fn : {"all_reduce(", "broadcast(", "all_gather_into_tensor(",
                         "reduce_scatter_tensor(", "gather(", "scatter(", "barrier("})
    bans.push_back({std::string("glass::distributed::") + fn,
                    "exercise 1 bans torch.distributed's free functions"});
  return banned_among({calls.begin(), calls.end()}, bans);
}

TEST(Lesson10Bans, TheAnswersCallNoBannedFunction) {
  EXPECT_EQ(banned_calls(GLASS_LESSON10_ANSWERS_OBJECT), "") << GLASS_LESSON10_ANSWERS_OBJECT;
  EXPECT_EQ(
      collectives_in_ring(GLASS_LESSON10_ANSWERS_OBJECT, "glass::lesson10::my_ring_all_reduce("),
      "");
}

TEST(Lesson10Bans, TheSymbolCheckCatchesEachBannedCall) {
  const std::string found = banned_calls(GLASS_LESSON10_WRONG_OBJECT);
  EXPECT_NE(found.find("bans distributed::ring_all_reduce"), std::string::npos) << found;
  EXPECT_NE(found.find("bans DistributedDataParallel"), std::string::npos) << found;
  EXPECT_NE(found.find("bans distributed::Reducer"), std::string::npos) << found;
  EXPECT_NE(found.find("bans data::DistributedSampler"), std::string::npos) << found;
  EXPECT_NE(found.find("make_threads_group"), std::string::npos) << found;
  EXPECT_NE(found.find("current_threads_rendezvous"), std::string::npos) << found;
}

TEST(Lesson10Bans, TheRingCheckSeesCollectivesPerFunction) {
  // Through a helper, a lambda or a group of its own, the call is reachable from the ring.
  const std::string by_allreduce = collectives_in_ring(
      GLASS_LESSON10_WRONG_OBJECT, "glass::lesson10::wrong::ring_with_allreduce(");
  EXPECT_NE(by_allreduce.find("group's collectives"), std::string::npos) << by_allreduce;
  const std::string own_group = collectives_in_ring(
      GLASS_LESSON10_WRONG_OBJECT, "glass::lesson10::wrong::ring_on_a_group_of_its_own(");
  EXPECT_NE(own_group.find("group's collectives"), std::string::npos) << own_group;
  // Send and recv are no collectives; and exercise 2's allreduce, in the same object file
  // as the rings, is seen there and not in a ring.
  EXPECT_EQ(collectives_in_ring(GLASS_LESSON10_WRONG_OBJECT,
                                "glass::lesson10::wrong::ring_send_then_recv("),
            "");
  // (The wrong answers' file, so this holds before student.cpp is written.)
  const std::string hooks = collectives_in_ring(
      GLASS_LESSON10_WRONG_OBJECT, "glass::lesson10::wrong::hooks_sum_without_dividing(");
  EXPECT_NE(hooks.find("group's collectives"), std::string::npos) << hooks;
}

}  // namespace
}  // namespace glass::lesson10
