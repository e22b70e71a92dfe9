// distributed/checkpoint.h — sharded checkpoints of a model and its optimizer (one
// safetensors file per rank plus an index), and the full state gathered into one file.
//
//   save_sharded_checkpoint("ckpt", *model, &adam);   // every rank (collective)
//   load_sharded_checkpoint("ckpt", *model, &adam);   // any number of ranks, or one process
//   save_full_checkpoint("model.safetensors", *model); // every rank; rank 0 writes one file
//
// A checkpoint directory holds one file per rank with the rows that rank holds, and
// index.json, which says what exists — PyTorch's distributed-checkpoint metadata, as JSON
// (Hugging Face's model.safetensors.index.json maps whole tensors to files; this maps rows):
//
//   {"format": "glasstorch-sharded-checkpoint", "version": 1, "save": 2, "world_size": 2,
//    "tensors": {"fc1.weight": {"dtype": "float32", "shape": [512, 784],
//                   "shards": [{"file": "save000002-rank00000-of-00002.safetensors",
//                               "rows": [0, 256]}, {"file": "...", "rows": [256, 512]}]},
//                "optimizer/fc1.weight/exp_avg": {...}, "optimizer/fc1.weight/step": ...}}
//
// An FSDP parameter (and its optimizer state) is saved as the rows each rank holds; any
// other tensor, the same on every rank, by rank 0 alone; a 0-dim tensor has one shard and no
// rows. Loading reads, for every tensor, the rows the loading rank holds — under any world
// size, FSDP or not — from whichever files have them: a checkpoint saved by 2 ranks loads
// into 4, or into one process.
//
// Commit protocol: each save has a number; every rank writes its file (named by the number,
// so no file of an earlier checkpoint is touched) atomically; after a barrier rank 0 writes
// index.json atomically, and after a second barrier deletes the files of earlier saves. A
// checkpoint exists when its index does: a rank killed mid-save leaves the previous index,
// and the files it names, as they were.
//
// Loads are all-or-nothing: every name, dtype and shape is checked and every tensor read
// before anything is changed.
#pragma once

#include <memory>
#include <string>

#include "distributed/process_group.h"
#include "nn/module.h"
#include "nn/optim/optimizer.h"

namespace glass::distributed {

// Collective over `group` (the default group if null). `optimizer` may be null (model only).
void save_sharded_checkpoint(const std::string& dir, const nn::Module& model,
                             const optim::Optimizer* optimizer = nullptr,
                             std::shared_ptr<ProcessGroup> group = nullptr);

// Not collective: each rank (or a lone process) reads what it holds. With an optimizer, the
// state of every parameter the checkpoint has state for is replaced (created if missing).
void load_sharded_checkpoint(const std::string& dir, nn::Module& model,
                             optim::Optimizer* optimizer = nullptr);

// Collective: the whole model state (FSDP parameters all-gathered), written by rank 0 as one
// safetensors file that glass::load(module, path) reads in a single process.
void save_full_checkpoint(const std::string& path, const nn::Module& model,
                          std::shared_ptr<ProcessGroup> group = nullptr);

}  // namespace glass::distributed
