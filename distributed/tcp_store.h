// distributed/tcp_store.h — a Store served over TCP by one process, used by all.
//
// Debian's Gloo (a 2022 snapshot) ships only file and hash stores, so the rendezvous store
// is written here, with torch.distributed.TCPStore's behaviour: the server binds the given
// port, or any free one when the port is 0 — read the bound port from port() and pass it
// on (glassrun exports it as MASTER_PORT), so no one races for a port picked earlier.
// Clients retry connecting until the timeout, since the server may start after them.
// Invariants: every request gets exactly one reply; a failed connection or a timeout is an
// error naming host, port and what was waited for; the server's thread ends with the
// object that started it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "distributed/store.h"

namespace glass::distributed {

struct TCPStoreOptions {
  uint16_t port = 0;               // server: 0 binds any free port; client: the port to reach
  bool is_server = false;          // this object also runs the server (in a background thread)
  std::optional<int> num_workers;  // with wait_for_workers: clients to expect, itself included
  bool wait_for_workers = true;    // the server's constructor waits for num_workers clients
  std::chrono::milliseconds timeout = Store::kDefaultTimeout;
};

class TCPStoreServer;  // the listening side (tcp_store_server.cpp)

class TCPStore : public Store {
 public:
  // host: where the server is (the server binds all interfaces when host is not loopback,
  // and only loopback when it is).
  explicit TCPStore(std::string host, const TCPStoreOptions& opts = {});
  ~TCPStore() override;

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

  // When this client's connection closes — its process exited, was killed, or this object
  // was destroyed — the server sets `key` to `value`. Ranks register "glass/exited/<rank>"
  // this way, so the others can name a rank that died (a kill -9 included).
  void set_on_disconnect(const std::string& key, const std::string& value);

  // The server object only: blocks until `num_workers` clients (this object included) have
  // been constructed, or throws at the timeout naming how many joined. The constructor calls
  // it when opts.wait_for_workers and opts.num_workers are set; a server on port 0 calls it
  // itself, after handing port() to the clients it waits for.
  void wait_for_workers(int num_workers, std::chrono::milliseconds timeout);

  // Every client's constructor adds 1 here; wait_for_workers() watches it. It is an ordinary
  // key, so num_keys() counts it.
  static constexpr const char* kNumWorkersKey = "glass/store/num_workers";

  const std::string& host() const { return host_; }
  uint16_t port() const { return port_; }  // the bound port when this object is the server

 private:
  struct Connection;
  std::string host_;
  uint16_t port_ = 0;
  std::unique_ptr<TCPStoreServer> server_;
  std::unique_ptr<Connection> conn_;
};

}  // namespace glass::distributed
