// distributed/tcp_store_server.h — the listening side of TCPStore: one thread, many clients.
//
// One background thread runs a poll() loop over the listening socket, every client and a
// wake-up eventfd — no thread per client, so a job of hundreds of ranks costs one thread.
// Client sockets are non-blocking, with an input buffer (bytes until a whole frame is in)
// and an output buffer (reply bytes the kernel has not taken yet), so a slow or vanished
// client never holds up the others. A GET or WAIT whose keys are missing is parked as a
// waiter and answered when a write completes its keys, or with TIMED_OUT at its deadline.
// Invariants: only the server thread touches clients and waiters; the table is also read
// by wait_for_count() from other threads, so both sides hold table_mu_ around it; the
// thread ends, and every socket closes, in the destructor.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distributed/kv_table.h"
#include "distributed/socket.h"
#include "distributed/tcp_store_protocol.h"

namespace glass::distributed {

class TCPStoreServer {
 public:
  // Binds host's address when it is loopback (127.0.0.0/8, "localhost"), every interface
  // otherwise, on `port` (0: any free port; port() tells which). Throws
  // "TCPStore: cannot listen on 127.0.0.1:29500: port in use" and the like.
  TCPStoreServer(const std::string& host, uint16_t port);
  ~TCPStoreServer();
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;

  uint16_t port() const { return port_; }
  // Blocks until the integer at `key` reaches `target` or `timeout` passes; returns the last
  // value seen (the caller compares it with target).
  int64_t wait_for_count(const std::string& key, int64_t target, std::chrono::milliseconds timeout);

 private:
  using Bytes = KvTable::Bytes;

  struct Client {
    Socket sock;
    Bytes in;             // received bytes that do not yet make a whole frame
    Bytes out;            // reply bytes not yet taken by the kernel
    bool parked = false;  // its GET/WAIT waits in waiters_; later frames wait behind it
    bool closed = false;  // EOF or an error: reaped at the end of this loop turn
    std::vector<std::pair<std::string, Bytes>> on_disconnect;
  };
  struct Waiter {
    uint64_t client;
    protocol::Command command;  // GET (reply with the value) or WAIT
    std::vector<std::string> keys;
    SteadyTime deadline;
  };

  void run();
  void accept_clients();
  void read_from(Client& client);
  // Handles every whole frame in client.in (stopping at a parked request); true if any.
  bool process_input(uint64_t id, Client& client);
  // Handles one request; true when it changed the table (waiters may now be answered).
  bool handle(uint64_t id, Client& client, protocol::Reader& request);
  void reply(Client& client, protocol::Writer&& payload);
  void flush(Client& client);
  // Answers every waiter whose keys are now all present; the table lock is taken inside.
  void answer_ready_waiters();
  void expire_waiters(SteadyTime now);
  // Drops closed clients, applying their ON_DISCONNECT writes; true if any were applied.
  bool reap_closed_clients();
  int poll_timeout() const;

  uint16_t port_ = 0;
  Socket listen_;
  Socket wake_;  // an eventfd the destructor writes to end poll()

  std::map<uint64_t, Client> clients_;
  uint64_t next_client_id_ = 0;
  std::vector<Waiter> waiters_;

  std::mutex table_mu_;
  std::condition_variable table_changed_;  // notified after each write, for wait_for_count
  KvTable table_;

  std::thread thread_;  // last: started after everything it uses exists
};

}  // namespace glass::distributed
