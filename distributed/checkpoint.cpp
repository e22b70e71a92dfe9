// distributed/checkpoint.cpp — what each rank writes, the index, the commit votes, and
// reading any rows back from whichever files hold them.
//
// [SECTION] what a checkpoint holds  [SECTION] save  [SECTION] load  [SECTION] full state
#include "distributed/checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "distributed/distributed.h"
#include "distributed/fsdp.h"
#include "nn/serialize/file_io.h"
#include "nn/serialize/safetensors.h"

namespace glass::distributed {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kFormat = "glasstorch-sharded-checkpoint";
constexpr int kVersion = 1;
constexpr const char* kIndex = "index.json";

// [SECTION] what a checkpoint holds --------------------------------------------------------

// One tensor of the checkpoint as this rank sees it.
struct Item {
  std::string name;
  Tensor local;           // this rank's rows, or the whole tensor
  DimVector full_shape;   // the whole tensor's
  bool sharded = false;   // FSDP rows (else the same on every rank: rank 0 saves it)
  int64_t row_begin = 0;  // sharded: this rank's first row
  int64_t rows_per_rank = 0;
};

Item whole_item(const std::string& name, const Tensor& t) {
  return Item{name, t.detach(), DimVector(t.sizes()), false, 0, 0};
}

Item item_like(const std::string& name, const Tensor& t, const std::optional<RowShard>& cut) {
  if (!cut || t.dim() == 0 || t.size(0) != cut->rows) return whole_item(name, t);
  DimVector full = DimVector(t.sizes());
  full[0] = cut->full_sizes[0];
  return Item{name, t.detach(), full, true, cut->row_begin, cut->rows_per_rank};
}

// The dtype a name in an index stands for ("int64" → kInt64).
ScalarType scalar_type_from_name(const std::string& name, const std::string& context) {
  for (ScalarType t : {kFloat32, kFloat64, kInt32, kInt64, kBool})
    if (name == dtype_name(t)) return t;
  GLASS_CHECK(false, context, ": the index names an unknown dtype '", name, "'");
  return kFloat32;
}

std::string optimizer_key(const std::string& param, const std::string& slot) {
  return "optimizer/" + param + "/" + slot;
}

std::vector<Item> items_of(const nn::Module& model, const optim::Optimizer* optimizer) {
  std::vector<Item> items;
  for (const auto& [name, t] : model.state_dict())
    items.push_back(item_like(name, t, fsdp_row_shard(t)));
  if (optimizer == nullptr) return items;
  for (const auto& [name, p] : model.named_parameters()) {
    auto it = optimizer->state().find(p.unsafeGetTensorImpl());
    if (it == optimizer->state().end()) continue;  // not stepped yet: nothing to save
    const std::optional<RowShard> cut = fsdp_row_shard(p);
    for (const auto& [slot, value] : it->second->state_tensors())
      items.push_back(item_like(optimizer_key(name, slot), value, cut));
  }
  return items;
}

std::string file_name(int64_t save, int rank, int world) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "save%06lld-rank%05d-of-%05d.safetensors",
                static_cast<long long>(save), rank, world);
  return buf;
}

Json read_index(const std::string& dir, const std::string& context) {
  const fs::path path = fs::path(dir) / kIndex;
  std::ifstream in(path);
  GLASS_CHECK(in.good(), context, ": no checkpoint in ", dir, ": ", kIndex,
              " is missing (a save that did not finish leaves none)");
  Json index;
  try {
    index = Json::parse(in);
  } catch (const std::exception& e) {
    GLASS_CHECK(false, context, ": ", path.string(), " is not valid JSON (", e.what(), ")");
  }
  GLASS_CHECK(index.is_object() && index.value("format", "") == kFormat &&
                  index.value("version", 0) == kVersion && index.contains("tensors"),
              context, ": ", path.string(), " is not a ", kFormat, " index of version ", kVersion);
  return index;
}

// Every rank says whether its part worked; all learn whether every part did.
bool all_succeeded(bool mine, ProcessGroup& group) {
  Tensor vote = full({1}, mine ? 1 : 0, TensorOptions(kInt32));
  AllreduceOptions min;
  min.reduceOp = ReduceOp::MIN;
  group.allreduce(vote, min)->wait();
  return vote.data_ptr<int32_t>()[0] == 1;
}

// [SECTION] save ------------------------------------------------------------------------------

Json index_of(const std::vector<Item>& items, int64_t save, int world) {
  Json tensors = Json::object();
  for (const Item& item : items) {
    Json shards = Json::array();
    if (!item.sharded) {
      Json shard = {{"file", file_name(save, 0, world)}};
      if (!item.full_shape.empty()) shard["rows"] = {0, item.full_shape[0]};
      shards.push_back(shard);
    } else {
      for (int q = 0; q < world; ++q) {
        const int64_t begin = q * item.rows_per_rank;
        const int64_t end = std::min(item.full_shape[0], begin + item.rows_per_rank);
        if (end > begin)
          shards.push_back({{"file", file_name(save, q, world)}, {"rows", {begin, end}}});
      }
    }
    tensors[item.name] = {
        {"dtype", dtype_name(item.local.dtype())},
        {"shape", std::vector<int64_t>(item.full_shape.begin(), item.full_shape.end())},
        {"shards", shards}};
  }
  return {{"format", kFormat},
          {"version", kVersion},
          {"save", save},
          {"world_size", world},
          {"tensors", tensors}};
}

}  // namespace

void save_sharded_checkpoint(const std::string& dir, const nn::Module& model,
                             const optim::Optimizer* optimizer,
                             std::shared_ptr<ProcessGroup> group) {
  if (!group) group = default_group();
  const int world = group->size(), rank = group->rank();
  const std::string context = "save_sharded_checkpoint(" + dir + ")";

  // This save's number: one past the committed checkpoint's, agreed from rank 0.
  // (-1: rank 0 could not read the index there; every rank stops, none waits.)
  Tensor number = zeros({1}, TensorOptions(kInt64));
  std::string error;
  if (rank == 0) {
    try {
      int64_t previous = 0;
      if (fs::exists(fs::path(dir) / kIndex)) previous = read_index(dir, context).value("save", 0);
      number.data_ptr<int64_t>()[0] = previous + 1;
    } catch (const std::exception& e) {
      error = e.what();
      number.data_ptr<int64_t>()[0] = -1;
    }
  }
  group->broadcast(number, BroadcastOptions{})->wait();
  const int64_t save = number.data_ptr<int64_t>()[0];
  GLASS_CHECK(save > 0,
              error.empty() ? context + ": rank 0 could not read the checkpoint there" : error);

  const std::vector<Item> items = items_of(model, optimizer);
  try {
    fs::create_directories(dir);
    nn::NamedTensors mine;
    for (const Item& item : items)
      if ((item.sharded && item.local.numel() > 0) || (!item.sharded && rank == 0))
        mine.emplace_back(item.name, item.local);
    glass::save(mine, (fs::path(dir) / file_name(save, rank, world)).string(),
                {{"format", kFormat}, {"save", std::to_string(save)}});
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!all_succeeded(error.empty(), *group)) {
    detail::throw_error(context + ": " +
                        (error.empty() ? std::string("another rank could not write its file")
                                       : "rank " + std::to_string(rank) +
                                             " could not write its file (" + error + ")") +
                        "; nothing was committed, the previous checkpoint is intact");
  }

  // Commit: the index, written last, atomically.
  if (rank == 0) {
    try {
      const std::string text = index_of(items, save, world).dump(1);
      serialize::AtomicFileWriter writer((fs::path(dir) / kIndex).string(), context);
      writer.write(text.data(), text.size());
      writer.commit();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (!all_succeeded(error.empty(), *group)) {
    detail::throw_error(context + ": rank 0 could not write " + kIndex +
                        (error.empty() ? "" : " (" + error + ")") +
                        "; the previous checkpoint is intact");
  }
  // Files of earlier saves: nothing names them any more. Only earlier ones: another rank
  // may already be writing the next save's file.
  if (rank == 0) {
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(dir, ignored)) {
      const std::string name = entry.path().filename().string();
      long long number = 0;
      if (entry.is_regular_file(ignored) &&
          std::sscanf(name.c_str(), "save%lld-rank", &number) == 1 && number < save &&
          entry.path().extension() == ".safetensors")
        fs::remove(entry.path(), ignored);
    }
  }
}

// [SECTION] load ------------------------------------------------------------------------------

namespace {

// Reads rows [begin, begin + count) of the checkpoint's tensor `name` (count < 0: the whole
// tensor) from whichever files hold them.
class RowReader {
 public:
  RowReader(std::string dir, Json index, std::string context)
      : dir_(std::move(dir)), index_(std::move(index)), context_(std::move(context)) {}

  bool has(const std::string& name) const { return index_["tensors"].contains(name); }
  // The names that start with `prefix`, without it, with their dtype and whether 0-dim.
  std::vector<std::tuple<std::string, std::string, bool>> under(const std::string& prefix) const {
    std::vector<std::tuple<std::string, std::string, bool>> out;
    for (const auto& [key, entry] : index_["tensors"].items())
      if (key.rfind(prefix, 0) == 0)
        out.emplace_back(key.substr(prefix.size()), entry.at("dtype").get<std::string>(),
                         entry.at("shape").empty());
    return out;
  }

  // Checks the checkpoint's dtype and whole shape against what the model expects.
  Tensor read(const std::string& name, ScalarType dtype, const DimVector& full_shape, int64_t begin,
              int64_t count) {
    GLASS_CHECK(has(name), context_, ": the checkpoint has no '", name, "'");
    const Json& entry = index_["tensors"][name];
    const std::vector<int64_t> shape = entry.at("shape").get<std::vector<int64_t>>();
    GLASS_CHECK(entry.at("dtype").get<std::string>() == dtype_name(dtype), context_, ": '", name,
                "' is ", entry.at("dtype").get<std::string>(), " in the checkpoint but ",
                dtype_name(dtype), " here");
    GLASS_CHECK(DimVector(IntArrayRef(shape)) == full_shape, context_, ": '", name, "' is ",
                IntArrayRef(shape), " in the checkpoint but ", IntArrayRef(full_shape), " here");
    if (shape.empty()) return open(entry.at("shards").at(0).at("file")).read(name);
    DimVector out_shape = full_shape;
    out_shape[0] = count;
    Tensor out = empty(out_shape, TensorOptions(dtype));
    int64_t covered = 0;
    for (const Json& shard : entry.at("shards")) {
      const auto rows = shard.at("rows").get<std::vector<int64_t>>();
      const int64_t lo = std::max(begin, rows[0]), hi = std::min(begin + count, rows[1]);
      if (hi <= lo) continue;
      const Tensor piece = open(shard.at("file")).read(name);
      out.narrow(0, lo - begin, hi - lo).copy_(piece.narrow(0, lo - rows[0], hi - lo));
      covered += hi - lo;
    }
    GLASS_CHECK(covered == count, context_, ": the shards of '", name, "' cover ", covered,
                " of rows [", begin, ", ", begin + count, ")");
    return out;
  }

 private:
  const SafetensorsReader& open(const std::string& file) {
    auto it = readers_.find(file);
    if (it == readers_.end())
      it = readers_
               .emplace(file, std::make_unique<SafetensorsReader>((fs::path(dir_) / file).string(),
                                                                  context_))
               .first;
    return *it->second;
  }

  std::string dir_;
  Json index_;
  std::string context_;
  std::map<std::string, std::unique_ptr<SafetensorsReader>> readers_;
};

// The rows this rank holds of a tensor shaped like `t` (an FSDP parameter's, or all).
struct Want {
  DimVector full_shape;
  int64_t begin = 0, count = 0;
};

Want want_for(const Tensor& t, const std::optional<RowShard>& cut) {
  if (cut && t.dim() > 0 && t.size(0) == cut->rows) {
    DimVector full = DimVector(t.sizes());
    full[0] = cut->full_sizes[0];
    return {full, cut->row_begin, cut->rows};
  }
  return {DimVector(t.sizes()), 0, t.dim() > 0 ? t.size(0) : 0};
}

}  // namespace

void load_sharded_checkpoint(const std::string& dir, nn::Module& model,
                             optim::Optimizer* optimizer) {
  const std::string context = "load_sharded_checkpoint(" + dir + ")";
  RowReader reader(dir, read_index(dir, context), context);

  // Read everything first: a failure changes nothing.
  std::vector<std::pair<Tensor, Tensor>> model_copies;  // (the module's tensor, its values)
  for (const auto& [name, t] : model.state_dict()) {
    const Want w = want_for(t, fsdp_row_shard(t));
    model_copies.emplace_back(t, reader.read(name, t.dtype(), w.full_shape, w.begin, w.count));
  }
  struct StateSlot {
    Tensor param;
    std::string slot;
    Tensor value;
  };
  std::vector<StateSlot> states;
  if (optimizer != nullptr) {
    for (const auto& [name, p] : model.named_parameters()) {
      for (const auto& [slot, dtype, scalar] : reader.under(optimizer_key(name, ""))) {
        // A 0-dim slot (Adam's step) is whole; the others are shaped like the parameter.
        const Want w = scalar ? Want{} : want_for(p, fsdp_row_shard(p));
        const ScalarType type = scalar ? scalar_type_from_name(dtype, context) : p.dtype();
        states.push_back(
            {p, slot,
             reader.read(optimizer_key(name, slot), type, w.full_shape, w.begin, w.count)});
      }
    }
  }

  // The optimizer's part could still fail (a parameter it does not have, a slot its state
  // does not know): try every slot on scratch states first.
  for (const StateSlot& s : states) {
    GLASS_CHECK(optimizer->has_parameter(s.param), context,
                ": the optimizer does not hold the parameter the checkpoint has state for");
    optimizer->make_param_state()->set_state_tensor(s.slot, s.value);
  }
  NoGradGuard no_grad;
  for (auto& [t, values] : model_copies) Tensor(t).copy_(values);
  for (const StateSlot& s : states) optimizer->state_of(s.param).set_state_tensor(s.slot, s.value);
}

// [SECTION] full state ------------------------------------------------------------------------

void save_full_checkpoint(const std::string& path, const nn::Module& model,
                          std::shared_ptr<ProcessGroup> group) {
  if (!group) group = default_group();
  const int world = group->size();
  NoGradGuard no_grad;
  nn::NamedTensors whole;
  for (const auto& [name, t] : model.state_dict()) {
    const std::optional<RowShard> cut = fsdp_row_shard(t);
    if (!cut) {
      whole.emplace_back(name, t.detach());
      continue;
    }
    DimVector padded = cut->full_sizes;
    padded[0] = cut->rows_per_rank;
    Tensor mine = zeros(padded, t.options());
    if (cut->rows > 0) mine.narrow(0, 0, cut->rows).copy_(t.detach());
    padded[0] = cut->rows_per_rank * world;
    Tensor all = empty(padded, t.options());
    group->allgather(all, mine)->wait();
    whole.emplace_back(name, all.narrow(0, 0, cut->full_sizes[0]));
  }
  std::string error;
  if (group->rank() == 0) {
    try {
      glass::save(whole, path);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  GLASS_CHECK(all_succeeded(error.empty(), *group), "save_full_checkpoint(", path,
              "): rank 0 could not write the file", error.empty() ? "" : " (" + error + ")");
}

}  // namespace glass::distributed
