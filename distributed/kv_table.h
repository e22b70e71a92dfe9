// distributed/kv_table.h — the table behind every store, and the rule of each command.
//
// HashStore (in one process) and the TCPStore server (in its own thread) hold their keys in
// a KvTable, so what SET, ADD, COMPARE_SET, DELETE and CHECK mean is written once, here.
// The table is not thread-safe: its owner serialises access (HashStore with a mutex, the
// server by being the only thread that touches it). Invariant: a key written by add() holds
// its integer as decimal text ("3"), as torch.distributed's stores do, so get() of a counter
// returns readable bytes and add() on such a key parses them back.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace glass::distributed {

class KvTable {
 public:
  using Bytes = std::vector<uint8_t>;

  void set(const std::string& key, const Bytes& value) { map_[key] = value; }
  // The value at key; nullptr when the key is absent.
  const Bytes* find(const std::string& key) const;
  // The integer at key (absent counts as 0); throws like add() when it is not one.
  int64_t integer(const std::string& key) const;
  // Adds delta to the integer at key (absent counts as 0) and returns the new value. Throws,
  // naming the key and its bytes, when the key holds something that is not an integer.
  int64_t add(const std::string& key, int64_t delta);
  // torch's rule: set `desired` when key holds `expected`, or is absent and `expected` is
  // empty; return the value the key holds afterwards — or `expected` itself when the key is
  // absent and `expected` is not empty (there is no value to return).
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired);
  bool erase(const std::string& key) { return map_.erase(key) > 0; }
  // The keys of `keys` that are absent, in the order given (empty: all present).
  std::vector<std::string> missing(const std::vector<std::string>& keys) const;
  int64_t size() const { return static_cast<int64_t>(map_.size()); }

 private:
  std::map<std::string, Bytes> map_;
};

// "<who>: timed out after 300 ms waiting for keys: a, b" — the one wording every store
// uses when get() or wait() gives up.
std::string store_timeout_message(const std::string& who, std::chrono::milliseconds timeout,
                                  const std::vector<std::string>& missing_keys);

}  // namespace glass::distributed
