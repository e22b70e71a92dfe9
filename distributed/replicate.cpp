// distributed/replicate.cpp — the shape check and the coalesced broadcast behind DDP's replica.
#include "distributed/replicate.h"

#include <sstream>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops/factories.h"
#include "core/ops/join.h"

namespace glass::distributed {

namespace {

// A parameter's description as integers: dtype, ndim, sizes. The whole model's is
// [count, then each parameter's], padded with -2 to a length every rank agrees on.
std::vector<int64_t> describe(const std::vector<std::pair<std::string, Tensor>>& params) {
  std::vector<int64_t> d{static_cast<int64_t>(params.size())};
  for (const auto& [name, t] : params) {
    d.push_back(static_cast<int64_t>(t.scalar_type()));
    d.push_back(t.dim());
    for (int64_t s : t.sizes()) d.push_back(s);
  }
  return d;
}

Tensor to_tensor(const std::vector<int64_t>& v, int64_t length) {
  Tensor t = full({length}, -2, TensorOptions().dtype(kLong));
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<int64_t>()[i] = v[i];
  return t;
}

// Reads parameter k's description out of a model's; false if the model has no parameter k.
bool parameter_at(const int64_t* d, int64_t k, ScalarType& dtype, std::vector<int64_t>& sizes) {
  if (k >= d[0]) return false;
  int64_t pos = 1;
  for (int64_t i = 0; i < k; ++i) pos += 2 + d[pos + 1];
  dtype = static_cast<ScalarType>(d[pos]);
  sizes.assign(d + pos + 2, d + pos + 2 + d[pos + 1]);
  return true;
}

std::string describe_one(bool present, ScalarType dtype, const std::vector<int64_t>& sizes) {
  if (!present) return "no such parameter";
  std::ostringstream os;
  os << dtype << " " << IntArrayRef(sizes);
  return os.str();
}

}  // namespace

void verify_params_across_ranks(ProcessGroup& group,
                                const std::vector<std::pair<std::string, Tensor>>& params) {
  const int n = group.size();
  const std::vector<int64_t> mine = describe(params);
  // Lengths first, so everyone pads to the longest.
  Tensor length = full({1}, static_cast<int64_t>(mine.size()), TensorOptions().dtype(kLong));
  Tensor lengths = empty({n}, TensorOptions().dtype(kLong));
  group.allgather(lengths, length)->wait();
  int64_t longest = 0;
  for (int r = 0; r < n; ++r) longest = std::max(longest, lengths.data_ptr<int64_t>()[r]);
  Tensor all = empty({n * longest}, TensorOptions().dtype(kLong));
  group.allgather(all, to_tensor(mine, longest))->wait();

  const int64_t* base = all.data_ptr<int64_t>();
  const int64_t most = [&] {
    int64_t m = 0;
    for (int r = 0; r < n; ++r) m = std::max(m, base[r * longest]);
    return m;
  }();
  for (int64_t k = 0; k < most; ++k) {
    ScalarType dtype0 = ScalarType::Undefined;
    std::vector<int64_t> sizes0;
    const bool has0 = parameter_at(base, k, dtype0, sizes0);
    for (int r = 1; r < n; ++r) {
      ScalarType dtype = ScalarType::Undefined;
      std::vector<int64_t> sizes;
      const bool has = parameter_at(base + r * longest, k, dtype, sizes);
      if (has == has0 && dtype == dtype0 && sizes == sizes0) continue;
      const std::string name = k < static_cast<int64_t>(params.size())
                                   ? " ('" + params[k].first + "' on this rank)"
                                   : "";
      GLASS_CHECK(false, "DistributedDataParallel: ranks built different models: parameter ", k,
                  name, " is ", describe_one(has0, dtype0, sizes0), " on rank 0 but ",
                  describe_one(has, dtype, sizes), " on rank ", r);
    }
  }
}

void broadcast_coalesced(ProcessGroup& group, const std::vector<Tensor>& tensors, int root,
                         size_t buffer_bytes) {
  NoGradGuard no_grad;
  size_t i = 0;
  while (i < tensors.size()) {
    // Pack a run of tensors that share dtype and device, up to buffer_bytes.
    std::vector<Tensor> run{tensors[i]};
    size_t bytes = static_cast<size_t>(tensors[i].nbytes());
    size_t j = i + 1;
    for (; j < tensors.size(); ++j) {
      const Tensor& t = tensors[j];
      if (t.scalar_type() != run[0].scalar_type() || t.device() != run[0].device() ||
          bytes + static_cast<size_t>(t.nbytes()) > buffer_bytes)
        break;
      run.push_back(t);
      bytes += static_cast<size_t>(t.nbytes());
    }
    std::vector<Tensor> flat_parts;
    for (const Tensor& t : run) flat_parts.push_back(t.reshape({-1}));
    Tensor flat = cat(flat_parts, 0);
    group.broadcast(flat, BroadcastOptions{.rootRank = root})->wait();
    int64_t offset = 0;
    for (const Tensor& t : run) {
      Tensor(t).copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
      offset += t.numel();
    }
    i = j;
  }
}

}  // namespace glass::distributed
