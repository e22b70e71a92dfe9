// tests/nn/serialize/safetensors_corruption_test.cpp — damaged files give clean errors.
//
// The loader's contract on bad input: a glass::Error that names the file, never a crash,
// a hang, another exception type, or a silently wrong tensor. These tests damage a small
// real checkpoint every way a disk, a download or a copy can — truncation at every byte,
// every single-bit flip, random overwrites, appended bytes — plus hand-made headers
// that lie about lengths and offsets. (They run under ASan + UBSan too, where a read past
// a buffer or a bool holding 2 would be caught.)
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/test_util.h"
#include "nn/serialize/safetensors.h"
#include "nn/serialize/temp_dir.h"

namespace glass {
namespace {

using namespace std::string_literals;
using testing::file_bytes;
using testing::read_bytes;
using testing::ScratchDir;
using testing::write_bytes;

// nullopt when `path` loads; the glass::Error's message when it does not. Any other
// exception escapes and fails the test.
std::optional<std::string> load_error(const std::string& path) {
  try {
    load(path);
    return std::nullopt;
  } catch (const Error& e) {
    return std::string(e.what());
  }
}

// A small checkpoint with every dtype, a 0-dim, an empty tensor and metadata.
std::string make_checkpoint(const ScratchDir& dir) {
  const std::string path = dir.path("good.safetensors");
  save({{"w", arange(6, kFloat32).view({2, 3})},
        {"b", tensor({0.5, -0.25})},
        {"step", scalar_tensor(7, kInt64)},
        {"ids", tensor({3, -1, 2}, kInt32)},
        {"mask", tensor({true, false, true, true})},
        {"none", empty({0}, kFloat32)}},
       path, {{"format", "pt"}});
  return path;
}

TEST(SafetensorsCorruption, TruncationAtEveryByteIsACleanError) {
  ScratchDir dir("corruption");
  const std::string good = read_bytes(make_checkpoint(dir));
  const std::string path = dir.path("cut.safetensors");
  for (size_t length = 0; length < good.size(); ++length) {
    write_bytes(path, good.substr(0, length));
    const std::optional<std::string> error = load_error(path);
    ASSERT_TRUE(error.has_value()) << "a file cut to " << length << " bytes loaded";
    EXPECT_NE(error->find(path), std::string::npos) << *error;
    EXPECT_NE(error->find("truncated"), std::string::npos) << *error;
  }
}

TEST(SafetensorsCorruption, EverySingleBitFlipIsACleanErrorOrAFaithfulLoad) {
  ScratchDir dir("corruption");
  const std::string good_path = make_checkpoint(dir);
  const std::string good = read_bytes(good_path);
  const SafetensorsReader layout(good_path);
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = (header_length << 8) | static_cast<uint8_t>(good[i]);
  const size_t data_start = 8 + header_length;

  const std::string path = dir.path("flipped.safetensors");
  size_t errors = 0, loads = 0;
  for (size_t byte = 0; byte < good.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      SCOPED_TRACE(::testing::Message() << "bit " << bit << " of byte " << byte);
      std::string bad = good;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      write_bytes(path, bad);
      const std::optional<std::string> error = load_error(path);
      if (error) {
        ++errors;
        EXPECT_NE(error->find(path), std::string::npos) << *error;
      } else {
        ++loads;
      }
      if (byte < data_start) continue;  // header: either outcome is fine, cleanly

      // In the data section every pattern is a valid number, except in BOOL bytes, where
      // only bit 0 keeps the value 0 or 1.
      const auto& entries = layout.entries();
      const auto owner = std::find_if(entries.begin(), entries.end(), [&](const auto& e) {
        return byte - data_start >= e.begin && byte - data_start < e.end;
      });
      ASSERT_NE(owner, entries.end());
      if (owner->dtype == kBool && bit != 0) {
        ASSERT_TRUE(error.has_value());
        EXPECT_NE(error->find("BOOL elements must be 0 or 1"), std::string::npos) << *error;
        continue;
      }
      ASSERT_FALSE(error.has_value()) << *error;
      // A faithful load: the tensor holds exactly the (flipped) bytes of the file.
      const Tensor t = SafetensorsReader(path).read(owner->name);
      EXPECT_EQ(std::string(static_cast<const char*>(t.data_ptr()), owner->nbytes()),
                bad.substr(data_start + owner->begin, owner->nbytes()));
    }
  }
  EXPECT_EQ(errors + loads, good.size() * 8);
  EXPECT_GT(errors, 0u);
  EXPECT_GT(loads, 0u);
}

TEST(SafetensorsCorruption, RandomOverwritesAreCleanErrorsOrLoads) {
  ScratchDir dir("corruption");
  const std::string good = read_bytes(make_checkpoint(dir));
  const std::string path = dir.path("garbled.safetensors");
  std::mt19937 gen(1234);
  std::uniform_int_distribution<size_t> position(0, good.size() - 1);
  std::uniform_int_distribution<int> count(1, 8), value(0, 255);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = good;
    for (int n = count(gen); n > 0; --n) bad[position(gen)] = static_cast<char>(value(gen));
    write_bytes(path, bad);
    const std::optional<std::string> error = load_error(path);
    if (error) {
      EXPECT_NE(error->find(path), std::string::npos) << *error;
    }
  }
}

TEST(SafetensorsCorruption, TrailingBytesAreAnError) {
  ScratchDir dir("corruption");
  const std::string good = read_bytes(make_checkpoint(dir));
  const std::string path = dir.path("long.safetensors");
  for (const std::string& extra : {"\0"s, " "s, "12345678"s}) {
    write_bytes(path, good + extra);
    EXPECT_GLASS_ERROR(load(path), path.c_str(), "belong to no tensor");
  }
}

TEST(SafetensorsCorruption, HeaderLengthsBeyondTheFileAreRefusedBeforeAllocating) {
  ScratchDir dir("corruption");
  const std::string path = dir.path("len.safetensors");
  // 2^64 - 1: allocating it first would throw std::length_error, not glass::Error.
  write_bytes(path, "\xff\xff\xff\xff\xff\xff\xff\xff{}"s);
  EXPECT_GLASS_ERROR(load(path), path.c_str(), "18446744073709551615",
                     "more than the format's limit of 100000000");
  write_bytes(path, "\x01\xe1\xf5\x05\0\0\0\0{}"s);  // 100'000'001
  EXPECT_GLASS_ERROR(load(path), "100000001", "limit");
  write_bytes(path, "\xff\xe0\xf5\x05\0\0\0\0{}"s);  // 99'999'999: within the limit, not the file
  EXPECT_GLASS_ERROR(load(path), "99999999 bytes, but only 2 follow it", "truncated");
  write_bytes(path, "\x03\0\0\0\0\0\0\0{}"s);
  EXPECT_GLASS_ERROR(load(path), "3 bytes, but only 2 follow it");
}

TEST(SafetensorsCorruption, OffsetsThatDoNotTileTheFileAreAnError) {
  ScratchDir dir("corruption");
  const std::string path = dir.path("offsets.safetensors");
  const std::string eight = "\0\0\x80\x3f\0\0\0\x40"s;
  write_bytes(path, file_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                               R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                               eight));
  EXPECT_GLASS_ERROR(load(path), path.c_str(), "tensor 'b'", "overlaps tensor 'a'");
  write_bytes(path, file_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                               R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                               eight + "abcd"));
  EXPECT_GLASS_ERROR(load(path), path.c_str(), "no tensor covers data bytes [4, 8)");
  write_bytes(path,
              file_bytes(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", eight));
  EXPECT_GLASS_ERROR(load(path), path.c_str(), "only 8 bytes", "truncated");
}

TEST(SafetensorsCorruption, BoolBytesMustBeZeroOrOne) {
  ScratchDir dir("corruption");
  const std::string path = dir.path("bool.safetensors");
  const std::string json = R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})";
  write_bytes(path, file_bytes(json, "\x01\x02\x00"s));
  const std::string offset = "file offset " + std::to_string(8 + json.size() + 1);
  EXPECT_GLASS_ERROR(load(path), path.c_str(), "tensor 'm' (BOOL) holds the byte 2",
                     offset.c_str());
}

TEST(SafetensorsCorruption, NonFilesAreRefusedWithoutBlocking) {
  ScratchDir dir("corruption");
  const std::string fifo = dir.path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Opening a FIFO for reading blocks until a writer appears, unless refused up front.
  EXPECT_GLASS_ERROR(load(fifo), fifo.c_str(), "not a regular file");
}

}  // namespace
}  // namespace glass
