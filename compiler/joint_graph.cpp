// compiler/joint_graph.cpp — tracing, checking and running a compiled function's backward
// (see joint_graph.h).
#include "compiler/joint_graph.h"

#include <iostream>
#include <utility>

#include "autograd/anomaly_mode.h"
#include "compiler/passes.h"
#include "compiler/program.h"
#include "compiler/replay.h"
#include "compiler/tracer.h"
#include "core/error.h"
#include "core/ops/factories.h"
#include "core/tensor_options.h"

namespace glass::compiler {
namespace {

// What a backward was traced for, beyond the forward variant's own guards (which fix the
// saved inputs): each output gradient's metadata (TensorMeta{} for none).
TensorMeta meta_of(const Tensor& grad) {
  return grad.defined() ? TensorMeta::of(grad) : TensorMeta{};
}

// The same numbers seen the same way (requires_grad aside: the replay's product has a
// history, the saved one none).
bool same_layout(const TensorMeta& a, const TensorMeta& b) {
  return a.sizes == b.sizes && a.strides == b.strides && a.storage_offset == b.storage_offset &&
         a.dtype == b.dtype && a.device == b.device;
}

}  // namespace

struct BackwardCache::Entry {
  std::vector<bool> needs;
  std::vector<TensorMeta> grads;
  std::vector<int> aliases;
  std::optional<Program> program;  // none: this kind of backward replays
  std::vector<int> returned;       // per program output: the leaf whose gradient it is
  // Per saved product (an input after the leaves): its layout when traced, and whether the
  // optimised graph reads it.
  std::vector<TensorMeta> product_metas;
  std::vector<bool> reads;
  BackwardInfo info;
};

bool is_matrix_product(const Node& n) {
  const std::string_view name = n.op->name();
  return name == "mm" || name == "bmm" || name == "addmm";
}

std::string unexplained_tensor(const Graph& joint, const Graph& forward) {
  for (size_t v = 0; v < joint.values.size(); ++v) {
    const Value& value = joint.values[v];
    if (value.kind != Value::Kind::Constant || value.is_wrapped_number || value.folded ||
        !value.constant.defined())
      continue;
    bool known = false;
    for (const Value& f : forward.values)
      known = known || (f.kind == Value::Kind::Constant && f.constant.defined() &&
                        f.constant.is_same(value.constant));
    if (known) continue;
    std::string reader;
    for (const Node& n : joint.nodes)
      for (int r : Graph::values_read(n))
        if (r == static_cast<int>(v) && reader.empty()) reader = std::string(n.op->name()) + "()";
    return "the backward reads a tensor made outside the ops (" +
           value_name(joint, static_cast<int>(v)) + ", read by " +
           (reader.empty() ? "the return" : reader) +
           "), which a traced graph would read as it was at the trace";
  }
  return "";
}

BackwardCache::BackwardCache(std::shared_ptr<const Graph> forward, int limit, std::string name)
    : forward_(std::move(forward)), limit_(limit), name_(std::move(name)) {
  // Only a product another op reads: mm's own formulas never read its result, so one that is
  // only returned is not kept (nor checked for a later write in place, which eager allows).
  const std::vector<bool> read = forward_->read_by_nodes();
  for (const Node& n : forward_->nodes)
    if (is_matrix_product(n))
      for (int v : n.outputs)
        if (read[v]) saved_values_.push_back(v);
}

BackwardCache::~BackwardCache() = default;

std::shared_ptr<const BackwardCache::Entry> BackwardCache::find_locked(
    const std::vector<bool>& needs, const std::vector<Tensor>& grads,
    const std::vector<int>& aliases) const {
  for (const auto& e : entries_) {
    if (e->needs != needs || e->grads.size() != grads.size() || e->aliases != aliases) continue;
    bool same = true;
    for (size_t i = 0; i < grads.size() && same; ++i) same = e->grads[i] == meta_of(grads[i]);
    if (same) return e;
  }
  return nullptr;
}

std::optional<std::vector<Tensor>> BackwardCache::run(const std::vector<Tensor>& leaves,
                                                      const std::vector<int>& leaf_values,
                                                      const std::vector<bool>& needs,
                                                      const std::vector<Tensor>& grads,
                                                      const std::vector<Tensor>& saved) {
  // Not inside a trace: fused kernels bypass the dispatcher, so that trace would not see them
  // (a replay's ops it does see), and a trace cannot start inside another. Nor in anomaly mode,
  // whose checks read values back: a graph break that would send this kind of backward to the
  // replay for good.
  if (is_tracing() || autograd::AnomalyMode::is_enabled()) return std::nullopt;
  GLASS_CHECK(saved.size() == saved_values_.size(), "compiled backward: ", saved.size(),
              " saved products where the forward has ", saved_values_.size());
  const std::vector<int> aliases = alias_pattern(grads);
  std::shared_ptr<const Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entry = find_locked(needs, grads, aliases);
    if (!entry && static_cast<int>(entries_.size()) >= limit_) return std::nullopt;
  }
  if (entry) {
    if (!entry->program) return std::nullopt;
    std::vector<Tensor> inputs = leaves;
    for (size_t j = 0; j < saved.size(); ++j) {
      const Tensor& product = saved[j];
      if (!entry->reads[j]) {
        inputs.emplace_back();  // an input nothing reads
        continue;
      }
      // Written since: the replay computes it again. The variant's guards fix every
      // product's layout; this only keeps that assumption from ever turning into a wrong read.
      if (!product.defined() || !same_layout(TensorMeta::of(product), entry->product_metas[j]))
        return std::nullopt;
      inputs.push_back(product);
    }
    for (const Tensor& g : grads)
      if (g.defined()) inputs.push_back(g);
    std::vector<Tensor> out = entry->program->run(inputs);
    std::vector<Tensor> result(leaves.size());
    for (size_t k = 0; k < out.size(); ++k) result[entry->returned[k]] = std::move(out[k]);
    return result;
  }
  auto [traced, result] = trace_entry(leaves, leaf_values, needs, grads, saved);
  traced->aliases = aliases;
  {
    // Another thread may have traced the same kind meanwhile: keep one.
    std::lock_guard<std::mutex> lock(mutex_);
    if (!find_locked(needs, grads, aliases) && static_cast<int>(entries_.size()) < limit_)
      entries_.push_back(traced);
  }
  return result;
}

std::pair<std::shared_ptr<BackwardCache::Entry>, std::optional<std::vector<Tensor>>>
BackwardCache::trace_entry(const std::vector<Tensor>& leaves, const std::vector<int>& leaf_values,
                           const std::vector<bool>& needs, const std::vector<Tensor>& grads,
                           const std::vector<Tensor>& saved) const {
  auto entry = std::make_shared<Entry>();
  entry->needs = needs;
  for (const Tensor& g : grads) entry->grads.push_back(meta_of(g));
  BackwardInfo& info = entry->info;

  // The joint graph's inputs: every saved input (a leaf of its own, requiring grad where a
  // gradient is wanted), every saved product, then each defined output gradient.
  std::vector<Tensor> inputs, wanted;
  std::vector<int> wanted_leaf;
  for (size_t i = 0; i < leaves.size(); ++i) {
    Tensor leaf = leaves[i].detach();
    if (needs[i]) {
      leaf.requires_grad_(true);
      wanted.push_back(leaf);
      wanted_leaf.push_back(static_cast<int>(i));
    }
    inputs.push_back(leaf);
  }
  for (size_t k = 0; k < saved.size(); ++k) {
    // A product written since the forward is not read; an empty tensor of its layout stands
    // in as the input, so the kind is traced as for any call (its replay computes this call's
    // gradients from the inputs either way) and later calls that have the product read it.
    const TensorMeta& meta = forward_->values[saved_values_[k]].meta;
    Tensor product = saved[k].defined()
                         ? saved[k].detach()  // a value of its own
                         : empty_strided(meta.sizes, meta.strides,
                                         TensorOptions(meta.dtype).device(meta.device));
    entry->product_metas.push_back(TensorMeta::of(product));
    inputs.push_back(product);
  }
  for (const Tensor& g : grads)
    if (g.defined()) inputs.push_back(g);
  const Graph& forward = *forward_;
  std::vector<int> returned;  // the leaf of each traced output
  std::vector<int> replayed;  // the joint value of each product taken, as replayed (-1: none)
  auto joint = [&]() -> std::vector<Tensor> {
    std::vector<Tensor> env(forward.values.size());
    for (size_t i = 0; i < leaves.size(); ++i) env[leaf_values[i]] = inputs[i];
    // The products as the replay made them, which the saved ones will stand in for.
    const auto products = [&](const std::vector<Tensor>& done) {
      for (int v : saved_values_) replayed.push_back(traced_value(done[v]));
    };
    std::vector<Tensor> got = replay_gradients(forward, std::move(env), wanted, grads, products);
    std::vector<Tensor> result;
    for (size_t k = 0; k < got.size(); ++k)
      if (got[k].defined()) {
        result.push_back(got[k]);
        returned.push_back(wanted_leaf[k]);
      }
    return result;
  };
  std::optional<TraceResult> traced;
  try {
    traced = trace(inputs, joint, /*fullgraph=*/false, /*joint=*/true);
  } catch (const Error& e) {
    // The replay meets the same error if it is the backward's own, and none if the trace's.
    info.replayed = std::string("tracing the backward failed: ") + e.what();
    return {entry, std::nullopt};
  }
  info.traced = traced->graph.to_string();
  info.traced_dot = traced->graph.to_dot("traced");
  if (traced->graph_break)
    info.replayed = traced->graph_break->message;
  else
    info.replayed = unexplained_tensor(traced->graph, forward);
  if (info.replayed.empty()) {
    try {
      Graph& g = traced->graph;
      // It all runs with grad mode off, the recomputed forward too (and so its ops and the
      // formulas' can merge).
      for (Node& n : g.nodes) n.grad_enabled = false;
      for (size_t k = 0; k < replayed.size(); ++k) {
        const int saved_input = g.inputs[leaves.size() + k];
        if (replayed[k] < 0 || !same_layout(g.values[replayed[k]].meta, g.values[saved_input].meta))
          continue;  // recomputed: the same numbers, at a matrix product's cost
        g.replace_uses(replayed[k], saved_input);
      }
      info.dead = eliminate_dead_code(g);
      info.bypassed = bypass_detaches(g);
      info.merged = eliminate_common_subexpressions(g);
      info.folded = fold_constants(g);
      info.dead += eliminate_dead_code(g);
      // requires_grad does not stop fusion here. The formulas read the forward's values
      // several times each: recompute them in each kernel.
      std::vector<FusionGroup> groups =
          find_fusion_groups(g, /*forward_without_grad=*/true, /*recompute=*/true);
      info.fused_groups = static_cast<int>(groups.size());
      info.optimized = g.to_string();
      for (const FusionGroup& group : groups) info.groups.push_back(group.nodes);
      info.optimized_dot = g.to_dot("optimized", info.groups);
      std::vector<bool> read = g.read_by_nodes();
      for (int v : g.outputs) read[v] = true;
      for (size_t j = 0; j < saved.size(); ++j) {
        entry->reads.push_back(read[g.inputs[leaves.size() + j]]);
        info.saved += entry->reads.back();
      }
      entry->program = make_program(std::move(g), std::move(groups));
      info.sources = entry->program->sources;
      entry->returned = returned;
    } catch (const Error& e) {  // e.g. generated code the compiler refused
      entry->program.reset();
      info.replayed = std::string("building the joint graph failed: ") + e.what();
    }
  }
  if (compile_debug()) {
    std::cerr << "glass::compile: " << name_ << " backward traced:\n" << info.traced;
    if (info.replayed.empty())
      std::cerr << "after passes (" << info.fused_groups << " fused groups):\n" << info.optimized;
    else
      std::cerr << "it replays instead: " << info.replayed << "\n";
  }
  // The trace computed this call's gradients as it ran (past a break too: it ran on).
  std::vector<Tensor> result(leaves.size());
  for (size_t k = 0; k < traced->outputs.size(); ++k) result[returned[k]] = traced->outputs[k];
  return {entry, std::move(result)};
}

std::vector<BackwardInfo> BackwardCache::info() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<BackwardInfo> out;
  for (const auto& e : entries_) out.push_back(e->info);
  return out;
}

}  // namespace glass::compiler
