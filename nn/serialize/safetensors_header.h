// nn/serialize/safetensors_header.h — the JSON header of a safetensors file, as data.
//
// A safetensors file is three parts (https://github.com/huggingface/safetensors):
//
//   [8 bytes]  N, the header length, an unsigned little-endian 64-bit integer
//   [N bytes]  a JSON object, padded with spaces:
//              {"__metadata__": {"format": "pt"},                      <- optional, str -> str
//               "fc.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
//               ...}
//   [rest]     the data section: every tensor's elements, row-major, little-endian;
//              data_offsets are [begin, end) byte offsets relative to its start.
//
// This file turns a Header into those N bytes and back, touching no file. Invariant: a
// Header that decode_header() returns has been checked against the size of the data
// section it describes — every dtype known, every shape's element count representable,
// every byte count equal to numel × element size, and the ranges, sorted by begin,
// tiling [0, data_bytes) exactly (no gap, no overlap, nothing left over) — so a reader
// may allocate and read what it says without further checks. encode_header() writes only
// Headers with that property.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/scalar_type.h"

namespace glass::safetensors {

// The reference implementation refuses headers above 100 MB; so do we, before reading one.
inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// Bytes before the JSON: the little-endian header length.
inline constexpr uint64_t kLengthFieldBytes = 8;

using Metadata = std::map<std::string, std::string>;

struct TensorEntry {
  std::string name;
  ScalarType dtype = ScalarType::Undefined;
  std::vector<int64_t> shape;  // [] for a 0-dim tensor
  uint64_t begin = 0;          // data_offsets, [begin, end) within the data section
  uint64_t end = 0;

  uint64_t nbytes() const { return end - begin; }
};

struct Header {
  std::vector<TensorEntry> tensors;  // in data order: sorted by (begin, end)
  Metadata metadata;                 // "__metadata__"; empty when the file has none
};

// The safetensors name of a dtype ("F32") and back. dtype_from_name returns Undefined for
// a name glasstorch cannot hold (including valid safetensors dtypes such as "F16").
const char* dtype_name(ScalarType dtype);
ScalarType dtype_from_name(std::string_view name);

// The header bytes: compact JSON with "__metadata__" first (only when non-empty), then the
// tensors in the order given, padded with spaces to a multiple of 8 bytes so that the data
// section starts 8-byte aligned. Names and metadata must be valid UTF-8 (checked);
// `context` prefixes any error message, e.g. "save(model.safetensors)".
std::string encode_header(const Header& header, const std::string& context);

// Parses and validates N header bytes against a data section of `data_bytes` bytes (see
// the invariant above). Every problem is a glass::Error that starts with `context` and
// names the offending tensor, key and numbers.
Header decode_header(std::string_view json, uint64_t data_bytes, const std::string& context);

}  // namespace glass::safetensors
