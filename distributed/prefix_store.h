// distributed/prefix_store.h — a namespace inside another store (c10d::PrefixStore).
//
// Each process group talks through its own PrefixStore over the one shared store, so two
// groups can use the same key names without meeting. Invariant: every key passed through
// becomes "<prefix>/<key>" before it reaches the inner store; values are untouched, and the
// inner store's timeouts and errors (which name the full keys) pass through as they are.
#pragma once

#include <memory>

#include "distributed/store.h"

namespace glass::distributed {

class PrefixStore : public Store {
 public:
  // The PrefixStore starts with the inner store's timeout; set_timeout() changes only its own.
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);

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
  // The inner store's count: every namespace together, as c10d's PrefixStore reports it.
  int64_t num_keys() override;

  const std::string& prefix() const { return prefix_; }
  const std::shared_ptr<Store>& underlying_store() const { return store_; }

 private:
  std::string join(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> join(const std::vector<std::string>& keys) const;

  std::string prefix_;
  std::shared_ptr<Store> store_;
};

}  // namespace glass::distributed
