// tests/nn/serialize/safetensors_test.cpp — glass::save / glass::load of named tensors.
//
// Two independent references: the values of what was saved, read through the address
// formula (testing::values), and files whose every byte is written out here from the
// safetensors spec — so the writer is checked byte for byte and the reader is checked on
// input our writer did not produce.
#include "nn/serialize/safetensors.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/test_util.h"
#include "nn/serialize/temp_dir.h"

namespace glass {
namespace {

using namespace std::string_literals;
using testing::file_bytes;
using testing::read_bytes;
using testing::ScratchDir;
using testing::write_bytes;

std::map<std::string, Tensor> by_name(const nn::NamedTensors& tensors) {
  return {tensors.begin(), tensors.end()};
}

std::vector<std::string> names_of(const nn::NamedTensors& tensors) {
  std::vector<std::string> out;
  for (const auto& entry : tensors) out.push_back(entry.first);
  return out;
}

// ---- the writer, byte for byte --------------------------------------------------------------

TEST(Safetensors, WritesTheSpecsBytesForOneTensor) {
  ScratchDir dir("safetensors");
  save({{"x", tensor({1.0f, 2.0f})}}, dir.path("x.safetensors"));
  // 54 bytes of JSON + 2 spaces = 56 = 0x38, so the data starts at 64, 8-byte aligned;
  // 1.0f = 0x3f800000 and 2.0f = 0x40000000, little-endian.
  const std::string expected = "\x38\0\0\0\0\0\0\0"s +
                               R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})" + "  " +
                               "\x00\x00\x80\x3f\x00\x00\x00\x40"s;
  EXPECT_EQ(read_bytes(dir.path("x.safetensors")), expected);
}

TEST(Safetensors, WritesMetadataFirstAndAnEmptyCheckpoint) {
  ScratchDir dir("safetensors");
  save({{"x", tensor({1.0f, 2.0f})}}, dir.path("m.safetensors"), {{"format", "pt"}});
  EXPECT_EQ(read_bytes(dir.path("m.safetensors")),
            "\x58\0\0\0\0\0\0\0"s + R"({"__metadata__":{"format":"pt"},)" +
                R"("x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})" + "   " +
                "\x00\x00\x80\x3f\x00\x00\x00\x40"s);
  save(nn::NamedTensors{}, dir.path("empty.safetensors"));
  EXPECT_EQ(read_bytes(dir.path("empty.safetensors")), "\x08\0\0\0\0\0\0\0{}      "s);
  EXPECT_TRUE(load(dir.path("empty.safetensors")).empty());
}

TEST(Safetensors, LaysOutDataLikeTheReferenceWriter) {
  // 8-byte dtypes first, then 4-byte, then BOOL; by name within a size.
  ScratchDir dir("safetensors");
  const std::string path = dir.path("order.safetensors");
  save({{"b", ones({3}, kFloat32)},
        {"a", ones({5}, kBool)},
        {"c", ones({1}, kFloat64)},
        {"a2", ones({1}, kInt64)},
        {"d", ones({3}, kInt32)}},
       path);
  const SafetensorsReader reader(path);
  std::vector<std::string> names;
  for (const auto& e : reader.entries()) {
    names.push_back(e.name);
    EXPECT_EQ(e.begin % element_size(e.dtype), 0u) << e.name << " is not naturally aligned";
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a2", "c", "b", "d", "a"}));
  EXPECT_EQ(names_of(load(path)), names);  // load() returns file order
  const std::string bytes = read_bytes(path);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]) % 8, 0) << "data section not 8-byte aligned";
}

// ---- round trips ------------------------------------------------------------------------------

TEST(Safetensors, RoundTripsEveryDtypeAndLayout) {
  ScratchDir dir("safetensors");
  const std::string path = dir.path("all.safetensors");
  nn::NamedTensors saved;
  uint64_t seed = 1;
  for (ScalarType dtype : {kBool, kInt32, kInt64, kFloat32, kFloat64}) {
    const std::string prefix = safetensors::dtype_name(dtype);
    const Tensor src = testing::random_tensor({3, 4}, dtype, seed++);
    for (testing::Layout layout : testing::kAllLayouts) {
      saved.emplace_back(prefix + "." + testing::to_string(layout),
                         testing::strided_variant(src, layout));
    }
    saved.emplace_back(prefix + ".scalar", testing::random_tensor({}, dtype, seed++));
    saved.emplace_back(prefix + ".empty", empty({0, 3}, TensorOptions(dtype)));
    saved.emplace_back(prefix + ".column", src.select(1, 2));  // stride 4, offset 2
  }
  save(saved, path);

  const nn::NamedTensors loaded = load(path);
  ASSERT_EQ(loaded.size(), saved.size());
  const auto loaded_by_name = by_name(loaded);
  for (const auto& [name, original] : saved) {
    SCOPED_TRACE(name);
    const Tensor& t = loaded_by_name.at(name);
    EXPECT_EQ(t.dtype(), original.dtype());
    EXPECT_EQ(t.sizes(), original.sizes());
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_EQ(testing::values(t), testing::values(original));
    // Fresh memory owned by the tensor alone: no view into a reader's buffer.
    EXPECT_FALSE(t.is_alias_of(original));
    EXPECT_EQ(t.storage().use_count(), 1);
    EXPECT_FALSE(t.requires_grad());
  }
}

TEST(Safetensors, KeepsEveryFloatBitPattern) {
  ScratchDir dir("safetensors");
  const float f[] = {std::numeric_limits<float>::quiet_NaN(),  INFINITY, -INFINITY, -0.0f,
                     std::numeric_limits<float>::denorm_min(), -3.25f};
  const double d[] = {-std::numeric_limits<double>::quiet_NaN(), -0.0, 1e-310, 0.1};
  save({{"f", from_blob(const_cast<float*>(f), {6}, kFloat32)},
        {"d", from_blob(const_cast<double*>(d), {4}, kFloat64)}},
       dir.path("bits.safetensors"));
  const auto loaded = by_name(load(dir.path("bits.safetensors")));
  EXPECT_EQ(std::memcmp(loaded.at("f").data_ptr(), f, sizeof f), 0);
  EXPECT_EQ(std::memcmp(loaded.at("d").data_ptr(), d, sizeof d), 0);
}

TEST(Safetensors, RoundTripsMetadataAndParameters) {
  ScratchDir dir("safetensors");
  const std::string path = dir.path("meta.safetensors");
  Tensor w = tensor({{1.5, -2.0}, {0.25, 4.0}}).requires_grad_();
  const std::map<std::string, std::string> metadata = {
      {"format", "pt"}, {"note", "caf\u00e9 \"quoted\"\n"}, {"", "empty key"}};
  save({{"w", w}}, path, metadata);
  const SafetensorsFile file = read_safetensors(path);
  EXPECT_EQ(file.metadata, metadata);
  ASSERT_EQ(file.tensors.size(), 1u);
  EXPECT_TRUE(testing::close(file.tensors[0].second, w.detach()));
  EXPECT_FALSE(file.tensors[0].second.requires_grad());
  EXPECT_TRUE(w.is_leaf());  // saving recorded no graph
}

// ---- the reader, on files built by hand ---------------------------------------------------------

TEST(Safetensors, LoadsAHandMadeFile) {
  // Listed out of data order, pretty-printed, not padded, a misaligned F64: all allowed.
  const std::string json = R"({
    "w": {"dtype": "F64", "shape": [1, 1], "data_offsets": [19, 27]},
    "flags": {"dtype": "BOOL", "shape": [3], "data_offsets": [16, 19]},
    "__metadata__": {"format": "pt", "note": "hand-made"},
    "count": {"dtype": "I64", "shape": [], "data_offsets": [0, 8]},
    "v": {"dtype": "F32", "shape": [2], "data_offsets": [27, 35]},
    "nothing": {"dtype": "F32", "shape": [0, 3], "data_offsets": [19, 19]},
    "ids": {"dtype": "I32", "shape": [2], "data_offsets": [8, 16]}
  })";
  const std::string data = "\x2c\x01\0\0\0\0\0\0"s                 // count = 300
                           + "\xfe\xff\xff\xff\x07\0\0\0"s         // ids = {-2, 7}
                           + "\x01\x00\x01"s                       // flags = {1, 0, 1}
                           + "\0\0\0\0\0\0\xf8\xbf"s               // w = {{-1.5}}
                           + "\x00\x00\x80\x3f\x00\x00\x00\x40"s;  // v = {1, 2}
  ScratchDir dir("safetensors");
  const std::string path = dir.path("hand.safetensors");
  write_bytes(path, file_bytes(json, data));

  const SafetensorsFile file = read_safetensors(path);
  EXPECT_EQ(names_of(file.tensors),
            (std::vector<std::string>{"count", "ids", "flags", "nothing", "w", "v"}));
  EXPECT_EQ(file.metadata,
            (std::map<std::string, std::string>{{"format", "pt"}, {"note", "hand-made"}}));
  const auto t = by_name(file.tensors);
  EXPECT_EQ(t.at("count").dim(), 0);
  EXPECT_EQ(t.at("count").item<int64_t>(), 300);
  EXPECT_EQ(t.at("ids").dtype(), kInt32);
  EXPECT_EQ(testing::values(t.at("ids")), (std::vector<double>{-2, 7}));
  EXPECT_EQ(t.at("flags").dtype(), kBool);
  EXPECT_EQ(testing::values(t.at("flags")), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(t.at("nothing").sizes(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(t.at("w").sizes(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(testing::values(t.at("w")), (std::vector<double>{-1.5}));
  EXPECT_EQ(testing::values(t.at("v")), (std::vector<double>{1, 2}));
}

TEST(Safetensors, ReaderReadsOneTensorOnDemand) {
  ScratchDir dir("safetensors");
  const std::string path = dir.path("lazy.safetensors");
  save({{"a", arange(6, kInt64).view({2, 3})}, {"b", ones({2}, kFloat32)}}, path);
  const SafetensorsReader reader(path);
  ASSERT_NE(reader.find("a"), nullptr);
  EXPECT_EQ(reader.find("a")->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(reader.find("zzz"), nullptr);
  EXPECT_EQ(testing::values(reader.read("a")), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_GLASS_ERROR(reader.read("zzz"), path.c_str(), "no tensor named 'zzz'");
}

// ---- rejected saves leave everything as it was ----------------------------------------------

TEST(Safetensors, RejectedSavesLeaveTheOldFileAndNoTempFile) {
  ScratchDir dir("safetensors");
  const std::string path = dir.path("model.safetensors");
  save({{"w", ones({4})}}, path);
  const std::string before = read_bytes(path);

  const Tensor x = zeros({2});
  EXPECT_GLASS_ERROR(save({{"w", x}, {"b", Tensor()}}, path), path.c_str(), "tensor 'b'",
                     "undefined");
  EXPECT_GLASS_ERROR(save({{"w", x}, {"w", x}}, path), "'w'", "used by two tensors");
  EXPECT_GLASS_ERROR(save({{"__metadata__", x}}, path), "reserved");
  EXPECT_GLASS_ERROR(save({{"w\xc3", x}}, path), "UTF-8");
  EXPECT_GLASS_ERROR(save({{"w", x}}, path, {{"k", "\xff"}}), "UTF-8");

  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"model.safetensors"}));
}

TEST(Safetensors, SavingIntoAMissingDirectoryFailsCleanly) {
  ScratchDir dir("safetensors");
  const std::string path = dir.path("no/such/dir/model.safetensors");
  EXPECT_GLASS_ERROR(save({{"w", ones({2})}}, path), path.c_str(), "temporary file",
                     "No such file or directory", "does the directory exist");
  EXPECT_TRUE(dir.names().empty());
}

TEST(Safetensors, SavingReplacesTheFileAndLeavesNoTempFile) {
  ScratchDir dir("safetensors");
  const std::string path = dir.path("model.safetensors");
  save({{"w", ones({4})}}, path);
  save({{"w", full({2}, 7.0)}}, path);
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"model.safetensors"}));
  EXPECT_EQ(testing::values(load(path)[0].second), (std::vector<double>{7, 7}));
}

TEST(Safetensors, LoadErrorsNameTheFile) {
  ScratchDir dir("safetensors");
  EXPECT_GLASS_ERROR(load(dir.path("missing.safetensors")), "load(", "missing.safetensors",
                     "cannot open", "No such file or directory");
  EXPECT_GLASS_ERROR(read_safetensors(dir.path("")), "read_safetensors(", "not a regular file",
                     "directory");
}

}  // namespace
}  // namespace glass
