// distributed/kv_table.cpp — the commands' rules over a std::map (see kv_table.h).
#include "distributed/kv_table.h"

#include <charconv>

#include "core/error.h"

namespace glass::distributed {

const KvTable::Bytes* KvTable::find(const std::string& key) const {
  auto it = map_.find(key);
  return it == map_.end() ? nullptr : &it->second;
}

int64_t KvTable::integer(const std::string& key) const {
  int64_t value = 0;
  if (const Bytes* bytes = find(key)) {
    const char* first = reinterpret_cast<const char*>(bytes->data());
    const char* last = first + bytes->size();
    auto [end, err] = std::from_chars(first, last, value);
    GLASS_CHECK(err == std::errc() && end == last && !bytes->empty(), "store: key \"", key,
                "\" holds \"", std::string(first, last),
                "\", which is not an integer (add() keeps counters as decimal text)");
  }
  return value;
}

int64_t KvTable::add(const std::string& key, int64_t delta) {
  int64_t current = 0;
  GLASS_CHECK(!__builtin_add_overflow(integer(key), delta, &current), "store: add(\"", key, "\", ",
              delta, ") overflows int64 (the key holds ", integer(key), ")");
  std::string text = std::to_string(current);
  map_[key] = Bytes(text.begin(), text.end());
  return current;
}

KvTable::Bytes KvTable::compare_set(const std::string& key, const Bytes& expected,
                                    const Bytes& desired) {
  auto it = map_.find(key);
  if (it == map_.end()) {
    if (!expected.empty()) return expected;
    map_.emplace(key, desired);
    return desired;
  }
  if (it->second == expected) it->second = desired;
  return it->second;
}

std::vector<std::string> KvTable::missing(const std::vector<std::string>& keys) const {
  std::vector<std::string> absent;
  for (const std::string& key : keys)
    if (map_.find(key) == map_.end()) absent.push_back(key);
  return absent;
}

std::string store_timeout_message(const std::string& who, std::chrono::milliseconds timeout,
                                  const std::vector<std::string>& missing_keys) {
  std::string msg =
      who + ": timed out after " + std::to_string(timeout.count()) + " ms waiting for keys: ";
  for (size_t i = 0; i < missing_keys.size(); ++i) msg += (i ? ", " : "") + missing_keys[i];
  return msg;
}

}  // namespace glass::distributed
