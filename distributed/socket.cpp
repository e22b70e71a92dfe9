// distributed/socket.cpp — RAII file descriptors, connect with retry, and send/recv of
// whole buffers with deadlines (see socket.h).
#include "distributed/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "core/error.h"

namespace glass::distributed {

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

void Socket::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

sockaddr_in resolve_ipv4(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  GLASS_CHECK(rc == 0 && found != nullptr, "TCPStore: cannot resolve host '", host,
              "' to an IPv4 address (", ::gai_strerror(rc), ")");
  sockaddr_in address{};
  std::memcpy(&address, found->ai_addr, sizeof(address));
  ::freeaddrinfo(found);
  address.sin_port = htons(port);
  return address;
}

std::string address_to_string(const sockaddr_in& address) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &address.sin_addr, text, sizeof(text));
  return std::string(text) + ":" + std::to_string(ntohs(address.sin_port));
}

bool is_loopback(const sockaddr_in& address) {
  return (ntohl(address.sin_addr.s_addr) >> 24) == 127;  // all of 127.0.0.0/8
}

int poll_timeout_ms(SteadyTime deadline) {
  if (deadline == SteadyTime::max()) return -1;
  auto left = deadline - std::chrono::steady_clock::now();
  if (left <= SteadyTime::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<int64_t>(ms, 1 << 30));
}

namespace {

// One attempt: a non-blocking connect, so an address that never answers (a firewall that
// drops SYNs) is bounded by our deadline rather than the kernel's two minutes. Returns the
// connected socket, or an invalid one with `reason` filled in.
Socket try_connect(const sockaddr_in& address, SteadyTime deadline, std::string& reason) {
  Socket sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!sock.valid()) {
    reason = std::strerror(errno);
    return Socket();
  }
  int rc = ::connect(sock.fd(), reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  if (rc != 0 && errno != EINPROGRESS) {
    reason = errno == ECONNREFUSED ? "connection refused" : std::strerror(errno);
    return Socket();
  }
  if (rc != 0) {
    pollfd pfd{sock.fd(), POLLOUT, 0};
    int ready = ::poll(&pfd, 1, poll_timeout_ms(deadline));
    if (ready <= 0) {
      reason = ready == 0 ? "no answer" : std::strerror(errno);
      return Socket();
    }
    int error = 0;
    socklen_t len = sizeof(error);
    ::getsockopt(sock.fd(), SOL_SOCKET, SO_ERROR, &error, &len);
    if (error != 0) {
      reason = error == ECONNREFUSED ? "connection refused" : std::strerror(error);
      return Socket();
    }
  }
  ::fcntl(sock.fd(), F_SETFL, ::fcntl(sock.fd(), F_GETFL) & ~O_NONBLOCK);
  int one = 1;
  ::setsockopt(sock.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return sock;
}

}  // namespace

Socket connect_with_retry(const std::string& who, const std::string& host, uint16_t port,
                          std::chrono::milliseconds timeout) {
  const sockaddr_in address = resolve_ipv4(host, port);
  const SteadyTime deadline = timeout < std::chrono::milliseconds::zero()
                                  ? SteadyTime::max()  // a negative timeout: keep trying
                                  : std::chrono::steady_clock::now() + timeout;
  std::chrono::milliseconds backoff(10);
  std::string reason = "no attempt";
  while (true) {
    Socket sock = try_connect(address, deadline, reason);
    if (sock.valid()) return sock;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    // Pacing between attempts, not synchronisation: nothing tells us when a server starts.
    std::this_thread::sleep_for(std::min<SteadyTime::duration>(backoff, deadline - now));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
  GLASS_CHECK(false, who, ": could not connect to ", host, ":", port, " within ", timeout.count(),
              " ms (", reason, ")");
  return Socket();  // unreachable
}

bool send_all(int fd, const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, bytes, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

RecvStatus recv_all(int fd, void* data, size_t size, SteadyTime deadline) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    pollfd pfd{fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, poll_timeout_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return RecvStatus::kError;
    if (ready == 0) return RecvStatus::kTimedOut;
    ssize_t n = ::recv(fd, bytes, size, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return RecvStatus::kError;
    if (n == 0) return RecvStatus::kClosed;
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return RecvStatus::kOk;
}

}  // namespace glass::distributed
