// nn/data/fashion_mnist.cpp — locate the split's two IDX files, check that they describe the
// same examples, and convert the bytes in one pass each (uint8 -> float32 through a
// 256-entry table, uint8 -> int64 for labels).
#include "nn/data/fashion_mnist.h"

#include <filesystem>

#include "core/error.h"
#include "core/ops/factories.h"
#include "core/parallel.h"
#include "nn/data/idx.h"

namespace glass::data {

namespace {

std::string split_file(const std::string& root, FashionMNIST::Split split, const char* kind) {
  const char* prefix = split == FashionMNIST::Split::Train ? "train" : "t10k";
  return (std::filesystem::path(root) / (std::string(prefix) + "-" + kind + "-ubyte.gz")).string();
}

void check_exists(const std::string& path, const std::string& root) {
  GLASS_CHECK(std::filesystem::exists(path), "FashionMNIST: '", path,
              "' not found. Install the Debian package dataset-fashion-mnist "
              "(apt-get install dataset-fashion-mnist), which puts the files in ",
              FashionMNIST::kDefaultRoot,
              ", or pass as root the folder that holds "
              "{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz (root was '",
              root, "')");
}

}  // namespace

FashionMNIST::FashionMNIST(const std::string& root, Split split)
    : FashionMNIST(load(root, split), split) {}

TensorDataset FashionMNIST::load(const std::string& root, Split split) {
  const std::string images_path = split_file(root, split, "images-idx3");
  const std::string labels_path = split_file(root, split, "labels-idx1");
  check_exists(images_path, root);
  check_exists(labels_path, root);

  IdxArray images = read_idx_raw(images_path);
  IdxArray labels = read_idx_raw(labels_path);
  GLASS_CHECK(images.type == IdxType::UInt8 && images.dims.size() == 3 &&
                  images.dims[1] == kImageSide && images.dims[2] == kImageSide,
              "FashionMNIST: '", images_path, "' holds dims ", IntArrayRef(images.dims),
              " of IDX type ", to_string(images.type),
              "; expected uint8 (0x08) images of dims [N, 28, 28]");
  GLASS_CHECK(labels.type == IdxType::UInt8 && labels.dims.size() == 1, "FashionMNIST: '",
              labels_path, "' holds dims ", IntArrayRef(labels.dims), " of IDX type ",
              to_string(labels.type), "; expected uint8 (0x08) labels of dims [N]");
  const int64_t n = labels.dims[0];
  GLASS_CHECK(images.dims[0] == n, "FashionMNIST: '", images_path, "' has ", images.dims[0],
              " images but '", labels_path, "' has ", n,
              " labels; the two files must come from the same split of the same release");

  const int64_t pixels = kImageSide * kImageSide;
  Tensor image_tensor = empty({n, pixels}, TensorOptions(kFloat32));
  float scale[256];  // v / 255 rounded once per byte value, exactly as a division would
  for (int v = 0; v < 256; ++v) scale[v] = static_cast<float>(v) / 255.0f;
  const uint8_t* src = images.bytes.data();
  float* dst = image_tensor.data_ptr<float>();
  parallel_for(0, n * pixels, 1 << 20, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = scale[src[i]];
  });

  Tensor label_tensor = empty({n}, TensorOptions(kInt64));
  int64_t* out = label_tensor.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t label = labels.bytes[static_cast<size_t>(i)];
    GLASS_CHECK(label < kNumClasses, "FashionMNIST: '", labels_path, "' has label ",
                static_cast<int>(label), " at index ", i,
                ", outside the 10 classes [0, 9]; the file is corrupt");
    out[i] = label;
  }
  return TensorDataset(image_tensor, label_tensor);
}

const std::array<std::string, FashionMNIST::kNumClasses>& FashionMNIST::class_names() {
  static const std::array<std::string, kNumClasses> names = {
      "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
      "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

}  // namespace glass::data
