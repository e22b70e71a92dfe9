// nn/serialize/safetensors.cpp — glass::save / glass::load for named tensors.
//
// Saving lays out the header, then streams each tensor's bytes through an
// AtomicFileWriter; loading opens the file, bounds the header length by the file size
// before reading it, lets decode_header() validate every claim, and only then allocates
// and reads. The bytes in the file are little-endian; so are glasstorch's in memory on
// every platform it builds for (checked below), so tensors go to and from disk with no
// conversion.
#include "nn/serialize/safetensors.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <set>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"

namespace glass {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian port must byte-swap in "
              "save() and SafetensorsReader::read()");

namespace {

std::string context_of(const char* caller, const std::string& path) {
  return detail::str_cat(caller, "(", path, ")");
}

// Everything that can be wrong with the input is checked before the temporary file
// exists, so a rejected save leaves no trace.
void check_savable(const nn::NamedTensors& tensors, const std::string& context) {
  std::set<std::string> names;
  for (const auto& [name, tensor] : tensors) {
    GLASS_CHECK(tensor.defined(), context, ": tensor '", name, "' is undefined");
    GLASS_CHECK(name != "__metadata__", context,
                ": '__metadata__' is reserved for the metadata map; rename the tensor");
    GLASS_CHECK(names.insert(name).second, context, ": the name '", name,
                "' is used by two tensors; every tensor needs its own name");
  }
}

}  // namespace

void save(const nn::NamedTensors& tensors, const std::string& path,
          const std::map<std::string, std::string>& metadata) {
  const std::string context = context_of("save", path);
  check_savable(tensors, context);

  // The reference writer's order: larger elements first, then by name. The data section
  // starts 8-byte aligned, and each group's byte count is a multiple of the next group's
  // element size, so every tensor lands naturally aligned for readers that mmap the file.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int64_t size_a = tensors[a].second.element_size();
    const int64_t size_b = tensors[b].second.element_size();
    return size_a != size_b ? size_a > size_b : tensors[a].first < tensors[b].first;
  });

  safetensors::Header header;
  header.metadata = metadata;
  uint64_t offset = 0;
  for (size_t i : order) {
    const auto& [name, tensor] = tensors[i];
    const uint64_t nbytes = static_cast<uint64_t>(tensor.nbytes());
    header.tensors.push_back({name, tensor.dtype(), tensor.sizes().vec(), offset, offset + nbytes});
    offset += nbytes;
  }
  const std::string json = safetensors::encode_header(header, context);

  serialize::AtomicFileWriter out(path, context);
  const uint64_t header_length = json.size();  // little-endian in memory, as on disk
  out.write(&header_length, sizeof header_length);
  out.write(json.data(), json.size());
  NoGradGuard no_grad;  // contiguous() of a parameter must not record a graph
  for (size_t i : order) {
    // A view's logical contents, row-major: contiguous() copies only when the strides
    // (transposed, sliced, expanded, offset) demand it; cpu() only for a device tensor.
    const Tensor data = tensors[i].second.contiguous().cpu();
    if (data.nbytes() > 0) out.write(data.data_ptr(), static_cast<size_t>(data.nbytes()));
  }
  out.commit();
}

// ---- SafetensorsReader --------------------------------------------------------------------

SafetensorsReader::SafetensorsReader(const std::string& path, const std::string& caller)
    : path_(path), context_(context_of(caller.c_str(), path)), file_(path, context_) {
  using safetensors::kLengthFieldBytes;
  using safetensors::kMaxHeaderBytes;
  const uint64_t size = file_.size();
  GLASS_CHECK(size >= kLengthFieldBytes, context_, ": the file has ", size,
              " bytes, fewer than the 8-byte header length every safetensors file starts with; "
              "it is truncated or not a safetensors file");
  uint64_t header_length = 0;
  file_.read_exact(0, &header_length, kLengthFieldBytes, "the header length");
  // Both bounds are checked before anything is allocated for the header.
  GLASS_CHECK(header_length <= kMaxHeaderBytes, context_, ": the header length field says ",
              header_length, " bytes, more than the format's limit of ", kMaxHeaderBytes,
              "; the file is corrupt or not a safetensors file");
  GLASS_CHECK(header_length <= size - kLengthFieldBytes, context_,
              ": the header length field says ", header_length, " bytes, but only ",
              size - kLengthFieldBytes,
              " follow it; the file is truncated (re-save or re-download it) or not a "
              "safetensors file");
  std::string json(header_length, '\0');
  file_.read_exact(kLengthFieldBytes, json.data(), header_length, "the header");
  data_start_ = kLengthFieldBytes + header_length;
  header_ = safetensors::decode_header(json, size - data_start_, context_);
  for (size_t i = 0; i < header_.tensors.size(); ++i) index_.emplace(header_.tensors[i].name, i);
}

const safetensors::TensorEntry* SafetensorsReader::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

Tensor SafetensorsReader::read(const std::string& name) const {
  const safetensors::TensorEntry* entry = find(name);
  GLASS_CHECK(entry != nullptr, context_, ": the file has no tensor named '", name, "'");
  return read(*entry);
}

Tensor SafetensorsReader::read(const safetensors::TensorEntry& entry) const {
  // decode_header() proved nbytes() == numel * element size <= the file's size, so this
  // allocation is no larger than the file.
  Tensor tensor = empty(entry.shape, TensorOptions(entry.dtype));
  if (entry.nbytes() == 0) return tensor;
  const std::string what = detail::str_cat("tensor '", entry.name, "'");
  file_.read_exact(data_start_ + entry.begin, tensor.data_ptr(), entry.nbytes(), what);
  if (entry.dtype == kBool) {
    // A C++ bool holding 2 is undefined behaviour, so the bytes are checked as bytes
    // before anyone reads them as bools.
    const auto* bytes = static_cast<const unsigned char*>(tensor.data_ptr());
    const auto* bad =
        std::find_if(bytes, bytes + entry.nbytes(), [](unsigned char b) { return b > 1; });
    GLASS_CHECK(bad == bytes + entry.nbytes(), context_, ": ", what, " (BOOL) holds the byte ",
                static_cast<int>(*bad), " at file offset ",
                data_start_ + entry.begin + static_cast<uint64_t>(bad - bytes),
                "; BOOL elements must be 0 or 1. The file is corrupt");
  }
  return tensor;
}

nn::NamedTensors SafetensorsReader::read_all() const {
  nn::NamedTensors out;
  out.reserve(entries().size());
  for (const auto& entry : entries()) out.emplace_back(entry.name, read(entry));
  return out;
}

// ---- free functions -------------------------------------------------------------------------

nn::NamedTensors load(const std::string& path) {
  return SafetensorsReader(path, "load").read_all();
}

SafetensorsFile read_safetensors(const std::string& path) {
  const SafetensorsReader reader(path, "read_safetensors");
  return {reader.read_all(), reader.metadata()};
}

}  // namespace glass
