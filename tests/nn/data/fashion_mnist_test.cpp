// tests/nn/data/fashion_mnist_test.cpp — the real Fashion-MNIST files (Debian's
// dataset-fashion-mnist), skipped where they are not installed.
//
// The expected values were read independently with Python's gzip module from the same
// files (gzip.open(f).read(), header skipped): the first 20 labels of each split, pixels
// 350..359 of the first training image, its pixel sum (76247) and the class counts.
#include "nn/data/fashion_mnist.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/test_util.h"
#include "nn/data/dataloader.h"

namespace glass::data {
namespace {

using glass::testing::close;

bool installed() { return std::filesystem::exists(FashionMNIST::kDefaultRoot); }

class FashionMNISTTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!installed()) return;
    train_ = std::make_unique<FashionMNIST>();
    test_ = std::make_unique<FashionMNIST>(FashionMNIST::kDefaultRoot, FashionMNIST::Split::Test);
  }
  static void TearDownTestSuite() {
    train_.reset();
    test_.reset();
  }
  void SetUp() override {
    if (!installed())
      GTEST_SKIP() << FashionMNIST::kDefaultRoot
                   << " is absent (apt-get install dataset-fashion-mnist)";
  }

  static std::unique_ptr<FashionMNIST> train_;
  static std::unique_ptr<FashionMNIST> test_;
};
std::unique_ptr<FashionMNIST> FashionMNISTTest::train_;
std::unique_ptr<FashionMNIST> FashionMNISTTest::test_;

std::vector<int64_t> first_labels(const FashionMNIST& ds, int64_t n) {
  const int64_t* p = ds.labels().data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + n);
}

TEST_F(FashionMNISTTest, SizesShapesAndDtypes) {
  EXPECT_EQ(train_->size(), 60000u);
  EXPECT_EQ(test_->size(), 10000u);
  EXPECT_TRUE(train_->is_train());
  EXPECT_FALSE(test_->is_train());
  EXPECT_EQ(train_->images().sizes(), IntArrayRef({60000, 784}));
  EXPECT_EQ(train_->images().dtype(), kFloat32);
  EXPECT_EQ(train_->labels().sizes(), IntArrayRef({60000}));
  EXPECT_EQ(train_->labels().dtype(), kInt64);
  EXPECT_EQ(test_->images().sizes(), IntArrayRef({10000, 784}));
}

TEST_F(FashionMNISTTest, FirstLabelsMatchTheFiles) {
  EXPECT_EQ(first_labels(*train_, 20),
            (std::vector<int64_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5, 0, 9, 5, 5, 7, 9, 1, 0, 6, 4}));
  EXPECT_EQ(first_labels(*test_, 20),
            (std::vector<int64_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7, 4, 5, 7, 3, 4, 1, 2, 4, 8, 0}));
  EXPECT_EQ(FashionMNIST::class_names()[9], "Ankle boot");  // train image 0 is an ankle boot
}

TEST_F(FashionMNISTTest, PixelsAreTheBytesOver255) {
  const float* img = train_->images().data_ptr<float>();
  const int bytes[] = {222, 220, 218, 203, 198, 221, 215, 213, 222, 220};
  for (int k = 0; k < 10; ++k) EXPECT_EQ(img[350 + k], static_cast<float>(bytes[k]) / 255.0f);
  double sum = 0;
  for (int k = 0; k < 784; ++k) sum += img[k];
  EXPECT_NEAR(sum, 76247.0 / 255.0, 1e-3);
}

TEST_F(FashionMNISTTest, ValuesAreInRange) {
  for (const FashionMNIST* ds : {train_.get(), test_.get()}) {
    const float* img = ds->images().data_ptr<float>();
    float lo = img[0], hi = img[0];
    for (int64_t i = 0; i < ds->images().numel(); ++i) {
      lo = std::min(lo, img[i]);
      hi = std::max(hi, img[i]);
    }
    EXPECT_EQ(lo, 0.0f);
    EXPECT_EQ(hi, 1.0f);  // some pixel is pure white (255)
    const int64_t* labels = ds->labels().data_ptr<int64_t>();
    auto [min_label, max_label] = std::minmax_element(labels, labels + ds->labels().numel());
    EXPECT_EQ(*min_label, 0);
    EXPECT_EQ(*max_label, 9);
  }
}

TEST_F(FashionMNISTTest, ClassesAreBalanced) {
  for (auto [ds, per_class] : {std::pair{train_.get(), 6000}, std::pair{test_.get(), 1000}}) {
    std::vector<int> counts(10, 0);
    const int64_t* p = ds->labels().data_ptr<int64_t>();
    for (int64_t i = 0; i < ds->labels().numel(); ++i) ++counts[static_cast<size_t>(p[i])];
    EXPECT_EQ(counts, std::vector<int>(10, per_class));
  }
}

TEST_F(FashionMNISTTest, ClassNames) {
  const auto& names = FashionMNIST::class_names();
  EXPECT_EQ(names[0], "T-shirt/top");
  EXPECT_EQ(names[1], "Trouser");
  EXPECT_EQ(names[2], "Pullover");
  EXPECT_EQ(names[3], "Dress");
  EXPECT_EQ(names[4], "Coat");
  EXPECT_EQ(names[5], "Sandal");
  EXPECT_EQ(names[6], "Shirt");
  EXPECT_EQ(names[7], "Sneaker");
  EXPECT_EQ(names[8], "Bag");
  EXPECT_EQ(names[9], "Ankle boot");
}

TEST_F(FashionMNISTTest, BatchesThroughADataLoader) {
  DataLoader loader(std::make_shared<FashionMNIST>(*test_), DataLoaderOptions(256));
  EXPECT_EQ(loader.size(), 40u);  // ceil(10000 / 256)
  auto it = loader.begin();
  EXPECT_EQ(it->data.sizes(), IntArrayRef({256, 784}));
  EXPECT_EQ(it->target.sizes(), IntArrayRef({256}));
  EXPECT_TRUE(close(it->target.narrow(0, 0, 5), {9, 2, 1, 1, 6}, 0, 0));
  EXPECT_TRUE(close(it->data.narrow(0, 3, 1), test_->images().narrow(0, 3, 1), 0, 0));
}

TEST_F(FashionMNISTTest, ASubsetIsANarrowedView) {
  TensorDataset first(train_->images().narrow(0, 0, 100), train_->labels().narrow(0, 0, 100));
  EXPECT_EQ(first.size(), 100u);
  EXPECT_TRUE(first.data().is_alias_of(train_->images()));
  EXPECT_EQ(first.get(0).target.item<int64_t>(), 9);
}

// ---- malformed copies, written here: a folder with a tiny "training split" ----

class FakeFashionMNIST : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = std::filesystem::path(::testing::TempDir()) /
            (std::string("glass_fmnist_") + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // An IDX uint8 file: header for `dims`, then `payload`.
  void write(const std::string& name, const std::vector<uint32_t>& dims,
             const std::vector<uint8_t>& payload) const {
    std::vector<uint8_t> b = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
    for (uint32_t d : dims)
      for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(d >> shift));
    b.insert(b.end(), payload.begin(), payload.end());
    gzFile f = gzopen((root_ / name).string().c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, b.data(), static_cast<unsigned>(b.size())), static_cast<int>(b.size()));
    ASSERT_EQ(gzclose(f), Z_OK);
  }
  void write_images(uint32_t n) const {
    std::vector<uint8_t> pixels(n * 784);
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i % 256);
    write("train-images-idx3-ubyte.gz", {n, 28, 28}, pixels);
  }

  std::string root() const { return root_.string(); }
  std::filesystem::path root_;
};

TEST_F(FakeFashionMNIST, LoadsAWellFormedSplit) {
  write_images(3);
  write("train-labels-idx1-ubyte.gz", {3}, {4, 0, 9});
  FashionMNIST ds(root());
  EXPECT_EQ(ds.size(), 3u);
  EXPECT_TRUE(close(ds.labels(), {4, 0, 9}, 0, 0));
  // Pixel k of the file is k % 256: row 1 starts at byte 784 = 3 * 256 + 16.
  EXPECT_EQ(ds.images().data_ptr<float>()[784], 16.0f / 255.0f);
  EXPECT_EQ(ds.images().data_ptr<float>()[255], 1.0f);
}

TEST_F(FakeFashionMNIST, ImageAndLabelCountsMustAgree) {
  write_images(3);
  write("train-labels-idx1-ubyte.gz", {2}, {1, 2});
  EXPECT_GLASS_ERROR(FashionMNIST{root()}, "has 3 images but", "has 2 labels",
                     "same split of the same release");
}

TEST_F(FakeFashionMNIST, LabelsMustBeClasses) {
  write_images(2);
  write("train-labels-idx1-ubyte.gz", {2}, {3, 10});
  EXPECT_GLASS_ERROR(FashionMNIST{root()}, "has label 10 at index 1", "outside the 10 classes");
}

TEST_F(FakeFashionMNIST, ImagesMustBe28By28) {
  write("train-images-idx3-ubyte.gz", {2, 27, 28}, std::vector<uint8_t>(2 * 27 * 28));
  write("train-labels-idx1-ubyte.gz", {2}, {0, 1});
  EXPECT_GLASS_ERROR(FashionMNIST{root()}, "holds dims [2, 27, 28] of IDX type uint8 (0x08)",
                     "images of dims [N, 28, 28]");
}

TEST_F(FakeFashionMNIST, LabelsMustBeOneDimensional) {
  write_images(2);
  write("train-labels-idx1-ubyte.gz", {2, 1}, {0, 1});
  EXPECT_GLASS_ERROR(FashionMNIST{root()}, "holds dims [2, 1]", "labels of dims [N]");
}

TEST_F(FakeFashionMNIST, MissingLabelsFileIsNamed) {
  write_images(2);
  EXPECT_GLASS_ERROR(FashionMNIST{root()}, "train-labels-idx1-ubyte.gz' not found",
                     "dataset-fashion-mnist");
}

TEST(FashionMNIST, MissingFilesNameThePackageToInstall) {
  std::string root = (std::filesystem::path(::testing::TempDir()) / "no-fashion-here").string();
  EXPECT_GLASS_ERROR(FashionMNIST{root}, "train-images-idx3-ubyte.gz' not found",
                     "dataset-fashion-mnist", "apt-get install dataset-fashion-mnist",
                     root.c_str());
  EXPECT_GLASS_ERROR(FashionMNIST(root, FashionMNIST::Split::Test), "t10k-images-idx3-ubyte.gz");
}

}  // namespace
}  // namespace glass::data
