// distributed/diagnosis.h — which ranks did not join a collective that failed.
//
// A rank whose collective times out (or whose transport fails) writes where it is into the
// group's store and reads where the others wrote they are. Nothing is written while things
// go well: the store is touched only on failure, so the check costs nothing per collective.
// Invariant: the whole exchange is bounded by a second, so a diagnosis never turns a failure
// into a hang. A second whatever the collective's timeout: ranks that time out together
// publish within scheduling noise of each other, and on a busy machine that noise can be
// longer than a short timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "distributed/store.h"

namespace glass::distributed {

// A failure whose message already names the ranks at fault (they called different ops, one
// left the group): ProcessGroup passes it on as it is, without asking the store.
class RanksAtFaultError : public Error {
 public:
  using Error::Error;
};

// Publishes "rank <rank> is at <op> #<seq>" under diag/<group>/<rank>, then waits up to
// kDiagnosisBudget for the other ranks' entries and returns one line, e.g.
//   "ranks that did not join allreduce #7: 1, 3 (rank 1: silent; rank 3: at barrier #6)".
// Never throws (a broken store yields a line saying so).
std::string diagnose_collective(Store& store, const std::string& group, int rank, int size,
                                const std::string& op, uint64_t seq);
inline constexpr std::chrono::milliseconds kDiagnosisBudget{1000};

}  // namespace glass::distributed
