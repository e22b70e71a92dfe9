// distributed/hash_store.h — a Store inside one process (c10d::HashStore).
//
// Ranks that are threads of one process (the threads backend, lessons, tests) meet here.
// Invariant: every call holds one mutex for its whole effect, and every write wakes all
// waiters, which recheck their keys; get() and wait() block until the keys exist or the
// timeout passes, then throw naming the missing keys and the timeout.
#pragma once

#include <condition_variable>
#include <mutex>

#include "distributed/kv_table.h"
#include "distributed/store.h"

namespace glass::distributed {

class HashStore : public Store {
 public:
  explicit HashStore(std::chrono::milliseconds timeout = kDefaultTimeout) : Store(timeout) {}

  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  using Store::set;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired) override;
  bool delete_key(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  int64_t num_keys() override;

 private:
  // Blocks (mu_ held through `lock`) until every key exists; throws at the timeout.
  void wait_locked(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys,
                   std::chrono::milliseconds timeout);

  std::mutex mu_;
  std::condition_variable changed_;  // notified after every write
  KvTable table_;
};

}  // namespace glass::distributed
