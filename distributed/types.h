// distributed/types.h — the vocabulary every process group shares: reduce ops, per-call
// options (libtorch's c10d names), and the timeouts.
//
// Invariant: an option left at its default means "the group's own setting" — a timeout of
// kUnsetTimeout takes the group's timeout (init_process_group's `timeout`), never zero.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace glass::distributed {

// How the values of all ranks combine. AVG divides the sum by the world size (integers:
// rounding toward zero, as integer division does).
enum class ReduceOp : uint8_t { SUM, AVG, PRODUCT, MAX, MIN };
const char* to_string(ReduceOp op);

// A timeout of zero means "use the group's".
inline constexpr std::chrono::milliseconds kUnsetTimeout{0};
// Work::wait()'s default: wait as long as the group's timeout allows.
inline constexpr std::chrono::milliseconds kNoTimeout{-1};
// init_process_group's default (torch.distributed: 30 minutes for gloo; ten here, since a
// hung test should fail long before CI's limit).
inline constexpr std::chrono::milliseconds kDefaultTimeout{std::chrono::minutes(10)};

struct AllreduceOptions {
  ReduceOp reduceOp = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

struct BroadcastOptions {
  int64_t rootRank = 0;
  int64_t rootTensor = 0;  // index into the tensor list; always 0 (one tensor per rank)
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

struct AllgatherOptions {
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

struct ReduceScatterOptions {
  ReduceOp reduceOp = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

struct GatherOptions {
  int64_t rootRank = 0;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

struct ScatterOptions {
  int64_t rootRank = 0;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

struct BarrierOptions {
  std::vector<int64_t> device_ids;  // accepted for libtorch's signature; unused
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

}  // namespace glass::distributed
