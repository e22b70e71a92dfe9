// nn/data/dataloader.h — DataLoader: a dataset cut into batches, one epoch per iteration.
//
//   data::DataLoader loader(data::TensorDataset(x, y),
//                           data::DataLoaderOptions(64).shuffle(true).seed(0));
//   for (int epoch = 0; epoch < 10; ++epoch)
//     for (data::Example& batch : loader)   // batch.data (64, ...), batch.target (64, ...)
//       train_step(batch.data, batch.target);
//
// Invariants: each begin() starts a new epoch, and an epoch visits every index of the
// dataset exactly once (all but the last size() % batch_size with drop_last). Without
// shuffle the order is 0, 1, 2, ...; with shuffle, epoch e's order is a permutation drawn
// from a generator seeded with seed + e, so a run is reproducible from the seed while
// every epoch sees a different order. The permutation is glasstorch's own (Fisher-Yates
// on std::mt19937_64), not bit-identical to PyTorch's. Batches are loaded on this thread,
// one at a time, as the iterator advances; with pin_memory they land in pinned memory.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "nn/data/dataset.h"
#include "nn/data/sampler.h"

namespace glass::data {

class DataLoaderOptions {
 public:
  explicit DataLoaderOptions(size_t batch_size = 1) : batch_size_(batch_size) {}

  DataLoaderOptions& batch_size(size_t batch_size) {
    batch_size_ = batch_size;
    return *this;
  }
  DataLoaderOptions& shuffle(bool shuffle) {
    shuffle_ = shuffle;
    return *this;
  }
  // Without a seed, the loader draws one from the default CPU generator when it is made
  // (the thread's own under a ThreadLocalGeneratorGuard, as in a threads-backend rank), so
  // glass::manual_seed() makes the shuffling reproducible too.
  DataLoaderOptions& seed(uint64_t seed) {
    seed_ = seed;
    return *this;
  }
  DataLoaderOptions& drop_last(bool drop_last) {
    drop_last_ = drop_last;
    return *this;
  }
  // Each batch's tensors are copied into page-locked ("pinned") host memory, PyTorch's
  // pin_memory=True: a copy from pinned memory to the GPU can then run on a copy engine
  // while the host goes on, `batch.data.to(kCUDA, /*non_blocking=*/true)`, instead of
  // blocking the host for a staged pageable copy (lesson 08). Needs a CUDA runtime, as
  // Tensor::pin_memory() does.
  DataLoaderOptions& pin_memory(bool pin_memory) {
    pin_memory_ = pin_memory;
    return *this;
  }

  // The indices each epoch visits (e.g. a DistributedSampler: this rank's share). Excludes
  // shuffle(true): the sampler decides the order.
  DataLoaderOptions& sampler(std::shared_ptr<Sampler> sampler) {
    sampler_ = std::move(sampler);
    return *this;
  }

  size_t batch_size() const { return batch_size_; }
  bool shuffle() const { return shuffle_; }
  const std::optional<uint64_t>& seed() const { return seed_; }
  bool drop_last() const { return drop_last_; }
  bool pin_memory() const { return pin_memory_; }
  const std::shared_ptr<Sampler>& sampler() const { return sampler_; }

 private:
  size_t batch_size_;
  bool shuffle_ = false;
  std::optional<uint64_t> seed_;
  bool drop_last_ = false;
  bool pin_memory_ = false;
  std::shared_ptr<Sampler> sampler_;
};

class DataLoader {
 public:
  // An input iterator over one epoch's batches. It holds that epoch's order, so a later
  // begin() (a new epoch) does not disturb it.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Example;
    using difference_type = std::ptrdiff_t;
    using pointer = Example*;
    using reference = Example&;

    Example& operator*() { return batch_; }
    Example* operator->() { return &batch_; }
    Iterator& operator++();
    // Iterators compare by batch position (end() is one past the last batch).
    bool operator==(const Iterator& other) const { return position_ == other.position_; }

   private:
    friend class DataLoader;
    Iterator(DataLoader* loader, std::shared_ptr<const std::vector<size_t>> order, size_t position);
    void load();

    DataLoader* loader_;
    std::shared_ptr<const std::vector<size_t>> order_;
    size_t position_;  // the batch number within the epoch
    Example batch_;
  };

  // Shares the dataset. Throws for batch_size 0.
  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options);
  // Takes a dataset by value: DataLoader(TensorDataset(x, y), options).
  template <class D>
  requires std::derived_from<D, Dataset> DataLoader(D dataset, DataLoaderOptions options)
      : DataLoader(std::make_shared<D>(std::move(dataset)), std::move(options)) {}

  // Starts the next epoch (shuffling, if on) and loads its first batch.
  Iterator begin();
  Iterator end();

  // Batches per epoch: ceil(N / batch_size), or floor with drop_last; N is the dataset's
  // size, or the sampler's when there is one.
  size_t size() const;
  // Epochs started so far (begin() calls).
  size_t epoch() const { return epoch_; }
  Dataset& dataset() { return *dataset_; }
  const DataLoaderOptions& options() const { return options_; }

 private:
  // The order of dataset indices for epoch `epoch`.
  std::vector<size_t> order_for(size_t epoch) const;

  std::shared_ptr<Dataset> dataset_;
  DataLoaderOptions options_;
  uint64_t seed_;
  size_t epoch_ = 0;
};

}  // namespace glass::data
