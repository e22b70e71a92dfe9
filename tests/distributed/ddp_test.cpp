// tests/distributed/ddp_test.cpp — DistributedDataParallel on the threads backend, checked
// against one process trained on the global batch (the reference), and its parts:
// the replica, the buckets, no_sync, unused parameters, overlap.
#include "distributed/ddp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include "core/generator.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/random.h"
#include "distributed/backends/threads.h"
#include "distributed/distributed.h"
#include "distributed/worker/mlp_training.h"
#include "nn/functional/loss.h"
#include "nn/modules/linear.h"
#include "nn/optim/sgd.h"

namespace glass::distributed {
namespace {

using nn::parallel::DistributedDataParallel;
using nn::parallel::DistributedDataParallelOptions;

using worker::MLP;  // lesson 06's classifier, as the process tests train it

// A model with a layer forward never uses.
struct WithUnusedImpl : nn::Module {
  WithUnusedImpl() : Module("WithUnused") {
    used = register_module("used", nn::Linear(4, 3));
    unused = register_module("unused", nn::Linear(4, 3));
  }
  Tensor forward(const Tensor& x) const { return used(x); }
  nn::Linear used{nullptr}, unused{nullptr};
};
GLASS_MODULE(WithUnused);

// Two layers, of which forward uses the one `use_a` names.
struct SwitchImpl : nn::Module {
  SwitchImpl() : Module("Switch") {
    a = register_module("a", nn::Linear(4, 3));
    b = register_module("b", nn::Linear(4, 3));
  }
  Tensor forward(const Tensor& x) const { return use_a ? a(x) : b(x); }
  nn::Linear a{nullptr}, b{nullptr};
  bool use_a = true;
};
GLASS_MODULE(Switch);

// A layer whose output is scaled by a buffer, as a BatchNorm's is by its running statistics.
struct ScaledImpl : nn::Module {
  ScaledImpl() : Module("Scaled") {
    fc = register_module("fc", nn::Linear(3, 2));
    scale = register_buffer("scale", ones({1}));
  }
  Tensor forward(const Tensor& x) const { return fc(x) * scale; }
  nn::Linear fc{nullptr};
  Tensor scale;
};
GLASS_MODULE(Scaled);

void copy_params(nn::Module& to, const nn::Module& from) {
  NoGradGuard no_grad;
  auto dst = to.parameters(), src = from.parameters();
  for (size_t i = 0; i < dst.size(); ++i) dst[i].copy_(src[i]);
}

bool bitwise_equal(const Tensor& a, const Tensor& b) { return a.equal(b); }

// Every element within rtol 1e-5 and atol 1e-7 (the bound).
void expect_close(const Tensor& actual, const Tensor& expected, const std::string& what) {
  const float* a = actual.contiguous().data_ptr<float>();
  const float* e = expected.contiguous().data_ptr<float>();
  int reported = 0;
  for (int64_t i = 0; i < actual.numel() && reported < 3; ++i) {
    if (std::fabs(a[i] - e[i]) > 1e-7 + 1e-5 * std::fabs(e[i])) {
      ADD_FAILURE() << what << "[" << i << "]: " << a[i] << " vs single-process " << e[i];
      ++reported;
    }
  }
}

// The check: DDP on `world` ranks for 5 steps equals one process on the global batch,
// and the ranks are bitwise equal after every step. (On the threads backend the equality
// holds by construction — the ranks' shares of the sum are written into every rank's tensor
// — so it guards DDP's own steps; ddp_process_test.cpp checks it where each gloo rank
// computes its own copy.)
// zero_grad(set_to_none = false) keeps each .grad(), so with gradient_as_bucket_view the
// next backward accumulates into the bucket itself; true makes DDP copy in again each step.
void train_like_one_process(int world, const DistributedDataParallelOptions& options = {},
                            bool set_to_none = true) {
  const int steps = worker::kTrainSteps;
  const int64_t global_batch = worker::kGlobalBatch;
  const auto batches = worker::global_batches();

  manual_seed(0);
  MLP reference;
  MLP initial;
  copy_params(*initial, *reference);
  {
    optim::SGD sgd(reference->parameters(),
                   optim::SGDOptions(worker::kLearningRate).momentum(worker::kMomentum));
    for (const worker::Batch& b : batches) {
      sgd.zero_grad();
      nn::functional::cross_entropy(reference(b.x), b.y).backward();
      sgd.step();
    }
  }

  std::mutex mutex;
  std::vector<std::vector<Tensor>> after_step(steps * world);  // [step * world + rank]
  std::vector<Tensor> final_params(world);
  run_threads(world, [&](int rank) {
    init_process_group("threads");
    MLP model;
    if (rank == 0) copy_params(*model, *initial);  // the others start elsewhere: DDP copies
    DistributedDataParallel ddp(model, nullptr, options);
    optim::SGD sgd(model->parameters(),
                   optim::SGDOptions(worker::kLearningRate).momentum(worker::kMomentum));
    const int64_t local = global_batch / world;
    for (int s = 0; s < steps; ++s) {
      sgd.zero_grad(set_to_none);
      Tensor x = batches[s].x.narrow(0, rank * local, local);
      Tensor y = batches[s].y.narrow(0, rank * local, local);
      nn::functional::cross_entropy(ddp(x), y).backward();
      sgd.step();
      std::vector<Tensor> snapshot;
      for (const Tensor& p : model->parameters()) snapshot.push_back(p.detach().clone());
      std::lock_guard<std::mutex> lock(mutex);
      after_step[s * world + rank] = std::move(snapshot);
    }
    destroy_process_group();
  });

  for (int s = 0; s < steps; ++s)
    for (int r = 1; r < world; ++r)
      for (size_t i = 0; i < after_step[s * world].size(); ++i)
        EXPECT_TRUE(bitwise_equal(after_step[s * world + r][i], after_step[s * world][i]))
            << "step " << s << ": rank " << r << "'s parameter " << i << " differs from rank 0's";
  auto expected = reference->named_parameters();
  for (size_t i = 0; i < expected.size(); ++i)
    expect_close(after_step[(steps - 1) * world][i], expected[i].second, expected[i].first);
}

TEST(DistributedDataParallel, TwoRanksTrainLikeOneProcessOnTheGlobalBatch) {
  train_like_one_process(2);
}
TEST(DistributedDataParallel, FourRanksTrainLikeOneProcessOnTheGlobalBatch) {
  train_like_one_process(4);
}

TEST(DistributedDataParallel, GradientAsBucketViewTrainsLikeOneProcess) {
  const auto views = DistributedDataParallelOptions().gradient_as_bucket_view(true);
  train_like_one_process(2, views, /*set_to_none=*/true);
  train_like_one_process(2, views, /*set_to_none=*/false);
  train_like_one_process(4, views, /*set_to_none=*/false);
}

TEST(DistributedDataParallel, GradientAsBucketViewMakesEachGradAViewOfItsBucket) {
  for (bool views : {false, true}) {
    std::vector<std::vector<Tensor>> grads(2);
    run_threads(2, [&](int rank) {
      init_process_group("threads");
      nn::Linear model(4, 3);  // weight and bias: one bucket
      DistributedDataParallel ddp(model, nullptr,
                                  DistributedDataParallelOptions().gradient_as_bucket_view(views));
      for (int step = 0; step < 3; ++step) {
        model->zero_grad(/*set_to_none=*/false);
        ddp(full({2, 4}, static_cast<double>(rank + 1))).sum().backward();
      }
      grads[rank] = {model->weight.grad(), model->bias.grad()};
      destroy_process_group();
    });
    for (int r = 0; r < 2; ++r) {
      // The average of inputs 1 and 2, summed over a batch of 2: 3 per weight element.
      EXPECT_TRUE(grads[r][0].equal(full({3, 4}, 3.0))) << "views " << views;
      EXPECT_TRUE(grads[r][1].equal(full({3}, 2.0))) << "views " << views;
      EXPECT_EQ(grads[r][0].is_alias_of(grads[r][1]), views)
          << "with gradient_as_bucket_view the two gradients live in one bucket";
    }
  }
}

TEST(DistributedDataParallel, AnUnusedParametersAccumulatedGradientCounts) {
  // With find_unused_parameters, a parameter this forward does not use still contributes
  // what its .grad() holds (here: a sum accumulated under no_sync), as in PyTorch.
  for (bool views : {false, true}) {
    std::vector<Tensor> unused_grads(2);
    run_threads(2, [&](int rank) {
      init_process_group("threads");
      WithUnused model;
      DistributedDataParallel ddp(
          model, nullptr,
          DistributedDataParallelOptions().find_unused_parameters(true).gradient_as_bucket_view(
              views));
      {
        auto guard = ddp.no_sync();
        model->unused(full({1, 4}, static_cast<double>(rank + 1))).sum().backward();
      }
      ddp(full({1, 4}, 1.0)).sum().backward();
      unused_grads[rank] = model->unused->weight.grad().clone();
      destroy_process_group();
    });
    for (int r = 0; r < 2; ++r)
      EXPECT_TRUE(unused_grads[r].equal(full({3, 4}, 1.5))) << "views " << views;
  }
}

TEST(DistributedDataParallel, AnUnusedParameterCountsWithTheGradItHoldsWhenBackwardStarts) {
  // The usual loop zeroes the gradients between forward and backward: a layer used in the
  // last step and unused in this one (on this rank) must contribute zero, not its last
  // step's gradient. Step 2: rank 0 uses b, rank 1 uses a.
  for (bool views : {false, true}) {
    std::vector<Tensor> a_grads(2), b_grads(2);
    run_threads(2, [&](int rank) {
      init_process_group("threads");
      Switch model;
      DistributedDataParallel ddp(
          model, nullptr,
          DistributedDataParallelOptions().find_unused_parameters(true).gradient_as_bucket_view(
              views));
      for (bool use_a : {true, rank == 1}) {
        model->use_a = use_a;
        Tensor loss = ddp(full({1, 4}, 1.0)).sum();
        model->zero_grad(/*set_to_none=*/false);
        loss.backward();
      }
      a_grads[rank] = model->a->weight.grad().clone();
      b_grads[rank] = model->b->weight.grad().clone();
      destroy_process_group();
    });
    for (int r = 0; r < 2; ++r) {
      // Each layer: one rank's gradient of ones, the other rank's zero, averaged.
      EXPECT_TRUE(a_grads[r].equal(full({3, 4}, 0.5))) << "views " << views << ": a is stale";
      EXPECT_TRUE(b_grads[r].equal(full({3, 4}, 0.5))) << "views " << views;
    }
  }
}

TEST(DistributedDataParallel, ConstructionCopiesRankZerosParametersAndBuffers) {
  std::vector<Tensor> weights(3), scales(3);
  run_threads(3, [&](int rank) {
    init_process_group("threads");
    Scaled model;
    {
      NoGradGuard no_grad;
      model->fc->weight.fill_(static_cast<double>(rank + 1));
      model->scale.fill_(static_cast<double>(10 * (rank + 1)));
    }
    DistributedDataParallel ddp(model);
    weights[rank] = model->fc->weight.detach().clone();
    scales[rank] = model->scale.clone();
    destroy_process_group();
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_TRUE(weights[r].equal(full({2, 3}, 1.0))) << "rank " << r;
    EXPECT_TRUE(scales[r].equal(full({1}, 10.0))) << "rank " << r;
  }
}

// Buffers (running statistics) are rank 0's again at every forward autograd records, in
// training and in eval (as in PyTorch), before the module reads them: each rank's output is
// computed with rank 0's scale, and the buffer holds rank 0's value after it. With
// broadcast_buffers(false), or under NoGradGuard, each rank keeps and uses its own.
TEST(DistributedDataParallel, EachForwardWithGradStartsFromRankZerosBuffers) {
  struct Seen {
    Tensor out_synced, scale_synced, out_own, out_eval, out_no_grad;
  };
  std::vector<Seen> seen(2);
  const Tensor x = ones({1, 3});
  run_threads(2, [&](int rank) {
    init_process_group("threads");
    Scaled synced, own;
    DistributedDataParallel ddp_synced(synced);
    DistributedDataParallel ddp_own(own, nullptr,
                                    DistributedDataParallelOptions().broadcast_buffers(false));
    auto set_scale = [&](Scaled& m, double value) {
      NoGradGuard no_grad;
      m->scale.fill_(value);
    };
    for (Scaled* m : {&synced, &own}) {
      NoGradGuard no_grad;
      (*m)->fc->weight.fill_(1.0);
      (*m)->fc->bias.fill_(0.0);
    }
    set_scale(synced, rank + 2);  // the ranks' own values, after construction
    set_scale(own, rank + 2);
    Seen& mine = seen[rank];
    mine.out_synced = ddp_synced(x).detach().clone();
    mine.scale_synced = synced->scale.clone();
    mine.out_own = ddp_own(x).detach().clone();
    synced->eval();
    set_scale(synced, rank + 5);
    mine.out_eval = ddp_synced(x).detach().clone();  // grad mode on: synced
    set_scale(synced, rank + 8);
    {
      NoGradGuard no_grad;
      mine.out_no_grad = ddp_synced(x).detach().clone();
    }
    destroy_process_group();
  });
  // fc(ones) = [3, 3] (a row of three ones times weights of ones); then times the scale.
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(seen[r].out_synced.equal(full({1, 2}, 3.0 * 2))) << "rank " << r;
    EXPECT_TRUE(seen[r].scale_synced.equal(full({1}, 2.0))) << "rank " << r;
    EXPECT_TRUE(seen[r].out_own.equal(full({1, 2}, 3.0 * (r + 2)))) << "rank " << r;
    EXPECT_TRUE(seen[r].out_eval.equal(full({1, 2}, 3.0 * 5))) << "rank " << r;
    EXPECT_TRUE(seen[r].out_no_grad.equal(full({1, 2}, 3.0 * (r + 8)))) << "rank " << r;
  }
}

// The replica without a broadcast: each rank-thread has default generators of its own, so
// ranks that seed alike build bitwise-equal models whatever the scheduling — the model one
// thread builds after the same seed — and a rank that does not seed builds what a new
// process builds. Seeding inside a rank leaves the caller's generator alone. Several runs,
// to give a race the chance to show.
TEST(DistributedDataParallel, RanksSeededAlikeBuildTheSameReplicaInEveryRun) {
  manual_seed(7);
  MLP seeded;
  manual_seed(kDefaultRngSeed);
  MLP unseeded;
  manual_seed(3);
  Tensor caller_next = rand({4}, make_generator(kCPU, 3));

  constexpr int kWorld = 4;
  for (int run = 0; run < 3; ++run) {
    std::vector<std::vector<Tensor>> got(kWorld), fresh(kWorld);
    run_threads(kWorld, [&](int rank) {
      MLP first;  // before any seeding: the default seed's numbers, as in a new process
      manual_seed(7);
      MLP model;
      fresh[rank] = first->parameters();
      got[rank] = model->parameters();
    });
    for (int r = 0; r < kWorld; ++r) {
      for (size_t i = 0; i < got[r].size(); ++i) {
        EXPECT_TRUE(bitwise_equal(got[r][i], seeded->parameters()[i]))
            << "run " << run << " rank " << r << " parameter " << i;
        EXPECT_TRUE(bitwise_equal(fresh[r][i], unseeded->parameters()[i]))
            << "run " << run << " rank " << r << " unseeded parameter " << i;
      }
    }
  }
  EXPECT_EQ(initial_seed(), 3u);
  EXPECT_TRUE(bitwise_equal(rand({4}), caller_next));
}

TEST(DistributedDataParallel, RanksWithDifferentModelsGetAnErrorNamingTheMismatch) {
  std::vector<std::string> errors(2);
  EXPECT_THROW(run_threads(2,
                           [&](int rank) {
                             init_process_group("threads");
                             MLP model(16, rank == 0 ? 8 : 6, 3);
                             try {
                               DistributedDataParallel ddp(model);
                             } catch (const std::exception& e) {
                               errors[rank] = e.what();
                               destroy_process_group();
                               throw;
                             }
                           }),
               std::exception);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(errors[r].find("parameter 0"), std::string::npos) << errors[r];
    EXPECT_NE(errors[r].find("[8, 16] on rank 0 but"), std::string::npos) << errors[r];
    EXPECT_NE(errors[r].find("[6, 16] on rank 1"), std::string::npos) << errors[r];
  }
}

TEST(DistributedDataParallel, BucketsStartSmallInReverseOrderAndAreRebuiltInReadyOrder) {
  using Buckets = std::vector<std::vector<size_t>>;
  std::vector<Buckets> rebuilt(2);
  std::vector<std::vector<size_t>> orders(2);
  std::vector<std::vector<Tensor>> params(2);
  run_threads(2, [&](int rank) {
    init_process_group("threads");
    MLP model;
    DistributedDataParallel ddp(model);
    // fc2.weight alone is exactly 1 MiB, so the 1 MiB first bucket closes there:
    // [fc3.bias, fc3.weight, fc2.bias, fc2.weight], then [fc1.bias, fc1.weight].
    EXPECT_EQ(ddp.reducer().buckets(), (Buckets{{5, 4, 3, 2}, {1, 0}}));
    Tensor x = full({2, 784}, 0.5);
    Tensor y = full({2}, 3, TensorOptions().dtype(kLong));
    for (int step = 0; step < 2; ++step) {
      model->zero_grad();
      nn::functional::cross_entropy(ddp(x), y).backward();
    }
    EXPECT_TRUE(ddp.reducer().buckets_rebuilt());
    rebuilt[rank] = ddp.reducer().buckets();
    orders[rank] = ddp.reducer().ready_order();
    params[rank] = model->parameters();
    destroy_process_group();
  });
  // Every rank rebuilt the same buckets: the assignment of rank 0's ready order.
  ASSERT_EQ(orders[0].size(), 6u);
  EXPECT_EQ(rebuilt[0],
            compute_bucket_assignment_by_size(params[0], {1u << 20, 25u << 20}, orders[0]));
  EXPECT_EQ(rebuilt[1], rebuilt[0]);
}

TEST(DistributedDataParallel, NoSyncAccumulatesLocallyAndTheNextBackwardAveragesTheSum) {
  const int world = 2;
  Generator gen = make_generator(Device(kCPU), 5);
  Tensor x1 = randn({4, 4}, gen), x2 = randn({4, 4}, gen);
  // Reference: each rank's two local backward passes summed, then averaged over ranks.
  manual_seed(1);
  nn::Linear reference(4, 3);
  for (const Tensor& x : {x1, x2}) reference(x).pow(2).sum().backward();
  Tensor expected = reference->weight.grad().clone();

  std::vector<Tensor> grads(world), grads_inside(world);
  run_threads(world, [&](int rank) {
    init_process_group("threads");
    nn::Linear model(4, 3);
    if (rank == 0) copy_params(*model, *reference);
    DistributedDataParallel ddp(model);
    // Rank r sees rows [2r, 2r + 2) of both batches; the sum over ranks is the full batch.
    {
      auto guard = ddp.no_sync();
      ddp(x1.narrow(0, 2 * rank, 2)).pow(2).sum().backward();
    }
    grads_inside[rank] = model->weight.grad().clone();
    ddp(x2.narrow(0, 2 * rank, 2)).pow(2).sum().backward();
    grads[rank] = model->weight.grad().clone();
    destroy_process_group();
  });
  EXPECT_FALSE(bitwise_equal(grads_inside[0], grads_inside[1]));  // no communication yet
  for (int r = 0; r < world; ++r) expect_close(grads[r], expected.div(world), "weight.grad");
}

TEST(DistributedDataParallel, AnUnusedParameterIsAnErrorNamingItUnlessFindUnusedIsOn) {
  std::vector<std::string> errors(2);
  run_threads(2, [&](int rank) {
    init_process_group("threads");
    WithUnused model;
    DistributedDataParallel ddp(model);
    try {
      ddp(full({1, 4}, 1.0)).sum().backward();
    } catch (const std::exception& e) {
      errors[rank] = e.what();
    }
    destroy_process_group();
  });
  for (int r = 0; r < 2; ++r) {
    const std::string& e = errors[r];
    EXPECT_NE(e.find("on rank " + std::to_string(r) +
                     ", these parameters received no gradient "
                     "in this backward pass: unused.weight, unused.bias"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("find_unused_parameters = true"), std::string::npos) << e;
  }

  std::vector<Tensor> unused_grads(2), used_grads(2);
  run_threads(2, [&](int rank) {
    init_process_group("threads");
    WithUnused model;
    DistributedDataParallel ddp(model, nullptr,
                                DistributedDataParallelOptions().find_unused_parameters(true));
    ddp(full({1, 4}, static_cast<double>(rank + 1))).sum().backward();
    unused_grads[rank] = model->unused->weight.grad();
    used_grads[rank] = model->used->weight.grad().clone();
    destroy_process_group();
  });
  for (int r = 0; r < 2; ++r) {
    // No rank used it: its .grad() stays undefined, as in PyTorch (a zero there would still
    // move it under momentum or weight decay).
    EXPECT_FALSE(unused_grads[r].defined());
    EXPECT_TRUE(used_grads[r].equal(full({3, 4}, 1.5)));  // mean of inputs 1 and 2
  }
}

TEST(DistributedDataParallel, AFullBucketsAllReduceStartsBeforeBackwardEnds) {
  ThreadsLinkModel link;
  link.latency = std::chrono::microseconds(200);
  std::vector<ReducerTimeline> timelines(2);
  run_threads(
      2,
      [&](int rank) {
        init_process_group("threads");
        MLP model;
        DistributedDataParallel ddp(model);
        Tensor x = full({16, 784}, 0.1);
        Tensor y = full({16}, 1, TensorOptions().dtype(kLong));
        nn::functional::cross_entropy(ddp(x), y).backward();
        timelines[rank] = ddp.reducer().last_timeline();
        destroy_process_group();
      },
      link);
  for (const ReducerTimeline& t : timelines) {
    ASSERT_EQ(t.buckets.size(), 2u);
    EXPECT_LT(t.buckets[0].ready, t.backward_done);  // started while fc1's gradient was computed
    EXPECT_LE(t.backward_done, t.all_done);
    EXPECT_GT(t.buckets[1].finished, 0.0);
  }
}

}  // namespace
}  // namespace glass::distributed
