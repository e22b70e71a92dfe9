// nn/modules/embedding.cpp — Embedding's table, its initialisation and forward.
#include "nn/modules/embedding.h"

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "nn/functional/embedding.h"
#include "nn/init.h"

namespace glass::nn {

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& opts) : Module("Embedding"), options(opts) {
  const int64_t n = options.num_embeddings();
  GLASS_CHECK(n >= 0 && options.embedding_dim() >= 0,
              "Embedding: num_embeddings and embedding_dim must be >= 0, got ", n, " and ",
              options.embedding_dim());
  if (auto pad = options.padding_idx()) {
    GLASS_CHECK(*pad >= -n && *pad < n, "Embedding: padding_idx ", *pad,
                " must be within num_embeddings = ", n, " (", -n, " .. ", n - 1, ")");
    // Stored non-negative, as PyTorch does, so forward and printing see one value.
    if (*pad < 0) options.padding_idx(*pad + n);
  }
  weight = register_parameter("weight", empty({n, options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (auto pad = options.padding_idx()) {
    NoGradGuard no_grad;
    weight.select(0, *pad).fill_(0);
  }
}

Tensor EmbeddingImpl::forward(const Tensor& indices) const {
  return functional::embedding(indices, weight, options.padding_idx());
}

void EmbeddingImpl::pretty_print(std::ostream& os) const {
  os << "Embedding(num_embeddings=" << options.num_embeddings()
     << ", embedding_dim=" << options.embedding_dim();
  if (auto pad = options.padding_idx()) os << ", padding_idx=" << *pad;
  os << ")";
}

}  // namespace glass::nn
