// distributed/diagnosis.cpp — publishing and reading where each rank is stuck.
//
// Invariant: the value under diag/<group>/<rank> is "<seq> <op>", machine-readable, written
// only by that rank; the text for people is built here, from every rank's entry.
#include "distributed/diagnosis.h"

#include <algorithm>
#include <exception>
#include <sstream>
#include <vector>

namespace glass::distributed {

namespace {

std::string key_of(const std::string& group, int rank) {
  return "diag/" + group + "/" + std::to_string(rank);
}

}  // namespace

std::string diagnose_collective(Store& store, const std::string& group, int rank, int size,
                                const std::string& op, uint64_t seq) {
  try {
    store.set(key_of(group, rank), std::to_string(seq) + " " + op);
    std::vector<std::string> others;
    for (int r = 0; r < size; ++r)
      if (r != rank) others.push_back(key_of(group, r));
    // One bounded wait for everybody; whoever has not written by then is "silent".
    try {
      if (!others.empty()) store.wait(others, kDiagnosisBudget);
    } catch (const std::exception&) {
    }
    std::vector<int> absent;
    std::ostringstream where;
    for (int r = 0; r < size; ++r) {
      if (r == rank) continue;
      const std::string key = key_of(group, r);
      std::string at;
      if (store.check({key})) {
        std::istringstream in(store.get_string(key));
        uint64_t their_seq = 0;
        std::string their_op;
        in >> their_seq >> their_op;
        if (their_seq == seq && their_op == op) continue;  // stuck in the same call as us
        at = "at " + their_op + " #" + std::to_string(their_seq);
      } else {
        at = "silent";
      }
      absent.push_back(r);
      where << (where.tellp() > 0 ? "; " : "") << "rank " << r << ": " << at;
    }
    std::ostringstream out;
    if (absent.empty()) {
      out << "every rank reached " << op << " #" << seq;
      return out.str();
    }
    out << "ranks that did not join " << op << " #" << seq << ": ";
    for (size_t i = 0; i < absent.size(); ++i) out << (i ? ", " : "") << absent[i];
    out << " (" << where.str() << ")";
    return out.str();
  } catch (const std::exception& e) {
    return std::string("no diagnosis: the store failed (") + e.what() + ")";
  }
}

}  // namespace glass::distributed
