// distributed/store.cpp — Store's string conveniences: the bytes of a std::string go in
// and come out unchanged (no terminator, no encoding), so text and binary values share one
// path.
#include "distributed/store.h"

namespace glass::distributed {

void Store::set(const std::string& key, const std::string& value) {
  set(key, std::vector<uint8_t>(value.begin(), value.end()));
}

std::string Store::get_string(const std::string& key) {
  std::vector<uint8_t> bytes = get(key);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace glass::distributed
