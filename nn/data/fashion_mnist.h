// nn/data/fashion_mnist.h — Fashion-MNIST (Zalando): 28x28 grey images of clothes in 10
// classes, 60000 for training and 10000 for testing.
//
// The files are those of Debian's package dataset-fashion-mnist, in
// /usr/share/datasets/fashion-mnist: {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz (IDX
// format, idx.h). Invariants after construction: images() is float32 (N, 784), each row one
// image flattened row-major, values v / 255 in [0, 1] (torchvision's ToTensor scaling, no
// normalisation); labels() is int64 (N) with values in [0, 9]; both are in memory (about
// 190 MB for the training split). It is a TensorDataset, so a DataLoader batches it with one
// gather per tensor. A subset costs nothing:
//
//   data::FashionMNIST train;  // the training split from the default folder
//   data::TensorDataset first_1000(train.images().narrow(0, 0, 1000),
//                                  train.labels().narrow(0, 0, 1000));
#pragma once

#include <array>
#include <string>

#include "nn/data/tensor_dataset.h"

namespace glass::data {

class FashionMNIST : public TensorDataset {
 public:
  enum class Split { Train, Test };

  static constexpr const char* kDefaultRoot = "/usr/share/datasets/fashion-mnist";
  static constexpr int64_t kImageSide = 28;
  static constexpr int64_t kNumClasses = 10;

  // Reads and converts both files of the split; throws (naming the file, and the package
  // to install when it is missing) if they are absent, malformed or disagree.
  explicit FashionMNIST(const std::string& root = kDefaultRoot, Split split = Split::Train);

  const Tensor& images() const { return data(); }     // (N, 784) float32 in [0, 1]
  const Tensor& labels() const { return targets(); }  // (N) int64 in [0, 9]
  Split split() const { return split_; }
  bool is_train() const { return split_ == Split::Train; }

  // "T-shirt/top", "Trouser", ..., "Ankle boot": the name of label i is class_names()[i].
  static const std::array<std::string, kNumClasses>& class_names();

 private:
  FashionMNIST(TensorDataset loaded, Split split)
      : TensorDataset(std::move(loaded)), split_(split) {}
  static TensorDataset load(const std::string& root, Split split);

  Split split_;
};

}  // namespace glass::data
