// nn/data/idx.h — reading IDX files, the format of MNIST and its family (Fashion-MNIST, ...).
//
// An IDX file is a header and a dense array, row-major, big-endian:
//
//   byte 0, 1   0x00 0x00            (the magic number's first two bytes)
//   byte 2      element type         0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
//                                    0x0D float32, 0x0E float64
//   byte 3      number of dims, n
//   n x 4 bytes each dim, big-endian unsigned 32-bit
//   the elements, prod(dims) of them, each big-endian
//
// Files are read through zlib, which decompresses .gz files and passes plain files
// through unchanged, so both work. Invariant: a file is accepted only if it holds exactly
// what its header promises; a short file, extra bytes, a bad magic number or an unknown
// type code is a glass::Error naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace glass::data {

enum class IdxType : uint8_t {
  UInt8 = 0x08,
  Int8 = 0x09,
  Int16 = 0x0B,
  Int32 = 0x0C,
  Float32 = 0x0D,
  Float64 = 0x0E,
};

// Bytes per element of `type`.
size_t idx_element_size(IdxType type);
// "uint8 (0x08)", for messages.
std::string to_string(IdxType type);

// A file's header and payload, not yet converted: `bytes` holds prod(dims) elements as
// stored (big-endian). What a loader uses to convert straight to the dtype it wants.
struct IdxArray {
  IdxType type;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

IdxArray read_idx_raw(const std::string& path);

// The file as a tensor of sizes `dims`. glasstorch has no 8- or 16-bit integer dtypes, so
// uint8 and int8 become Int64 (labels are used as class indices, which are Long), int16
// and int32 become Int32, float32 Float32 and float64 Float64. Images usually want
// float: read_idx_raw and convert the bytes directly (fashion_mnist.cpp does).
Tensor read_idx(const std::string& path);

}  // namespace glass::data
