// nn/functional/embedding.cpp — embedding as index_select + view (see embedding.h).
#include "nn/functional/embedding.h"

#include <string>

#include "core/error.h"
#include "core/ops/indexing.h"
#include "core/ops/pointwise.h"
#include "core/shape.h"

namespace glass::nn::functional {

namespace {

// A bad index is found by the index kernel (no host round-trip: on CUDA it is reported at
// the next sync point), but worded here, in terms of the table the user made.
std::string out_of_range(int64_t index, int64_t, int64_t num_embeddings) {
  return detail::str_cat("embedding(): index ", index, " is out of range for a table of ",
                         num_embeddings, " embeddings (valid indices are 0 .. ", num_embeddings - 1,
                         "); grow num_embeddings or fix the indices");
}
[[maybe_unused]] const bool registered =
    (register_index_error_format("embedding", out_of_range), true);

}  // namespace

Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx) {
  GLASS_CHECK(indices.defined() && weight.defined(), "embedding(): got an undefined tensor");
  GLASS_CHECK(weight.dim() == 2, "embedding(): expected a 2-D weight (num_embeddings, ",
              "embedding_dim), got shape ", weight.sizes());
  GLASS_CHECK(indices.dtype() == kLong || indices.dtype() == kInt,
              "embedding(): expected indices of dtype Long or Int, got ", indices.dtype(),
              "; convert with .to(glass::kLong)");
  const int64_t n = weight.size(0);
  GLASS_CHECK(!padding_idx || (*padding_idx >= -n && *padding_idx < n), "embedding(): padding_idx ",
              padding_idx.value_or(0), " must be within the table of ", n, " embeddings (", -n,
              " .. ", n - 1, ")");
  Shape out_shape = indices.sizes().vec();
  out_shape.push_back(weight.size(1));
  Tensor out;
  {
    IndexOpScope scope("embedding", false);
    out = weight.index_select(0, indices.reshape({-1})).view(out_shape);
  }
  if (!padding_idx) return out;
  const int64_t pad = *padding_idx < 0 ? *padding_idx + n : *padding_idx;
  // Same values, but where the index is the padding row the gradient stops: where()
  // routes the gradient of those positions into the detached (graph-less) branch.
  Tensor is_pad = (indices == pad).unsqueeze(-1);
  return where(is_pad, out.detach(), out);
}

}  // namespace glass::nn::functional
