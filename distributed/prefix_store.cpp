// distributed/prefix_store.cpp — forwards every call with "<prefix>/" put before its keys.
#include "distributed/prefix_store.h"

#include "core/error.h"

namespace glass::distributed {

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : Store(store ? store->timeout() : kDefaultTimeout),
      prefix_(std::move(prefix)),
      store_(std::move(store)) {
  GLASS_CHECK(store_ != nullptr, "PrefixStore(\"", prefix_, "\"): the inner store is null");
}

std::vector<std::string> PrefixStore::join(const std::vector<std::string>& keys) const {
  std::vector<std::string> joined;
  joined.reserve(keys.size());
  for (const std::string& key : keys) joined.push_back(join(key));
  return joined;
}

void PrefixStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  store_->set(join(key), value);
}

// The inner store's get() waits with the inner timeout; wait first with ours, so the
// timeout a caller set on this PrefixStore is the one that holds.
std::vector<uint8_t> PrefixStore::get(const std::string& key) {
  store_->wait({join(key)}, timeout_);
  return store_->get(join(key));
}

int64_t PrefixStore::add(const std::string& key, int64_t value) {
  return store_->add(join(key), value);
}

std::vector<uint8_t> PrefixStore::compare_set(const std::string& key,
                                              const std::vector<uint8_t>& expected,
                                              const std::vector<uint8_t>& desired) {
  return store_->compare_set(join(key), expected, desired);
}

bool PrefixStore::delete_key(const std::string& key) { return store_->delete_key(join(key)); }

bool PrefixStore::check(const std::vector<std::string>& keys) { return store_->check(join(keys)); }

void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  store_->wait(join(keys), timeout);
}

int64_t PrefixStore::num_keys() { return store_->num_keys(); }

}  // namespace glass::distributed
