// distributed/fingerprint.cpp — building, comparing and printing collective fingerprints.
//
// Invariant: a fingerprint holds only integers every rank computes the same way from its
// own call (no pointers, no addresses), so equal calls give equal fingerprints.
#include "distributed/fingerprint.h"

#include <cstring>
#include <sstream>

#include "core/scalar_type.h"

namespace glass::distributed {

namespace {

// Index = op id. Id 0 is "unknown", so a zeroed fingerprint never matches a real op.
constexpr const char* kOpNames[] = {
    "?", "allreduce", "broadcast", "allgather", "reduce_scatter", "gather", "scatter", "barrier"};

std::string describe(const int64_t* fp) {
  std::ostringstream out;
  const int64_t dtype = fp[1];
  out << (dtype < 0 ? "no tensor" : dtype_name(static_cast<ScalarType>(dtype)));
  if (dtype < 0) return out.str();
  const int64_t ndim = fp[2];
  out << " [";
  for (int64_t d = 0; d < ndim && d < kMaxFingerprintDims; ++d) out << (d ? ", " : "") << fp[3 + d];
  if (ndim > kMaxFingerprintDims) out << ", ...";
  out << "]";
  return out.str();
}

const char* op_name(int64_t id) {
  constexpr int64_t n = sizeof(kOpNames) / sizeof(kOpNames[0]);
  return id > 0 && id < n ? kOpNames[id] : "?";
}

}  // namespace

int64_t collective_op_id(const char* op) {
  constexpr int64_t n = sizeof(kOpNames) / sizeof(kOpNames[0]);
  for (int64_t id = 1; id < n; ++id)
    if (std::strcmp(op, kOpNames[id]) == 0) return id;
  return 0;
}

Fingerprint make_fingerprint(const char* op, const Tensor& t) {
  Fingerprint fp;
  fp.fill(-1);
  fp[0] = collective_op_id(op);
  fp[2] = 0;
  if (t.defined()) {
    fp[1] = static_cast<int64_t>(t.dtype());
    fp[2] = t.dim();
    for (int64_t d = 0; d < t.dim() && d < kMaxFingerprintDims; ++d) fp[3 + d] = t.size(d);
  }
  return fp;
}

std::string compare_fingerprints(const std::vector<int64_t>& all, int size) {
  constexpr size_t n = Fingerprint().size();
  bool same = true;
  bool same_op = true;
  for (int r = 1; r < size; ++r) {
    same = same && std::memcmp(&all[0], &all[r * n], n * sizeof(int64_t)) == 0;
    same_op = same_op && all[0] == all[r * n];
  }
  if (same) return "";
  std::ostringstream out;
  out << "ranks disagree — ";
  for (int r = 0; r < size; ++r) {
    const int64_t* fp = &all[r * n];
    out << (r ? "; " : "") << "rank " << r << ": ";
    if (!same_op) out << op_name(fp[0]) << " ";
    out << describe(fp);
  }
  return out.str();
}

}  // namespace glass::distributed
