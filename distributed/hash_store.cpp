// distributed/hash_store.cpp — KvTable behind a mutex, with a condition variable for the
// blocking calls (see hash_store.h).
#include "distributed/hash_store.h"

#include "core/error.h"

namespace glass::distributed {

void HashStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    table_.set(key, value);
  }
  changed_.notify_all();
}

std::vector<uint8_t> HashStore::get(const std::string& key) {
  std::unique_lock<std::mutex> lock(mu_);
  wait_locked(lock, {key}, timeout_);
  return *table_.find(key);
}

int64_t HashStore::add(const std::string& key, int64_t value) {
  int64_t result = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    result = table_.add(key, value);
  }
  changed_.notify_all();
  return result;
}

std::vector<uint8_t> HashStore::compare_set(const std::string& key,
                                            const std::vector<uint8_t>& expected,
                                            const std::vector<uint8_t>& desired) {
  std::vector<uint8_t> result;
  {
    std::lock_guard<std::mutex> lock(mu_);
    result = table_.compare_set(key, expected, desired);
  }
  changed_.notify_all();
  return result;
}

bool HashStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  return table_.erase(key);
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  return table_.missing(keys).empty();
}

void HashStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  wait_locked(lock, keys, timeout);
}

int64_t HashStore::num_keys() {
  std::lock_guard<std::mutex> lock(mu_);
  return table_.size();
}

void HashStore::wait_locked(std::unique_lock<std::mutex>& lock,
                            const std::vector<std::string>& keys,
                            std::chrono::milliseconds timeout) {
  auto all_present = [&] { return table_.missing(keys).empty(); };
  if (timeout < std::chrono::milliseconds::zero()) {  // a negative timeout waits forever
    changed_.wait(lock, all_present);
    return;
  }
  bool present = changed_.wait_for(lock, timeout, all_present);
  GLASS_CHECK(present, store_timeout_message("store", timeout, table_.missing(keys)));
}

}  // namespace glass::distributed
