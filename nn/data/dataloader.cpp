// nn/data/dataloader.cpp — epoch orders (identity or a seeded Fisher-Yates shuffle) and the
// iterator that slices them into batches.
#include "nn/data/dataloader.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/ops/random.h"

namespace glass::data {

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  GLASS_CHECK(dataset_ != nullptr, "DataLoader: the dataset is null; pass a dataset");
  GLASS_CHECK(options_.batch_size() > 0,
              "DataLoader: batch_size must be at least 1, got 0; use DataLoaderOptions(B) "
              "with B >= 1");
  GLASS_CHECK(!(options_.sampler() && options_.shuffle()),
              "DataLoader: shuffle(true) and a sampler exclude each other; the sampler decides ",
              "the order (DistributedSampler shuffles itself)");
  seed_ = options_.seed() ? *options_.seed() : glass::detail::next_random_u64();
}

size_t DataLoader::size() const {
  const size_t n =
      options_.sampler() ? options_.sampler()->size(dataset_->size()) : dataset_->size();
  const size_t b = options_.batch_size();
  return options_.drop_last() ? n / b : (n + b - 1) / b;
}

std::vector<size_t> DataLoader::order_for(size_t epoch) const {
  if (options_.sampler()) return options_.sampler()->indices(dataset_->size(), epoch);
  if (options_.shuffle()) return shuffled_order(dataset_->size(), seed_ + epoch);
  std::vector<size_t> order(dataset_->size());
  std::iota(order.begin(), order.end(), size_t{0});
  return order;
}

DataLoader::Iterator DataLoader::begin() {
  auto order = std::make_shared<const std::vector<size_t>>(order_for(epoch_++));
  return Iterator(this, std::move(order), 0);
}

DataLoader::Iterator DataLoader::end() { return Iterator(this, nullptr, size()); }

DataLoader::Iterator::Iterator(DataLoader* loader, std::shared_ptr<const std::vector<size_t>> order,
                               size_t position)
    : loader_(loader), order_(std::move(order)), position_(position) {
  if (order_) load();
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  ++position_;
  load();
  return *this;
}

void DataLoader::Iterator::load() {
  batch_ = Example();
  if (position_ >= loader_->size()) return;  // end: nothing to hold
  const size_t b = loader_->options_.batch_size();
  const size_t first = position_ * b;
  GLASS_CHECK(first < order_->size(), "DataLoader: the dataset shrank from ", order_->size(),
              " to ", loader_->dataset_->size(), " examples during an epoch");
  const size_t count = std::min(b, order_->size() - first);
  batch_ = loader_->dataset_->get_batch(ArrayRef<size_t>(order_->data() + first, count));
  if (loader_->options_.pin_memory()) {
    // A fresh pinned batch each step: the previous one may still be feeding a
    // non_blocking copy, and the pinned allocator keeps its blocks until that copy is done.
    if (batch_.data.defined() && batch_.data.is_cpu()) batch_.data = batch_.data.pin_memory();
    if (batch_.target.defined() && batch_.target.is_cpu())
      batch_.target = batch_.target.pin_memory();
  }
}

}  // namespace glass::data
