// nn/modules/embedding.h — Embedding: a learned table of num_embeddings vectors.
//
// weight (num_embeddings, embedding_dim) starts as N(0, 1), PyTorch's default; with a
// padding_idx that row starts at zero and never receives a gradient, so a padding token
// maps to the zero vector for the whole of training (unless the user writes the row).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "core/tensor.h"
#include "nn/module.h"

namespace glass::nn {

// EmbeddingOptions(10000, 512).padding_idx(0)
struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EmbeddingOptions& padding_idx(std::optional<int64_t> index) {
    padding_idx_ = index;
    return *this;
  }
  int64_t num_embeddings() const { return num_embeddings_; }
  int64_t embedding_dim() const { return embedding_dim_; }
  std::optional<int64_t> padding_idx() const { return padding_idx_; }

 private:
  int64_t num_embeddings_;
  int64_t embedding_dim_;
  std::optional<int64_t> padding_idx_;
};

class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);

  // Redraws weight from N(0, 1) and zeroes the padding row.
  void reset_parameters();

  // indices: (*) Long or Int → (*, embedding_dim)
  Tensor forward(const Tensor& indices) const;

  // "Embedding(num_embeddings=10, embedding_dim=3, padding_idx=0)"
  void pretty_print(std::ostream& os) const override;

  EmbeddingOptions options;
  Tensor weight;  // (num_embeddings, embedding_dim)
};
GLASS_MODULE(Embedding);

}  // namespace glass::nn
