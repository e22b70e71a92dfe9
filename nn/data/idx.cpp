// nn/data/idx.cpp — the IDX reader: header checks, a size-checked payload read, conversion.
//
// The payload is read in chunks that grow as data actually arrives, never by trusting the
// header's size up front, so a corrupt header that promises terabytes fails as "truncated"
// after reading what is there instead of allocating what it claims.
#include "nn/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

#include "core/error.h"
#include "core/ops/factories.h"

namespace glass::data {

namespace {

constexpr size_t kMaxPayloadBytes = size_t{1} << 40;  // far above any real dataset

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

// Reads up to n bytes; returns how many arrived (fewer only at the end of the data).
size_t read_up_to(gzFile f, const std::string& path, uint8_t* dst, size_t n) {
  size_t got = 0;
  while (got < n) {
    const auto chunk = static_cast<unsigned>(std::min<size_t>(n - got, 1u << 30));
    int r = gzread(f, dst + got, chunk);
    if (r < 0) {
      int code = 0;
      const char* message = gzerror(f, &code);
      GLASS_CHECK(false, "read_idx(): '", path,
                  "' is not a readable gzip or IDX file (zlib: ", message,
                  "); the file is probably damaged: fetch or install it again");
    }
    // 0 is the end of the data; zlib also ends a gzip stream that was cut short this way
    // (Z_BUF_ERROR), so a short .gz is reported as truncated, like a short plain file.
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

uint32_t big_endian_u32(const uint8_t* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

bool known_type(uint8_t code) {
  return code == 0x08 || code == 0x09 || code == 0x0B || code == 0x0C || code == 0x0D ||
         code == 0x0E;
}

std::string hex_bytes(const uint8_t* b, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s = "0x";
  for (size_t i = 0; i < n; ++i) {
    s += digits[b[i] >> 4];
    s += digits[b[i] & 15];
  }
  return s;
}

// Converts n big-endian elements of type In to Out.
template <class In, class Out>
void convert(const uint8_t* src, Out* dst, size_t n) {
  for (size_t i = 0; i < n; ++i, src += sizeof(In)) {
    if constexpr (sizeof(In) == 1) {
      dst[i] = static_cast<Out>(std::bit_cast<In>(src[0]));
    } else {
      using Bits = std::conditional_t<sizeof(In) == 2, uint16_t,
                                      std::conditional_t<sizeof(In) == 4, uint32_t, uint64_t>>;
      Bits bits = 0;
      for (size_t k = 0; k < sizeof(In); ++k) bits = static_cast<Bits>((bits << 8) | src[k]);
      dst[i] = static_cast<Out>(std::bit_cast<In>(bits));
    }
  }
}

}  // namespace

size_t idx_element_size(IdxType type) {
  switch (type) {
    case IdxType::UInt8:
    case IdxType::Int8: return 1;
    case IdxType::Int16: return 2;
    case IdxType::Int32:
    case IdxType::Float32: return 4;
    case IdxType::Float64: return 8;
  }
  return 0;
}

std::string to_string(IdxType type) {
  const auto code = static_cast<uint8_t>(type);
  const char* name = "unknown";
  switch (type) {
    case IdxType::UInt8: name = "uint8"; break;
    case IdxType::Int8: name = "int8"; break;
    case IdxType::Int16: name = "int16"; break;
    case IdxType::Int32: name = "int32"; break;
    case IdxType::Float32: name = "float32"; break;
    case IdxType::Float64: name = "float64"; break;
  }
  return std::string(name) + " (" + hex_bytes(&code, 1) + ")";
}

IdxArray read_idx_raw(const std::string& path) {
  GLASS_CHECK(std::filesystem::exists(path), "read_idx(): '", path,
              "' does not exist; check the path (IDX files are often named like "
              "train-images-idx3-ubyte.gz)");
  GzFile file(gzopen(path.c_str(), "rb"));
  GLASS_CHECK(file != nullptr, "read_idx(): cannot open '", path, "': ", std::strerror(errno));
  gzbuffer(file.get(), 1 << 18);  // fewer, larger reads of the compressed file

  uint8_t magic[4];
  size_t got = read_up_to(file.get(), path, magic, 4);
  GLASS_CHECK(got == 4, "read_idx(): '", path, "' is truncated: it ends after ", got,
              " bytes, inside the 4-byte magic number");
  GLASS_CHECK(magic[0] == 0 && magic[1] == 0, "read_idx(): '", path, "' has a bad magic number ",
              hex_bytes(magic, 4),
              ": an IDX file starts with two zero bytes, then a type code and the number of "
              "dims (is it an IDX file? a .gz that was compressed twice?)");
  GLASS_CHECK(known_type(magic[2]), "read_idx(): '", path, "' has the unsupported type code ",
              hex_bytes(magic + 2, 1),
              "; IDX defines 0x08 uint8, 0x09 int8, 0x0b int16, 0x0c int32, 0x0d float32, "
              "0x0e float64");
  const int ndim = magic[3];
  GLASS_CHECK(ndim >= 1, "read_idx(): '", path,
              "' declares 0 dimensions; an IDX array has at least one");

  IdxArray out;
  out.type = static_cast<IdxType>(magic[2]);
  std::vector<uint8_t> header(4 * static_cast<size_t>(ndim));
  got = read_up_to(file.get(), path, header.data(), header.size());
  GLASS_CHECK(got == header.size(), "read_idx(): '", path, "' is truncated: its header declares ",
              ndim, " dims (", header.size(), " bytes) but only ", got, " bytes follow");
  size_t numel = 1;
  for (int d = 0; d < ndim; ++d) {
    const uint32_t size = big_endian_u32(header.data() + 4 * d);
    out.dims.push_back(size);
    // Saturate just above the limit instead of wrapping around on absurd dims.
    if (size == 0 || numel == 0) {
      numel = 0;
    } else {
      numel = numel > (kMaxPayloadBytes + 1) / size ? kMaxPayloadBytes + 1 : numel * size;
    }
  }
  const size_t elem = idx_element_size(out.type);
  GLASS_CHECK(numel <= kMaxPayloadBytes / elem, "read_idx(): '", path, "' declares dims ",
              IntArrayRef(out.dims), ", over 1 TiB of data; the header is probably corrupt");
  const size_t expected = numel * elem;

  // Grow toward `expected` as bytes arrive: at most double what has already been read.
  size_t have = 0;
  while (have < expected) {
    const size_t want = std::min(expected - have, std::max<size_t>(have, 1 << 20));
    out.bytes.resize(have + want);
    const size_t n = read_up_to(file.get(), path, out.bytes.data() + have, want);
    have += n;
    if (n < want) break;
  }
  GLASS_CHECK(have == expected, "read_idx(): '", path, "' is truncated: its header declares dims ",
              IntArrayRef(out.dims), " of ", elem, "-byte elements (", expected,
              " bytes) but only ", have, " bytes follow; the file is incomplete, fetch it again");

  size_t extra = 0;
  uint8_t scratch[4096];
  while (size_t n = read_up_to(file.get(), path, scratch, sizeof(scratch))) extra += n;
  GLASS_CHECK(extra == 0, "read_idx(): '", path, "' has ", extra,
              " bytes after the data its header declares (dims ", IntArrayRef(out.dims),
              "); the header and the data disagree, so the file is corrupt");
  return out;
}

Tensor read_idx(const std::string& path) {
  IdxArray a = read_idx_raw(path);
  const size_t n = a.bytes.size() / idx_element_size(a.type);
  const uint8_t* src = a.bytes.data();
  switch (a.type) {
    case IdxType::UInt8: {
      Tensor t = empty(a.dims, TensorOptions(kInt64));
      convert<uint8_t>(src, t.data_ptr<int64_t>(), n);
      return t;
    }
    case IdxType::Int8: {
      Tensor t = empty(a.dims, TensorOptions(kInt64));
      convert<int8_t>(src, t.data_ptr<int64_t>(), n);
      return t;
    }
    case IdxType::Int16: {
      Tensor t = empty(a.dims, TensorOptions(kInt32));
      convert<int16_t>(src, t.data_ptr<int32_t>(), n);
      return t;
    }
    case IdxType::Int32: {
      Tensor t = empty(a.dims, TensorOptions(kInt32));
      convert<int32_t>(src, t.data_ptr<int32_t>(), n);
      return t;
    }
    case IdxType::Float32: {
      Tensor t = empty(a.dims, TensorOptions(kFloat32));
      convert<float>(src, t.data_ptr<float>(), n);
      return t;
    }
    case IdxType::Float64: {
      Tensor t = empty(a.dims, TensorOptions(kFloat64));
      convert<double>(src, t.data_ptr<double>(), n);
      return t;
    }
  }
  GLASS_INTERNAL_ASSERT(false, "read_idx(): unhandled IdxType");
  return Tensor();
}

}  // namespace glass::data
