// tests/nn/serialize/safetensors_header_test.cpp — encode_header / decode_header, no files.
//
// Every header here is written out by hand as JSON text from the safetensors spec, so
// the validation is checked against the spec, not against our own writer. Each invalid
// header must be a glass::Error that names the tensor or key at fault.
#include "nn/serialize/safetensors_header.h"

#include <string>

#include "core/test_util.h"

namespace glass {
namespace {

using safetensors::decode_header;
using safetensors::encode_header;
using safetensors::Header;
using safetensors::TensorEntry;

const std::string kContext = "load(h.safetensors)";

// One entry's JSON, as the spec writes it.
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  uint64_t begin, uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
}

TEST(SafetensorsHeader, DecodesEveryDtypeInDataOrder) {
  // Listed out of data order, with whitespace the spec allows.
  const std::string json =
      "{ " + entry("f64", "F64", "[1, 2]", 0, 16) + ",\n" + entry("mask", "BOOL", "[3]", 40, 43) +
      ", " + entry("i64", "I64", "[]", 16, 24) + ", " + entry("f32", "F32", "[2]", 24, 32) + ", " +
      entry("i32", "I32", "[2, 1]", 32, 40) + " }   ";
  const Header h = decode_header(json, 43, kContext);
  ASSERT_EQ(h.tensors.size(), 5u);
  const char* names[] = {"f64", "i64", "f32", "i32", "mask"};
  const ScalarType dtypes[] = {kFloat64, kInt64, kFloat32, kInt32, kBool};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(h.tensors[i].name, names[i]);
    EXPECT_EQ(h.tensors[i].dtype, dtypes[i]);
  }
  EXPECT_EQ(h.tensors[0].shape, (std::vector<int64_t>{1, 2}));
  EXPECT_TRUE(h.tensors[1].shape.empty());  // 0-dim
  EXPECT_EQ(h.tensors[4].begin, 40u);
  EXPECT_EQ(h.tensors[4].end, 43u);
  EXPECT_TRUE(h.metadata.empty());
}

TEST(SafetensorsHeader, ZeroByteTensorsAndEmptyFiles) {
  // [0, 3] holds no elements: begin == end, anywhere in the sequence.
  const std::string json = "{" + entry("empty", "F32", "[0, 3]", 0, 0) + "," +
                           entry("x", "F32", "[1]", 0, 4) + "," +
                           entry("tail", "I64", "[2, 0]", 4, 4) + "}";
  const Header h = decode_header(json, 4, kContext);
  ASSERT_EQ(h.tensors.size(), 3u);
  EXPECT_EQ(h.tensors[0].name, "empty");
  EXPECT_EQ(h.tensors[2].name, "tail");
  EXPECT_TRUE(decode_header("{}", 0, kContext).tensors.empty());
}

TEST(SafetensorsHeader, ReadsMetadata) {
  const std::string json = "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"caf\u00e9\"}," +
                           entry("x", "F32", "[1]", 0, 4) + "}";
  const Header h = decode_header(json, 4, kContext);
  EXPECT_EQ(h.metadata.size(), 2u);
  EXPECT_EQ(h.metadata.at("format"), "pt");
  EXPECT_EQ(h.metadata.at("note"), "caf\u00e9");
  EXPECT_GLASS_ERROR(decode_header("{\"__metadata__\":{\"n\":1}}", 0, kContext), kContext.c_str(),
                     "\"n\"", "must be strings");
  EXPECT_GLASS_ERROR(decode_header("{\"__metadata__\":[]}", 0, kContext), "__metadata__",
                     "must be an object");
}

TEST(SafetensorsHeader, EncodesTheReferenceLayout) {
  Header h;
  h.tensors.push_back({"x", kFloat32, {2}, 0, 8});
  // Compact JSON, fields in the reference's order, padded with spaces to 56 = 7 * 8 bytes.
  EXPECT_EQ(encode_header(h, kContext),
            "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}  ");
  h.metadata = {{"format", "pt"}};
  const std::string with_metadata = encode_header(h, kContext);
  EXPECT_EQ(with_metadata,
            "{\"__metadata__\":{\"format\":\"pt\"},"
            "\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}   ");
  EXPECT_EQ(with_metadata.size() % 8, 0u);
  const Header back = decode_header(with_metadata, 8, kContext);
  EXPECT_EQ(back.metadata, h.metadata);
  EXPECT_EQ(back.tensors[0].shape, h.tensors[0].shape);
}

TEST(SafetensorsHeader, EncodeRejectsNamesThatCannotRoundTrip) {
  Header h;
  h.tensors.push_back({"a", kFloat32, {1}, 0, 4});
  h.tensors.push_back({"a", kFloat32, {1}, 4, 8});
  EXPECT_GLASS_ERROR(encode_header(h, kContext), "'a'", "used twice");
  h.tensors = {{"__metadata__", kFloat32, {1}, 0, 4}};
  EXPECT_GLASS_ERROR(encode_header(h, kContext), "reserved");
  h.tensors = {{"bad\xff", kFloat32, {1}, 0, 4}};
  EXPECT_GLASS_ERROR(encode_header(h, kContext), kContext.c_str(), "UTF-8");
}

TEST(SafetensorsHeader, RejectsJsonThatIsNotAHeader) {
  EXPECT_GLASS_ERROR(decode_header("", 0, kContext), kContext.c_str(), "not valid JSON");
  // The error names the file offset: '{' is at 8, the bad 'x' at 9.
  EXPECT_GLASS_ERROR(decode_header("{x", 0, kContext), "not valid JSON", "file offset 9");
  EXPECT_GLASS_ERROR(decode_header("[1, 2]", 0, kContext), "must be an object", "array");
  EXPECT_GLASS_ERROR(decode_header("{\"a\":\"\xc3\x28\"}", 0, kContext), "not valid JSON");
  EXPECT_GLASS_ERROR(decode_header("{} {}", 0, kContext), "not valid JSON");
  EXPECT_GLASS_ERROR(decode_header("{\"a\":1e999}", 0, kContext), kContext.c_str());
}

TEST(SafetensorsHeader, RejectsRepeatedKeysAndDeepNesting) {
  const std::string x = entry("x", "F32", "[1]", 0, 4);
  EXPECT_GLASS_ERROR(decode_header("{" + x + "," + x + "}", 4, kContext), "repeats the key \"x\"");
  EXPECT_GLASS_ERROR(decode_header("{\"x\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],"
                                   "\"data_offsets\":[0,4]}}",
                                   4, kContext),
                     "repeats the key \"dtype\"");
  // The same key in two different objects is fine.
  EXPECT_NO_THROW(decode_header("{\"__metadata__\":{\"x\":\"1\"}," + x + "}", 4, kContext));
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_GLASS_ERROR(decode_header(deep, 0, kContext), "nests deeper");
  EXPECT_GLASS_ERROR(
      decode_header("{\"x\":{\"dtype\":\"F32\",\"shape\":[[1]],\"data_offsets\":[0,4]}}", 4,
                    kContext),
      "nests deeper");
}

TEST(SafetensorsHeader, RejectsMalformedEntries) {
  auto bad = [](const std::string& body) {
    return decode_header("{\"t\":" + body + "}", 8, kContext);
  };
  EXPECT_GLASS_ERROR(bad("[]"), "tensor 't'", "must be an object");
  EXPECT_GLASS_ERROR(bad(R"({"dtype":"F32","shape":[2]})"), "tensor 't'", "lacks \"data_offsets\"");
  EXPECT_GLASS_ERROR(bad(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1})"),
                     "unexpected key \"x\"");
  EXPECT_GLASS_ERROR(bad(R"({"dtype":"F16","shape":[4],"data_offsets":[0,8]})"), "\"F16\"",
                     "BOOL, I32, I64, F32 and F64");
  EXPECT_GLASS_ERROR(bad(R"({"dtype":3,"shape":[2],"data_offsets":[0,8]})"),
                     "\"dtype\" must be a string");
  EXPECT_GLASS_ERROR(bad(R"({"dtype":"F32","shape":2,"data_offsets":[0,8]})"),
                     "\"shape\" must be an array");
  EXPECT_GLASS_ERROR(bad(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})"),
                     "non-negative integers");
  EXPECT_GLASS_ERROR(bad(R"({"dtype":"F32","shape":[2.0],"data_offsets":[0,8]})"),
                     "non-negative integers");
  EXPECT_GLASS_ERROR(bad(R"({"dtype":"F32","shape":["2"],"data_offsets":[0,8]})"),
                     "non-negative integers");
  EXPECT_GLASS_ERROR(bad(R"({"dtype":"F32","shape":[2],"data_offsets":[0]})"),
                     "must be [begin, end]");
  EXPECT_GLASS_ERROR(bad(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})"), "begin <= end");
  EXPECT_GLASS_ERROR(bad(R"({"dtype":"F32","shape":[2],"data_offsets":[-1,7]})"),
                     "non-negative integers");
}

TEST(SafetensorsHeader, ByteCountMustEqualNumelTimesElementSize) {
  EXPECT_GLASS_ERROR(decode_header("{" + entry("t", "F32", "[3]", 0, 8) + "}", 8, kContext),
                     "tensor 't'", "span 8 bytes", "3 x 4 = 12 bytes");
  // Element counts that overflow int64, or whose bytes overflow 2^64, are refused by
  // arithmetic, not by trying to allocate them.
  EXPECT_GLASS_ERROR(
      decode_header("{" + entry("t", "F32", "[4294967296, 4294967296]", 0, 8) + "}", 8, kContext),
      "more elements than int64 can count");
  EXPECT_GLASS_ERROR(
      decode_header("{" + entry("t", "F32", "[0, 4294967296, 4294967296]", 0, 0) + "}", 0,
                    kContext),
      "more elements than int64 can count");
  EXPECT_GLASS_ERROR(
      decode_header("{" + entry("t", "F64", "[4611686018427387904]", 0, 8) + "}", 8, kContext),
      "more than 2^64");
  EXPECT_GLASS_ERROR(
      decode_header("{" + entry("t", "F32", "[18446744073709551615]", 0, 8) + "}", 8, kContext),
      "more elements than int64 can count");
}

TEST(SafetensorsHeader, OffsetsMustTileTheDataSectionExactly) {
  const std::string a = entry("a", "F32", "[2]", 0, 8);
  // Gap: nothing covers [8, 12).
  EXPECT_GLASS_ERROR(
      decode_header("{" + a + "," + entry("b", "F32", "[1]", 12, 16) + "}", 16, kContext),
      "no tensor covers data bytes [8, 12)", "'b'");
  // Overlap: b starts inside a.
  EXPECT_GLASS_ERROR(
      decode_header("{" + a + "," + entry("b", "F32", "[2]", 4, 12) + "}", 12, kContext), "'b'",
      "overlaps tensor 'a'");
  // Two names for the same bytes.
  EXPECT_GLASS_ERROR(
      decode_header("{" + a + "," + entry("b", "F32", "[2]", 0, 8) + "}", 8, kContext), "overlaps");
  // Not starting at 0.
  EXPECT_GLASS_ERROR(decode_header("{" + entry("a", "F32", "[1]", 4, 8) + "}", 8, kContext),
                     "no tensor covers data bytes [0, 4)");
  // Trailing bytes nobody owns.
  EXPECT_GLASS_ERROR(decode_header("{" + a + "}", 9, kContext),
                     "data bytes [8, 9) belong to no tensor");
  EXPECT_GLASS_ERROR(decode_header("{}", 3, kContext), "data bytes [0, 3)");
  // Past the end of the data: a truncated file.
  EXPECT_GLASS_ERROR(decode_header("{" + a + "}", 7, kContext), "tensor 'a'", "only 7 bytes",
                     "truncated");
  // A huge end cannot wrap around.
  EXPECT_GLASS_ERROR(
      decode_header(
          "{" + entry("a", "F32", "[2]", 18446744073709551607u, 18446744073709551615u) + "}", 8,
          kContext),
      "truncated");
}

}  // namespace
}  // namespace glass
