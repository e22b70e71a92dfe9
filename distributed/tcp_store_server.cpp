// distributed/tcp_store_server.cpp — the TCP store's poll() loop (see tcp_store_server.h
// for the design and tcp_store_protocol.h for the wire format).
//
// One turn of the loop: poll; accept new clients; read what arrived; handle every whole
// frame (a write answers the waiters it completes); answer waiters whose deadline passed;
// reap clients that closed (their ON_DISCONNECT writes may complete more waiters); flush.
#include "distributed/tcp_store_server.h"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace glass::distributed {

using protocol::Command;
using protocol::Reader;
using protocol::Status;
using protocol::Writer;

TCPStoreServer::TCPStoreServer(const std::string& host, uint16_t port) {
  sockaddr_in address = resolve_ipv4(host, port);
  // A loopback host means a single-machine job: do not expose the store to the network.
  if (!is_loopback(address)) address.sin_addr.s_addr = htonl(INADDR_ANY);

  listen_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  GLASS_CHECK(listen_.valid(), "TCPStore: cannot create a socket (", std::strerror(errno), ")");
  // SO_REUSEADDR lets a restarted job bind the port its predecessor left in TIME_WAIT; it
  // does not let two live servers share a port (that would take SO_REUSEPORT).
  int one = 1;
  ::setsockopt(listen_.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(listen_.fd(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    int err = errno;
    GLASS_CHECK(false, "TCPStore: cannot listen on ", address_to_string(address), ": ",
                err == EADDRINUSE ? "port in use" : std::strerror(err));
  }
  GLASS_CHECK(::listen(listen_.fd(), SOMAXCONN) == 0, "TCPStore: cannot listen on ",
              address_to_string(address), ": ", std::strerror(errno));
  socklen_t len = sizeof(address);
  ::getsockname(listen_.fd(), reinterpret_cast<sockaddr*>(&address), &len);
  port_ = ntohs(address.sin_port);

  wake_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  GLASS_CHECK(wake_.valid(), "TCPStore: cannot create an eventfd (", std::strerror(errno), ")");
  thread_ = std::thread([this] { run(); });
}

TCPStoreServer::~TCPStoreServer() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_.fd(), &one, sizeof(one));
  thread_.join();
}

int64_t TCPStoreServer::wait_for_count(const std::string& key, int64_t target,
                                       std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(table_mu_);
  auto reached = [&] { return table_.integer(key) >= target; };
  if (timeout < std::chrono::milliseconds::zero())
    table_changed_.wait(lock, reached);
  else
    table_changed_.wait_for(lock, timeout, reached);
  return table_.integer(key);
}

// ---- [SECTION] the loop -------------------------------------------------------------------

void TCPStoreServer::run() {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;  // fds[i + 2] belongs to clients_[ids[i]]
  while (true) {
    fds.assign({{wake_.fd(), POLLIN, 0}, {listen_.fd(), POLLIN, 0}});
    ids.clear();
    for (auto& [id, client] : clients_) {
      short events = client.out.empty() ? POLLIN : short(POLLIN | POLLOUT);
      fds.push_back({client.sock.fd(), events, 0});
      ids.push_back(id);
    }
    int ready = ::poll(fds.data(), fds.size(), poll_timeout());
    if (ready < 0) continue;              // EINTR (or ENOMEM): try again
    if (fds[0].revents & POLLIN) return;  // the destructor asked us to stop
    if (fds[1].revents & POLLIN) accept_clients();
    for (size_t i = 0; i < ids.size(); ++i) {
      Client& client = clients_.at(ids[i]);
      if (fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) read_from(client);
      if (fds[i + 2].revents & POLLOUT) flush(client);
    }
    bool progress = true;
    while (progress) {  // a write may unpark a client that has more frames buffered
      progress = false;
      for (auto& [id, client] : clients_) progress |= process_input(id, client);
      if (reap_closed_clients()) {
        answer_ready_waiters();
        progress = true;
      }
    }
    expire_waiters(std::chrono::steady_clock::now());
    for (auto& [id, client] : clients_) flush(client);
    reap_closed_clients();  // a flush may have found a peer gone
  }
}

void TCPStoreServer::accept_clients() {
  while (true) {
    int fd = ::accept4(listen_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: no more waiting; anything else: retry on the next turn
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    clients_[next_client_id_++].sock.reset(fd);
  }
}

void TCPStoreServer::read_from(Client& client) {
  uint8_t chunk[64 * 1024];
  while (!client.closed) {
    ssize_t n = ::recv(client.sock.fd(), chunk, sizeof(chunk), 0);
    if (n > 0) {
      client.in.insert(client.in.end(), chunk, chunk + n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    } else {
      client.closed = true;  // EOF or a reset
    }
  }
}

bool TCPStoreServer::process_input(uint64_t id, Client& client) {
  bool handled = false;
  size_t pos = 0;
  // A closed client's frames are dropped: our clients wait for each reply, so nothing it
  // sent after its last reply was meant to take effect without one.
  while (!client.parked && !client.closed &&
         client.in.size() - pos >= protocol::kFrameHeaderBytes) {
    uint64_t size = protocol::decode_u64(client.in.data() + pos);
    if (size > protocol::kMaxFrameBytes) {  // not our protocol: drop this client only
      client.closed = true;
      client.in.clear();
      return handled;
    }
    if (client.in.size() - pos - protocol::kFrameHeaderBytes < size) break;
    Reader request(client.in.data() + pos + protocol::kFrameHeaderBytes, size);
    pos += protocol::kFrameHeaderBytes + size;
    handled = true;
    if (handle(id, client, request)) answer_ready_waiters();
  }
  client.in.erase(client.in.begin(), client.in.begin() + static_cast<ptrdiff_t>(pos));
  return handled;
}

// ---- [SECTION] the commands ---------------------------------------------------------------

bool TCPStoreServer::handle(uint64_t id, Client& client, Reader& request) {
  Command command = static_cast<Command>(request.u8());
  bool changed = false;
  Writer out;
  out.u8(uint8_t(Status::OK));
  try {
    std::lock_guard<std::mutex> lock(table_mu_);
    switch (command) {
      case Command::SET: {
        std::string key = request.str();
        Bytes value = request.bytes();
        if (!request.failed()) table_.set(key, value);
        changed = true;
        break;
      }
      case Command::GET:
      case Command::WAIT: {
        std::vector<std::string> keys;
        if (command == Command::GET)
          keys.push_back(request.str());
        else
          keys = request.strs();
        int64_t timeout_ms = request.i64();
        if (request.failed() || !request.at_end()) break;  // closed below
        if (!table_.missing(keys).empty()) {  // park it; answered by a write or the deadline
          // Below zero, or beyond any job's life (and past where time_point would overflow):
          // wait forever.
          constexpr int64_t kForeverMs = int64_t{1} << 40;  // ~35 years
          bool forever = timeout_ms < 0 || timeout_ms > kForeverMs;
          SteadyTime deadline =
              forever ? SteadyTime::max()
                      : std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
          waiters_.push_back({id, command, std::move(keys), deadline});
          client.parked = true;
          return false;
        }
        if (command == Command::GET) out.bytes(*table_.find(keys[0]));
        break;
      }
      case Command::ADD: {
        std::string key = request.str();
        int64_t delta = request.i64();
        if (request.failed()) break;
        out.i64(table_.add(key, delta));
        changed = true;
        break;
      }
      case Command::COMPARE_SET: {
        std::string key = request.str();
        Bytes expected = request.bytes();
        Bytes desired = request.bytes();
        if (request.failed()) break;
        out.bytes(table_.compare_set(key, expected, desired));
        changed = true;
        break;
      }
      case Command::DELETE_KEY: {
        std::string key = request.str();
        if (!request.failed()) out.u8(table_.erase(key) ? 1 : 0);
        break;
      }
      case Command::CHECK: {
        std::vector<std::string> keys = request.strs();
        if (!request.failed()) out.u8(table_.missing(keys).empty() ? 1 : 0);
        break;
      }
      case Command::NUM_KEYS: out.i64(table_.size()); break;
      case Command::PING: break;
      case Command::ON_DISCONNECT: {
        std::string key = request.str();
        Bytes value = request.bytes();
        if (!request.failed()) client.on_disconnect.emplace_back(std::move(key), std::move(value));
        break;
      }
      default:
        out = Writer();
        out.u8(uint8_t(Status::ERROR))
            .str("TCPStore server: unknown command " + std::to_string(int(command)));
        reply(client, std::move(out));
        return false;
    }
  } catch (const std::exception& e) {  // e.g. ADD on a key that holds no integer
    out = Writer();
    out.u8(uint8_t(Status::ERROR)).str(e.what());
    reply(client, std::move(out));
    return false;
  }
  if (request.failed() || !request.at_end()) {
    // A malformed request means the stream is out of step; nothing after it can be trusted.
    client.closed = true;
    return false;
  }
  if (changed) table_changed_.notify_all();
  reply(client, std::move(out));
  return changed;
}

// ---- [SECTION] waiters, replies, disconnects ----------------------------------------------

void TCPStoreServer::reply(Client& client, Writer&& payload) {
  std::vector<uint8_t> frame = std::move(payload).frame();
  client.out.insert(client.out.end(), frame.begin(), frame.end());
  flush(client);
}

void TCPStoreServer::flush(Client& client) {
  size_t sent = 0;
  while (!client.closed && sent < client.out.size()) {
    // MSG_NOSIGNAL: a client that vanished gives EPIPE here, not a SIGPIPE that kills us.
    ssize_t n =
        ::send(client.sock.fd(), client.out.data() + sent, client.out.size() - sent, MSG_NOSIGNAL);
    if (n > 0)
      sent += static_cast<size_t>(n);
    else if (n < 0 && errno == EINTR)
      continue;
    else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;  // POLLOUT resumes
    else
      client.closed = true;
  }
  client.out.erase(client.out.begin(), client.out.begin() + static_cast<ptrdiff_t>(sent));
}

void TCPStoreServer::answer_ready_waiters() {
  std::lock_guard<std::mutex> lock(table_mu_);
  std::erase_if(waiters_, [&](const Waiter& waiter) {
    if (!table_.missing(waiter.keys).empty()) return false;
    Client& client = clients_.at(waiter.client);
    Writer out;
    out.u8(uint8_t(Status::OK));
    if (waiter.command == Command::GET) out.bytes(*table_.find(waiter.keys[0]));
    reply(client, std::move(out));
    client.parked = false;
    return true;
  });
}

void TCPStoreServer::expire_waiters(SteadyTime now) {
  std::lock_guard<std::mutex> lock(table_mu_);
  std::erase_if(waiters_, [&](const Waiter& waiter) {
    if (waiter.deadline > now) return false;
    Client& client = clients_.at(waiter.client);
    Writer out;
    out.u8(uint8_t(Status::TIMED_OUT)).strs(table_.missing(waiter.keys));
    reply(client, std::move(out));
    client.parked = false;
    return true;
  });
}

bool TCPStoreServer::reap_closed_clients() {
  bool wrote = false;
  for (auto it = clients_.begin(); it != clients_.end();) {
    if (!it->second.closed) {
      ++it;
      continue;
    }
    uint64_t id = it->first;
    std::erase_if(waiters_, [id](const Waiter& waiter) { return waiter.client == id; });
    std::lock_guard<std::mutex> lock(table_mu_);
    for (auto& [key, value] : it->second.on_disconnect) table_.set(key, value);
    wrote |= !it->second.on_disconnect.empty();
    it = clients_.erase(it);
  }
  if (wrote) table_changed_.notify_all();
  return wrote;
}

int TCPStoreServer::poll_timeout() const {
  SteadyTime nearest = SteadyTime::max();
  for (const Waiter& waiter : waiters_) nearest = std::min(nearest, waiter.deadline);
  return poll_timeout_ms(nearest);
}

}  // namespace glass::distributed
