// distributed/store.h — the key-value store ranks meet through (c10d::Store's shape).
//
// Rendezvous (who is rank 0, where to connect, NCCL's unique id, Gloo's pair addresses)
// and failure diagnosis (which ranks reached which collective) go through a Store. Three
// implementations: TCPStore (tcp_store.h: across processes and machines), HashStore (in one
// process: the threads backend and tests) and PrefixStore (a namespace inside another
// store, one per process group). Invariant: get() and wait() block until the keys exist or
// the timeout passes, and then throw an error that names the missing keys and the timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace glass::distributed {

class Store {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout{std::chrono::seconds(300)};

  explicit Store(std::chrono::milliseconds timeout = kDefaultTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  virtual void set(const std::string& key, const std::vector<uint8_t>& value) = 0;
  void set(const std::string& key, const std::string& value);
  // Waits (up to the store's timeout) for the key, then returns its value.
  virtual std::vector<uint8_t> get(const std::string& key) = 0;
  std::string get_string(const std::string& key);
  // Adds `value` to the integer stored at key (0 if absent) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t value) = 0;
  // Atomically: if key holds `expected` (or is absent and expected is empty), set it to
  // `desired`; returns the value the key holds afterwards.
  virtual std::vector<uint8_t> compare_set(const std::string& key,
                                           const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) = 0;
  virtual bool delete_key(const std::string& key) = 0;
  // True when every key exists (does not wait).
  virtual bool check(const std::vector<std::string>& keys) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  virtual int64_t num_keys() = 0;

  std::chrono::milliseconds timeout() const { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 protected:
  std::chrono::milliseconds timeout_;
};

}  // namespace glass::distributed
