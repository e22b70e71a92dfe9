// nn/data/dataset.cpp — the generic get_batch: get() each example and stack them.
//
// Shapes are checked here, before stacking, so the message can say which example differs
// (stack itself only knows positions in its list).
#include "nn/data/dataset.h"

#include <vector>

#include "core/error.h"
#include "core/ops/join.h"

namespace glass::data {

namespace {

// part: "data" or "target". Throws unless every tensor of `parts` has parts[0]'s sizes.
void check_same_sizes(const std::vector<Tensor>& parts, ArrayRef<size_t> indices,
                      const char* part) {
  for (size_t i = 1; i < parts.size(); ++i) {
    GLASS_CHECK(parts[i].sizes() == parts[0].sizes(), "Dataset::get_batch(): example ", indices[i],
                " has ", part, " of sizes ", parts[i].sizes(), " but example ", indices[0], " has ",
                parts[0].sizes(), "; a batch stacks its examples, so every example's ", part,
                " must have one shape (pad or resize them in get())");
  }
}

}  // namespace

Example Dataset::get_batch(ArrayRef<size_t> indices) {
  GLASS_CHECK(!indices.empty(), "Dataset::get_batch(): got no indices; a batch needs at least one");
  const size_t n = size();
  std::vector<Tensor> data, targets;
  data.reserve(indices.size());
  targets.reserve(indices.size());
  size_t with_target = 0;
  for (size_t index : indices) {
    GLASS_CHECK(index < n, "Dataset::get_batch(): index ", index,
                " is out of range for a dataset of ", n, " examples");
    Example e = get(index);
    GLASS_CHECK(e.data.defined(), "Dataset::get_batch(): get(", index,
                ") returned an Example whose data is undefined");
    with_target += e.target.defined() ? 1 : 0;
    data.push_back(std::move(e.data));
    targets.push_back(std::move(e.target));
  }
  GLASS_CHECK(with_target == 0 || with_target == indices.size(),
              "Dataset::get_batch(): ", with_target, " of the ", indices.size(),
              " examples have a target and the others do not; give every example a "
              "target, or none");
  check_same_sizes(data, indices, "data");
  Example batch{stack(data), Tensor()};
  if (with_target > 0) {
    check_same_sizes(targets, indices, "target");
    batch.target = stack(targets);
  }
  return batch;
}

}  // namespace glass::data
