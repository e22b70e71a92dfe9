// distributed/fingerprint.h — what GLASS_DISTRIBUTED_DEBUG=DETAIL compares across ranks.
//
// Before a collective runs, every rank all-gathers a few integers saying what it is about
// to do (which op, dtype, shape); if any rank differs, every rank throws the same message
// naming each rank's call, instead of hanging or reading the wrong number of bytes.
// Invariant: the fingerprint has a fixed length, so the check's own all-gather can never
// disagree on sizes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace glass::distributed {

// op id, dtype (-1: none), ndim, then up to 6 sizes (-1 pads; ndim > 6 keeps the first 6).
inline constexpr int kMaxFingerprintDims = 6;
using Fingerprint = std::array<int64_t, 3 + kMaxFingerprintDims>;

// op: one of the names collective_op_id knows; t may be undefined (barrier).
Fingerprint make_fingerprint(const char* op, const Tensor& t);
// The collectives' names and their ids in a fingerprint (0 for an unknown name).
int64_t collective_op_id(const char* op);

// "" when every rank's fingerprint matches, else "ranks disagree — rank 0: float32 [4, 3];
// rank 1: float32 [4]" (the op is named too when the ops differ).
// all: size * Fingerprint::size() integers, rank r's at [r * 9, r * 9 + 9).
std::string compare_fingerprints(const std::vector<int64_t>& all, int size);

}  // namespace glass::distributed
