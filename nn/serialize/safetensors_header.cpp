// nn/serialize/safetensors_header.cpp — header JSON <-> Header, with nlohmann-json.
//
// decode_header() is the trust boundary of a checkpoint: everything a reader will act on
// (how much to allocate, where to read) comes from here, so every claim in the JSON is
// checked against the others and against the size of the data section before it is
// returned. The checks follow the reference implementation's validation, plus two it
// leaves to serde: repeated keys and absurd nesting are refused while parsing.
#include "nn/serialize/safetensors_header.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/array_ref.h"
#include "core/error.h"

namespace glass::safetensors {

// ordered_json keeps keys in the order they were written, so the header lists tensors in
// data order (as the reference writes them) and "__metadata__" comes first.
using Json = nlohmann::ordered_json;

namespace {

constexpr std::array<std::pair<ScalarType, const char*>, 5> kDtypeNames = {{
    {ScalarType::Bool, "BOOL"},
    {ScalarType::Int32, "I32"},
    {ScalarType::Int64, "I64"},
    {ScalarType::Float32, "F32"},
    {ScalarType::Float64, "F64"},
}};

constexpr const char* kMetadataKey = "__metadata__";

// The deepest value a header holds is an element of "shape" or "data_offsets":
// root object (0) -> tensor entry (1) -> shape array (2) -> number (3).
constexpr int kMaxDepth = 3;

}  // namespace

const char* dtype_name(ScalarType dtype) {
  for (const auto& [type, name] : kDtypeNames) {
    if (type == dtype) return name;
  }
  detail::throw_error(detail::str_cat("safetensors: no dtype name for ", dtype));
}

ScalarType dtype_from_name(std::string_view name) {
  for (const auto& [type, type_name] : kDtypeNames) {
    if (name == type_name) return type;
  }
  return ScalarType::Undefined;
}

// ---- encode -------------------------------------------------------------------------------

std::string encode_header(const Header& header, const std::string& context) {
  Json root = Json::object();
  if (!header.metadata.empty()) {
    Json& metadata = root[kMetadataKey] = Json::object();
    for (const auto& [key, value] : header.metadata) metadata[key] = value;
  }
  uint64_t next = 0;
  for (const TensorEntry& t : header.tensors) {
    GLASS_CHECK(t.name != kMetadataKey && !root.contains(t.name), context, ": tensor name '",
                t.name, "' is ", t.name == kMetadataKey ? "reserved" : "used twice",
                "; every tensor needs its own name");
    GLASS_INTERNAL_ASSERT(t.begin == next && t.end >= t.begin, "tensor '", t.name,
                          "' does not follow the previous one in the data section");
    next = t.end;
    Json entry = Json::object();
    entry["dtype"] = safetensors::dtype_name(t.dtype);
    entry["shape"] = t.shape;
    entry["data_offsets"] = Json::array({t.begin, t.end});
    root[t.name] = std::move(entry);
  }
  std::string text;
  try {
    text = root.dump();  // compact, as the reference writes it
  } catch (const Json::type_error& e) {
    detail::throw_error(detail::str_cat(
        context, ": tensor names and metadata must be valid UTF-8 (", e.what(), ")"));
  }
  // Spaces are JSON whitespace, so the padding is invisible to every parser; it makes
  // 8 + N a multiple of 8, so 8-byte elements in the data section can be used in place.
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

// ---- decode: parsing ----------------------------------------------------------------------

namespace {

// nlohmann accepts any JSON; a header is a small, flat subset of it. This callback refuses
// the rest while parsing, before a hostile header can build a deep tree: nesting deeper
// than kMaxDepth, and a key repeated within one object, which parsers resolve differently
// (first wins, last wins, error), so two tools could read two different checkpoints.
class HeaderShapeCheck {
 public:
  explicit HeaderShapeCheck(const std::string& context) : context_(context) {}

  bool operator()(int depth, Json::parse_event_t event, Json& parsed) {
    GLASS_CHECK(depth <= kMaxDepth, context_,
                ": the JSON header nests deeper than a safetensors header can (a tensor entry "
                "holds only a dtype string and arrays of integers); the file is corrupt");
    if (event == Json::parse_event_t::object_start) {
      keys_[static_cast<size_t>(depth) + 1].clear();  // a new object's keys start afresh
    } else if (event == Json::parse_event_t::key) {
      const std::string& key = parsed.get_ref<const std::string&>();
      GLASS_CHECK(keys_[static_cast<size_t>(depth)].insert(key).second, context_,
                  ": the JSON header repeats the key \"", key,
                  "\" within one object; the file is corrupt or was not written by a "
                  "safetensors writer");
    }
    return true;
  }

 private:
  const std::string& context_;
  std::array<std::set<std::string>, kMaxDepth + 2> keys_;
};

Json parse_header(std::string_view text, const std::string& context) {
  HeaderShapeCheck check(context);
  try {
    return Json::parse(text.begin(), text.end(), std::ref(check));
  } catch (const Json::parse_error& e) {
    // e.byte counts from 1 within the header; the header starts at file offset 8.
    detail::throw_error(detail::str_cat(context, ": the header (file bytes [8, ", 8 + text.size(),
                                        ")) is not valid JSON; the error is at file offset ",
                                        kLengthFieldBytes + std::max<size_t>(e.byte, 1) - 1,
                                        ". The file is corrupt or not a safetensors file (",
                                        e.what(), ")"));
  } catch (const Json::exception& e) {  // e.g. a number too large to represent
    detail::throw_error(detail::str_cat(context, ": the header is not a valid safetensors header (",
                                        e.what(), ")"));
  }
}

// A JSON number usable as a size or offset: whole and non-negative (2.0, -1 and 1e3 are
// not). nlohmann stores non-negative integers as unsigned, "-0" as signed zero.
std::optional<uint64_t> as_size(const Json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() == 0) return 0;
  return std::nullopt;
}

// ---- decode: one entry --------------------------------------------------------------------

Metadata decode_metadata(const Json& value, const std::string& context) {
  GLASS_CHECK(value.is_object(), context, ": \"", kMetadataKey,
              "\" must be an object mapping strings to strings, got a ", value.type_name());
  Metadata metadata;
  for (const auto& [key, text] : value.items()) {
    GLASS_CHECK(text.is_string(), context, ": \"", kMetadataKey, "\" entry \"", key, "\" is a ",
                text.type_name(), "; safetensors metadata values must be strings");
    metadata.emplace(key, text.get<std::string>());
  }
  return metadata;
}

TensorEntry decode_entry(const std::string& name, const Json& value, const std::string& context) {
  const std::string where = detail::str_cat(context, ": tensor '", name, "'");
  GLASS_CHECK(value.is_object(), where,
              " must be an object {\"dtype\", \"shape\", \"data_offsets\"}, got a ",
              value.type_name());
  for (const auto& [key, unused] : value.items()) {
    GLASS_CHECK(key == "dtype" || key == "shape" || key == "data_offsets", where,
                " has an unexpected key \"", key,
                "\"; an entry holds exactly dtype, shape and data_offsets");
  }
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    GLASS_CHECK(value.contains(key), where, " lacks \"", key, "\"");
  }

  TensorEntry entry;
  entry.name = name;

  const Json& dtype = value["dtype"];
  GLASS_CHECK(dtype.is_string(), where, ": \"dtype\" must be a string, got a ", dtype.type_name());
  entry.dtype = dtype_from_name(dtype.get_ref<const std::string&>());
  GLASS_CHECK(entry.dtype != ScalarType::Undefined, where, " has dtype \"",
              dtype.get_ref<const std::string&>(),
              "\"; glasstorch reads BOOL, I32, I64, F32 and F64 (convert the tensor to one of "
              "those before saving it)");

  // numel, and the product of max(size, 1) (what the strides reach), must fit in int64.
  const Json& shape = value["shape"];
  GLASS_CHECK(shape.is_array(), where, ": \"shape\" must be an array, got a ", shape.type_name());
  int64_t numel = 1, extent = 1;
  for (const Json& dim : shape) {
    const std::optional<uint64_t> size = as_size(dim);
    GLASS_CHECK(size.has_value(), where, ": \"shape\" holds ", dim.dump(),
                "; sizes must be non-negative integers");
    GLASS_CHECK(*size <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) &&
                    !__builtin_mul_overflow(extent, std::max<int64_t>(*size, 1), &extent),
                where, ": shape ", shape.dump(), " has more elements than int64 can count");
    entry.shape.push_back(static_cast<int64_t>(*size));
    numel *= static_cast<int64_t>(*size);  // |numel| <= extent: cannot overflow
  }

  const Json& offsets = value["data_offsets"];
  GLASS_CHECK(offsets.is_array() && offsets.size() == 2, where,
              ": \"data_offsets\" must be [begin, end], got ", offsets.dump());
  const std::optional<uint64_t> begin = as_size(offsets[0]), end = as_size(offsets[1]);
  GLASS_CHECK(begin && end && *begin <= *end, where, ": data_offsets ", offsets.dump(),
              " must be two non-negative integers with begin <= end");
  entry.begin = *begin;
  entry.end = *end;

  const uint64_t element_bytes = element_size(entry.dtype);
  uint64_t needed = 0;
  const bool fits = !__builtin_mul_overflow(static_cast<uint64_t>(numel), element_bytes, &needed);
  GLASS_CHECK(fits && needed == entry.nbytes(), where, ": data_offsets ", offsets.dump(), " span ",
              entry.nbytes(), " bytes, but shape ", IntArrayRef(entry.shape), " of ",
              dtype.get_ref<const std::string&>(), " needs ", numel, " x ", element_bytes, " = ",
              fits ? std::to_string(needed) : std::string("more than 2^64"), " bytes");
  return entry;
}

// ---- decode: the data section as a whole --------------------------------------------------

// Sorted by (begin, end), the tensors must tile [0, data_bytes): each begins where the
// previous one ended, the last ends at data_bytes. (Zero-byte tensors sit between others
// with begin == end.) Any other layout means bytes are read twice, or belong to nothing —
// a header that does not describe its file.
void check_tiling(std::vector<TensorEntry>& tensors, uint64_t data_bytes,
                  const std::string& context) {
  std::stable_sort(tensors.begin(), tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  uint64_t next = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry& t : tensors) {
    GLASS_CHECK(t.end <= data_bytes, context, ": tensor '", t.name, "' occupies data bytes [",
                t.begin, ", ", t.end, "), but the data section after the header has only ",
                data_bytes, " bytes; the file is truncated (re-save or re-download it)");
    GLASS_CHECK(t.begin >= next, context, ": tensor '", t.name, "' at data bytes [", t.begin, ", ",
                t.end, ") overlaps tensor '", previous ? previous->name : "", "' at [",
                previous ? previous->begin : 0, ", ", next,
                "); every byte must belong to exactly one tensor");
    GLASS_CHECK(t.begin == next, context, ": no tensor covers data bytes [", next, ", ", t.begin,
                ") before tensor '", t.name,
                "'; the data_offsets must follow each other without gaps");
    next = t.end;
    previous = &t;
  }
  GLASS_CHECK(next == data_bytes, context, ": the data section has ", data_bytes,
              " bytes but the tensors cover only the first ", next, "; data bytes [", next, ", ",
              data_bytes,
              ") belong to no tensor (the file was appended to, or its header is damaged)");
}

}  // namespace

Header decode_header(std::string_view json, uint64_t data_bytes, const std::string& context) {
  const Json root = parse_header(json, context);
  GLASS_CHECK(root.is_object(), context,
              ": the JSON header must be an object mapping tensor names to entries, got a ",
              root.type_name());
  Header header;
  for (const auto& [key, value] : root.items()) {
    if (key == kMetadataKey) {
      header.metadata = decode_metadata(value, context);
    } else {
      header.tensors.push_back(decode_entry(key, value, context));
    }
  }
  check_tiling(header.tensors, data_bytes, context);
  return header;
}

}  // namespace glass::safetensors
