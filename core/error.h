// core/error.h — the two error levels of glasstorch.
//
// GLASS_CHECK is for the user's mistakes: it throws glass::Error with a message that
// names what was wrong (shapes, dims, dtypes, devices) and, where one exists, the fix.
// It must run before any state is changed, so a failed call leaves every tensor as it
// was. GLASS_INTERNAL_ASSERT is for our own invariants: if it fires, glasstorch has a
// bug, and the message says so.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace glass {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

namespace detail {

// Streams every argument into one string; lets a check write
//   GLASS_CHECK(ok, "view(): shape ", shape, " is not compatible ...");
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

[[noreturn]] void throw_error(const std::string& msg);
[[noreturn]] void throw_internal(const char* file, int line, const char* cond,
                                 const std::string& msg);

}  // namespace detail
}  // namespace glass

#define GLASS_CHECK(cond, ...)                                             \
  do {                                                                     \
    if (!(cond)) [[unlikely]]                                              \
      ::glass::detail::throw_error(::glass::detail::str_cat(__VA_ARGS__)); \
  } while (0)

#define GLASS_INTERNAL_ASSERT(cond, ...)                                                        \
  do {                                                                                          \
    if (!(cond)) [[unlikely]]                                                                   \
      ::glass::detail::throw_internal(__FILE__, __LINE__, #cond,                                \
                                      ::glass::detail::str_cat("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)
