// nn/data/sampler.cpp — the seeded shuffle and the distributed sampler's slicing.
#include "nn/data/sampler.h"

#include <limits>
#include <numeric>
#include <random>
#include <utility>

#include "core/error.h"

namespace glass::data {

namespace {

// Uniform in [0, bound). `gen() % bound` would favour small values when 2^64 is not a
// multiple of bound; rejecting draws from the incomplete last block removes that bias.
// (std::uniform_int_distribution would do this too, but its algorithm differs between
// standard libraries, and the order must be the same everywhere for a given seed.)
uint64_t uniform_below(std::mt19937_64& gen, uint64_t bound) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const uint64_t limit = max - max % bound;  // a multiple of bound
  uint64_t r = gen();
  while (r >= limit) r = gen();
  return r % bound;
}

}  // namespace

std::vector<size_t> shuffled_order(size_t n, uint64_t seed) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937_64 gen(seed);
  for (size_t i = order.size(); i > 1; --i)  // Fisher-Yates: fix position i - 1
    std::swap(order[i - 1], order[uniform_below(gen, i)]);
  return order;
}

DistributedSampler::DistributedSampler(size_t num_replicas, size_t rank, bool shuffle,
                                       uint64_t seed, bool drop_last)
    : num_replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  GLASS_CHECK(num_replicas >= 1, "DistributedSampler: num_replicas must be at least 1, got 0");
  GLASS_CHECK(rank < num_replicas, "DistributedSampler: rank ", rank,
              " is out of range for num_replicas ", num_replicas, " (ranks are 0..",
              num_replicas - 1, ")");
}

size_t DistributedSampler::size(size_t n) const {
  const size_t r = num_replicas_;
  // drop_last cuts the dataset down to a multiple of R; otherwise it is padded up to one.
  return drop_last_ ? n / r : (n + r - 1) / r;
}

std::vector<size_t> DistributedSampler::indices(size_t n, size_t /*loader_epoch*/) const {
  std::vector<size_t> all(n);
  if (shuffle_) {
    all = shuffled_order(n, seed_ + epoch_);
  } else {
    std::iota(all.begin(), all.end(), size_t{0});
  }
  const size_t total = size(n) * num_replicas_;
  if (total <= n) {
    all.resize(total);
  } else {
    GLASS_CHECK(n > 0, "DistributedSampler: the dataset is empty");
    // Pad by repeating the start of the order (more than once for a tiny dataset).
    for (size_t i = n; i < total; ++i) all.push_back(all[i % n]);
  }
  std::vector<size_t> mine;
  for (size_t i = rank_; i < total; i += num_replicas_) mine.push_back(all[i]);
  return mine;
}

}  // namespace glass::data
