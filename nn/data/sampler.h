// nn/data/sampler.h — which dataset indices an epoch visits, and in what order.
//
// A DataLoader without a sampler visits every index once (shuffled or not). A Sampler
// decides instead: DistributedSampler gives each of R ranks a disjoint 1/R of the dataset
// (the "scatter" step of data parallelism). Invariant: for a given dataset size, epoch and
// seed, indices() is the same list on every machine, so ranks agree without talking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace glass::data {

// 0, 1, ..., n−1 in a seeded Fisher-Yates order (std::mt19937_64, unbiased draws), the same
// on every platform for a given seed. DataLoader's shuffle uses it too.
std::vector<size_t> shuffled_order(size_t n, uint64_t seed);

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The indices one epoch visits, in order. `epoch` is the loader's epoch count.
  virtual std::vector<size_t> indices(size_t dataset_size, size_t epoch) const = 0;
  // How many indices that is.
  virtual size_t size(size_t dataset_size) const = 0;
};

// torch.utils.data.DistributedSampler: every rank draws the same permutation (seed + epoch),
// pads it by repeating its start to a multiple of num_replicas (or, with drop_last, cuts the
// tail), and keeps positions rank, rank + R, rank + 2R, ... So every rank gets the same
// number of samples — collectives need every rank to run the same number of steps.
// As in PyTorch, the epoch is the one given to set_epoch(), not the loader's: call it at the
// start of each epoch, or every epoch repeats the first one's order.
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(size_t num_replicas, size_t rank, bool shuffle = true, uint64_t seed = 0,
                     bool drop_last = false);
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }
  std::vector<size_t> indices(size_t dataset_size, size_t loader_epoch) const override;
  size_t size(size_t dataset_size) const override;

  size_t num_replicas() const { return num_replicas_; }
  size_t rank() const { return rank_; }

 private:
  size_t num_replicas_;
  size_t rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  size_t epoch_ = 0;
};

}  // namespace glass::data
