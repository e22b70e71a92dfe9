// tests/nn/data/idx_test.cpp — the IDX reader on small files the tests write themselves.
//
// Each file is built byte by byte here (header, big-endian payload) and written with
// zlib's gzopen("wb") or as a plain file, so the reference is the values the test chose.
#include "nn/data/idx.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/test_util.h"

namespace glass::data {
namespace {

using Bytes = std::vector<uint8_t>;
using glass::testing::close;

class IdxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           (std::string("glass_idx_") + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write_gz(const std::string& name, const Bytes& bytes) const {
    std::string p = path(name);
    gzFile f = gzopen(p.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    if (!bytes.empty()) {
      EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
                static_cast<int>(bytes.size()));
    }
    EXPECT_EQ(gzclose(f), Z_OK);
    return p;
  }

  std::string write_plain(const std::string& name, const Bytes& bytes) const {
    std::string p = path(name);
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    return p;
  }

  std::filesystem::path dir_;
};

Bytes header(uint8_t type, const std::vector<uint32_t>& dims) {
  Bytes b = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) b.push_back(static_cast<uint8_t>(d >> shift));
  return b;
}

// Appends v big-endian.
template <class T>
void push_big_endian(Bytes& b, T v) {
  using Bits = std::conditional_t<
      sizeof(T) == 1, uint8_t,
      std::conditional_t<sizeof(T) == 2, uint16_t,
                         std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  auto bits = std::bit_cast<Bits>(v);
  for (int k = static_cast<int>(sizeof(T)) - 1; k >= 0; --k)
    b.push_back(static_cast<uint8_t>(bits >> (8 * k)));
}

// A (2, 3) uint8 image-like array: 0, 1, 127, 128, 200, 255.
Bytes small_uint8() {
  Bytes b = header(0x08, {2, 3});
  for (uint8_t v : {0, 1, 127, 128, 200, 255}) b.push_back(v);
  return b;
}

TEST_F(IdxTest, RoundTripsUint8AsInt64) {
  Tensor t = read_idx(write_gz("u8.gz", small_uint8()));
  EXPECT_EQ(t.dtype(), kInt64);
  EXPECT_EQ(t.sizes(), IntArrayRef({2, 3}));
  EXPECT_TRUE(close(t, {0, 1, 127, 128, 200, 255}, 0, 0));
}

TEST_F(IdxTest, ReadsAPlainUncompressedFileToo) {
  Tensor t = read_idx(write_plain("u8.idx", small_uint8()));
  EXPECT_TRUE(close(t, {0, 1, 127, 128, 200, 255}, 0, 0));
}

TEST_F(IdxTest, RoundTripsEverySignedAndFloatingType) {
  Bytes i8 = header(0x09, {4});
  for (int8_t v : {-128, -1, 0, 127}) push_big_endian(i8, v);
  Tensor t8 = read_idx(write_gz("i8.gz", i8));
  EXPECT_EQ(t8.dtype(), kInt64);
  EXPECT_TRUE(close(t8, {-128, -1, 0, 127}, 0, 0));

  Bytes i16 = header(0x0B, {3});
  for (int16_t v : {-32768, -2, 513}) push_big_endian(i16, v);
  Tensor t16 = read_idx(write_gz("i16.gz", i16));
  EXPECT_EQ(t16.dtype(), kInt32);
  EXPECT_TRUE(close(t16, {-32768, -2, 513}, 0, 0));

  Bytes i32 = header(0x0C, {2, 2});
  for (int32_t v : {-2147483647 - 1, -70000, 0x01020304, 2147483647}) push_big_endian(i32, v);
  Tensor t32 = read_idx(write_gz("i32.gz", i32));
  EXPECT_EQ(t32.dtype(), kInt32);
  EXPECT_TRUE(close(t32, {-2147483648.0, -70000, 0x01020304, 2147483647}, 0, 0));

  Bytes f32 = header(0x0D, {1, 1, 3});
  for (float v : {1.5f, -0.25f, 3.0e-20f}) push_big_endian(f32, v);
  Tensor tf = read_idx(write_gz("f32.gz", f32));
  EXPECT_EQ(tf.dtype(), kFloat32);
  EXPECT_EQ(tf.sizes(), IntArrayRef({1, 1, 3}));
  EXPECT_TRUE(close(tf, {1.5, -0.25, static_cast<double>(3.0e-20f)}, 0, 0));

  Bytes f64 = header(0x0E, {2});
  for (double v : {3.141592653589793, -1e300}) push_big_endian(f64, v);
  Tensor td = read_idx(write_gz("f64.gz", f64));
  EXPECT_EQ(td.dtype(), kFloat64);
  EXPECT_TRUE(close(td, {3.141592653589793, -1e300}, 0, 0));
}

TEST_F(IdxTest, RawReadKeepsTheStoredBytes) {
  IdxArray a = read_idx_raw(write_gz("u8.gz", small_uint8()));
  EXPECT_EQ(a.type, IdxType::UInt8);
  EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.bytes, (Bytes{0, 1, 127, 128, 200, 255}));
  EXPECT_EQ(to_string(IdxType::Float64), "float64 (0x0e)");
}

TEST_F(IdxTest, ZeroSizedDimGivesAnEmptyTensor) {
  Tensor t = read_idx(write_gz("empty.gz", header(0x08, {0, 28})));
  EXPECT_EQ(t.sizes(), IntArrayRef({0, 28}));
}

TEST_F(IdxTest, ALargeFileReadsInChunks) {
  // 3 MB crosses the reader's 1 MB first chunk and its doubling.
  const uint32_t n = 3 * 1024 * 1024 + 17;
  Bytes b = header(0x08, {n});
  for (uint32_t i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>(i * 7 + 3));
  IdxArray a = read_idx_raw(write_gz("big.gz", b));
  ASSERT_EQ(a.bytes.size(), n);
  EXPECT_TRUE(std::equal(a.bytes.begin(), a.bytes.end(), b.begin() + 8));
}

TEST_F(IdxTest, MissingFileNamesThePath) {
  std::string p = path("nope-idx1-ubyte.gz");
  EXPECT_GLASS_ERROR(read_idx(p), p.c_str(), "does not exist");
}

TEST_F(IdxTest, BadMagicNumber) {
  Bytes b = small_uint8();
  b[1] = 0x01;
  std::string p = write_gz("magic.gz", b);
  EXPECT_GLASS_ERROR(read_idx(p), p.c_str(), "bad magic number 0x00010802",
                     "starts with two zero bytes");
}

TEST_F(IdxTest, UnsupportedTypeCode) {
  for (uint8_t code : {0x00, 0x0A, 0x0F, 0xFF}) {
    Bytes b = small_uint8();
    b[2] = code;
    std::string p = write_gz("type.gz", b);
    EXPECT_GLASS_ERROR(read_idx(p), p.c_str(), "unsupported type code", "0x08 uint8");
  }
}

TEST_F(IdxTest, ZeroDimensions) {
  std::string p = write_gz("ndim0.gz", Bytes{0, 0, 0x08, 0});
  EXPECT_GLASS_ERROR(read_idx(p), "declares 0 dimensions");
}

TEST_F(IdxTest, TruncatedAtEveryRegionOfTheFile) {
  const Bytes full = small_uint8();  // 4 magic + 8 dims + 6 data = 18 bytes
  ASSERT_EQ(full.size(), 18u);
  struct Cut {
    size_t keep;
    const char* says;
  };
  for (Cut cut : {Cut{0, "inside the 4-byte magic number"}, Cut{3, "inside the 4-byte magic"},
                  Cut{4, "declares 2 dims (8 bytes) but only 0 bytes follow"},
                  Cut{9, "but only 5 bytes follow"}, Cut{12, "(6 bytes) but only 0 bytes follow"},
                  Cut{17, "(6 bytes) but only 5 bytes follow"}}) {
    SCOPED_TRACE(::testing::Message() << "kept " << cut.keep << " bytes");
    Bytes b(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut.keep));
    std::string p = write_gz("cut.gz", b);
    EXPECT_GLASS_ERROR(read_idx(p), p.c_str(), "is truncated", cut.says);
    std::string q = write_plain("cut.idx", b);
    EXPECT_GLASS_ERROR(read_idx(q), q.c_str(), "is truncated", cut.says);
  }
}

// A .gz file cut in the middle of its compressed stream (a download that stopped).
TEST_F(IdxTest, TruncatedCompressedStream) {
  Bytes b = header(0x08, {4096});
  for (int i = 0; i < 4096; ++i) b.push_back(static_cast<uint8_t>((i * 2654435761u) >> 24));
  std::string whole = write_gz("whole.gz", b);
  std::ifstream in(whole, std::ios::binary);
  Bytes compressed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(compressed.size(), 100u);
  compressed.resize(compressed.size() / 2);
  std::string p = write_plain("half.gz", compressed);
  EXPECT_GLASS_ERROR(read_idx(p), p.c_str(), "is truncated");
}

TEST_F(IdxTest, TrailingBytesAreAnError) {
  Bytes b = small_uint8();
  b.push_back(9);
  b.push_back(9);
  b.push_back(9);
  std::string p = write_gz("trailing.gz", b);
  EXPECT_GLASS_ERROR(read_idx(p), p.c_str(), "has 3 bytes after the data its header declares",
                     "dims [2, 3]");
}

TEST_F(IdxTest, AbsurdHeaderIsRejectedWithoutAllocatingIt) {
  std::string p = write_gz("huge.gz", header(0x0E, {0xFFFFFFFFu, 0xFFFFFFFFu, 16}));
  EXPECT_GLASS_ERROR(read_idx(p), "over 1 TiB of data", "header is probably corrupt");
  // Large but under the limit: reported as truncated after reading what is there.
  std::string q = write_gz("big-claim.gz", header(0x08, {1u << 30}));
  EXPECT_GLASS_ERROR(read_idx(q), "is truncated", "but only 0 bytes follow");
}

}  // namespace
}  // namespace glass::data
