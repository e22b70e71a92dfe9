// nn/serialize/safetensors.h — save and load named tensors as safetensors files.
//
//   glass::save({{"w", w}, {"step", step}}, "ckpt.safetensors", {{"format", "pt"}});
//   glass::nn::NamedTensors tensors = glass::load("ckpt.safetensors");
//   glass::SafetensorsFile file = glass::read_safetensors("ckpt.safetensors");  // + metadata
//
// The files are the ones PyTorch's and Hugging Face's tooling read and write
// (safetensors.torch.load_file opens them; see safetensors_header.h for the layout), for
// the dtypes glasstorch has: BOOL, I32, I64, F32, F64.
//
// Invariants. A save is atomic (file_io.h): the file at `path` is the previous one or the
// complete new one, never a mix, whatever fails or crashes. A load trusts nothing in the
// file until safetensors_header.h's decode_header() has checked it against the file's
// size, so a truncated, corrupted or hostile file is a glass::Error naming the file and
// what is wrong, never a crash or an allocation the file's size does not justify. Loaded
// tensors own fresh CPU storage (no view into a buffer that dies with the reader).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nn/module.h"
#include "nn/serialize/file_io.h"
#include "nn/serialize/safetensors_header.h"

namespace glass {

struct SafetensorsFile {
  nn::NamedTensors tensors;  // in file order (by data offset)
  std::map<std::string, std::string> metadata;
};

// Writes `tensors` (defined tensors with distinct names, on any device — a device tensor
// is copied to the host first, which waits for it; any layout — views are written as
// their logical contents) and the optional string metadata to `path`, atomically. Data
// order follows the reference writer: 8-byte dtypes first, then 4-byte, then BOOL, each
// group by name, so every element is naturally aligned in the file.
void save(const nn::NamedTensors& tensors, const std::string& path,
          const std::map<std::string, std::string>& metadata = {});

// Every tensor in the file, in file order.
nn::NamedTensors load(const std::string& path);
// The tensors and the "__metadata__" map.
SafetensorsFile read_safetensors(const std::string& path);

// An open, validated safetensors file whose tensors are read on demand (like
// safetensors.safe_open): the header is checked in the constructor, data is read by
// read(). The file stays open for the reader's lifetime.
class SafetensorsReader {
 public:
  // `caller` starts every message: "<caller>(<path>): ...".
  explicit SafetensorsReader(const std::string& path, const std::string& caller = "load");

  const std::string& path() const { return path_; }
  const std::string& context() const { return context_; }
  // Names, dtypes, shapes and offsets, in file order.
  const std::vector<safetensors::TensorEntry>& entries() const { return header_.tensors; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  // The named tensor's entry, or nullptr when the file has none.
  const safetensors::TensorEntry* find(const std::string& name) const;

  // A freshly allocated contiguous CPU tensor with the named tensor's contents.
  Tensor read(const std::string& name) const;
  nn::NamedTensors read_all() const;

 private:
  Tensor read(const safetensors::TensorEntry& entry) const;

  std::string path_;
  std::string context_;
  serialize::ReadOnlyFile file_;
  uint64_t data_start_ = 0;  // file offset of the data section: 8 + header length
  safetensors::Header header_;
  std::map<std::string, size_t> index_;  // name -> position in header_.tensors
};

}  // namespace glass
