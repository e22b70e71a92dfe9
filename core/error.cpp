// core/error.cpp — out-of-line throw helpers, so checks stay cheap at their call sites.
#include "core/error.h"

namespace glass::detail {

void throw_error(const std::string& msg) { throw Error(msg); }

void throw_internal(const char* file, int line, const char* cond, const std::string& msg) {
  throw Error(str_cat("glasstorch internal error (this is a bug, please report it): ", file, ":",
                      line, ": assertion `", cond, "` failed. ", msg));
}

}  // namespace glass::detail
