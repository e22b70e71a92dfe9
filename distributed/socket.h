// distributed/socket.h — the few POSIX socket steps the TCP store needs, made safe to use.
//
// Socket owns one file descriptor and closes it exactly once (move-only, RAII). The helpers
// never raise SIGPIPE (sends use MSG_NOSIGNAL: a peer that vanished is an error to report,
// not a signal that kills the process) and never wait without a deadline. IPv4 only.
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace glass::distributed {

using SteadyTime = std::chrono::steady_clock::time_point;

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { reset(); }
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// host ("127.0.0.1", "localhost", a name) -> its first IPv4 address; throws naming the host.
sockaddr_in resolve_ipv4(const std::string& host, uint16_t port);
// "127.0.0.1:29500"
std::string address_to_string(const sockaddr_in& address);
bool is_loopback(const sockaddr_in& address);

// Connects to host:port, retrying (backoff 10 ms doubling to 1 s) until `timeout`, since the
// server may start after its clients. Throws "<who>: could not connect to host:port within
// N ms (<last reason>)". The socket returned is blocking, with TCP_NODELAY (requests are
// small and each waits for its reply).
Socket connect_with_retry(const std::string& who, const std::string& host, uint16_t port,
                          std::chrono::milliseconds timeout);

// Sends every byte or returns false (the peer closed, or an error; errno says which).
bool send_all(int fd, const void* data, size_t size);

enum class RecvStatus { kOk, kClosed, kTimedOut, kError };
// Receives exactly `size` bytes, waiting until `deadline` at most (SteadyTime::max(): no
// bound). kClosed: the peer closed first; kError: errno says why.
RecvStatus recv_all(int fd, void* data, size_t size, SteadyTime deadline);

// Milliseconds from now until `deadline` for poll(): 0 when past, -1 when unbounded,
// rounded up so a wait never ends just before its deadline.
int poll_timeout_ms(SteadyTime deadline);

}  // namespace glass::distributed
