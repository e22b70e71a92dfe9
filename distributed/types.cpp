// distributed/types.cpp — names for the reduce ops, as error messages print them.
#include "distributed/types.h"

namespace glass::distributed {

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return "SUM";
    case ReduceOp::AVG: return "AVG";
    case ReduceOp::PRODUCT: return "PRODUCT";
    case ReduceOp::MAX: return "MAX";
    case ReduceOp::MIN: return "MIN";
  }
  return "?";
}

}  // namespace glass::distributed
