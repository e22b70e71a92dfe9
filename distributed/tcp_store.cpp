// distributed/tcp_store.cpp — TCPStore's client side, and the server it may own.
//
// Each call is one request frame and one reply frame (tcp_store_protocol.h) on a connection
// leased from a small pool: a thread that blocks in get() holds its own connection, so
// another thread sharing this store (a group's communication thread and the user's thread)
// is not held up behind it. ON_DISCONNECT registrations ride on one more connection that
// only they use and that stays open as long as this object, so a failed request — whose
// connection is closed, since its state is then unknown — never fires them by mistake.
#include "distributed/tcp_store.h"

#include <cstring>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "distributed/socket.h"
#include "distributed/tcp_store_protocol.h"
#include "distributed/tcp_store_server.h"

namespace glass::distributed {

using protocol::Command;
using protocol::Reader;
using protocol::Status;
using protocol::Writer;

namespace {

// How long past its own timeout a GET or WAIT waits for the server's TIMED_OUT reply before
// deciding the server itself is gone or stuck.
constexpr std::chrono::milliseconds kReplyGrace{5000};

SteadyTime deadline_after(std::chrono::milliseconds timeout) {
  if (timeout < std::chrono::milliseconds::zero()) return SteadyTime::max();
  return std::chrono::steady_clock::now() + timeout;
}

std::string quoted(const std::vector<std::string>& keys) {
  std::string text;
  for (size_t i = 0; i < keys.size(); ++i) text += (i ? ", \"" : "\"") + keys[i] + "\"";
  return text;
}

}  // namespace

struct TCPStore::Connection {
  std::string host;
  uint16_t port;
  std::chrono::milliseconds connect_timeout;  // the timeout at construction, for every socket

  std::mutex pool_mu;
  std::vector<Socket> idle;  // connected, no request in flight

  std::mutex keeper_mu;
  Socket keeper;  // carries ON_DISCONNECT registrations only

  std::string where() const { return host + ":" + std::to_string(port); }

  Socket lease() {
    {
      std::lock_guard<std::mutex> lock(pool_mu);
      if (!idle.empty()) {
        Socket sock = std::move(idle.back());
        idle.pop_back();
        return sock;
      }
    }
    return connect_with_retry("TCPStore", host, port, connect_timeout);
  }

  void give_back(Socket sock) {
    std::lock_guard<std::mutex> lock(pool_mu);
    idle.push_back(std::move(sock));
  }

  // Sends one request on `sock` and returns the reply's payload. On any failure the caller
  // drops `sock`: with a request or a reply half-way, the stream is out of step.
  std::vector<uint8_t> exchange(Socket& sock, Writer&& request, SteadyTime deadline,
                                const std::string& what) {
    std::vector<uint8_t> frame = std::move(request).frame();
    GLASS_CHECK(send_all(sock.fd(), frame.data(), frame.size()),
                "TCPStore: lost the connection to ", where(), " while sending ", what, " (",
                std::strerror(errno), ")");
    uint8_t header[protocol::kFrameHeaderBytes];
    RecvStatus status = recv_all(sock.fd(), header, sizeof(header), deadline);
    uint64_t size = status == RecvStatus::kOk ? protocol::decode_u64(header) : 0;
    GLASS_CHECK(size <= protocol::kMaxFrameBytes, "TCPStore: the reply from ", where(), " to ",
                what, " claims ", size, " bytes: this is not a TCPStore server");
    std::vector<uint8_t> payload(size);
    if (status == RecvStatus::kOk) status = recv_all(sock.fd(), payload.data(), size, deadline);
    GLASS_CHECK(status != RecvStatus::kClosed, "TCPStore: the server at ", where(),
                " closed the connection during ", what, " (has the process hosting it exited?)");
    GLASS_CHECK(status != RecvStatus::kTimedOut, "TCPStore: no reply from ", where(), " to ", what,
                " in time; this connection is closed (is the server process stuck?)");
    GLASS_CHECK(status == RecvStatus::kOk, "TCPStore: lost the connection to ", where(), " during ",
                what, " (", std::strerror(errno), ")");
    return payload;
  }

  // One call on a leased connection; the connection returns to the pool only if the
  // exchange completed. `wait_timeout` names the timeout in a TIMED_OUT error.
  std::vector<uint8_t> call(Writer&& request, SteadyTime deadline, const std::string& what,
                            std::chrono::milliseconds wait_timeout) {
    Socket sock = lease();
    std::vector<uint8_t> payload = exchange(sock, std::move(request), deadline, what);
    give_back(std::move(sock));
    Reader reply(payload.data(), payload.size());
    auto status = static_cast<Status>(reply.u8());
    if (status == Status::TIMED_OUT) {
      std::vector<std::string> missing = reply.strs();
      GLASS_CHECK(false, store_timeout_message("TCPStore at " + where(), wait_timeout, missing));
    }
    GLASS_CHECK(status != Status::ERROR, reply.str());
    GLASS_CHECK(status == Status::OK && !reply.failed(), "TCPStore: a malformed reply from ",
                where(), " to ", what);
    payload.erase(payload.begin());  // the status byte: what is left is the results
    return payload;
  }
};

TCPStore::TCPStore(std::string host, const TCPStoreOptions& opts)
    : Store(opts.timeout), host_(std::move(host)), port_(opts.port) {
  if (opts.is_server) {
    server_ = std::make_unique<TCPStoreServer>(host_, opts.port);
    port_ = server_->port();
  }
  conn_ = std::make_unique<Connection>();
  conn_->host = host_;
  conn_->port = port_;
  conn_->connect_timeout = opts.timeout;
  add(kNumWorkersKey, 1);
  if (server_ && opts.num_workers && opts.wait_for_workers)
    wait_for_workers(*opts.num_workers, opts.timeout);
}

// conn_ is declared after server_, so it closes first: our own connection ends (its
// ON_DISCONNECT writes land) before the server thread stops.
TCPStore::~TCPStore() = default;

namespace {

// Reads the results of one reply; a short or long payload means client and server disagree.
template <class F>
auto decode(const std::vector<uint8_t>& payload, const std::string& what, F&& read) {
  Reader reply(payload.data(), payload.size());
  auto result = read(reply);
  GLASS_CHECK(!reply.failed() && reply.at_end(), "TCPStore: a malformed reply to ", what);
  return result;
}

}  // namespace

void TCPStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  std::string what = "SET " + quoted({key});
  conn_->call(std::move(Writer().u8(uint8_t(Command::SET)).str(key).bytes(value)),
              deadline_after(timeout_), what, timeout_);
}

std::vector<uint8_t> TCPStore::get(const std::string& key) {
  std::string what = "GET " + quoted({key});
  auto payload =
      conn_->call(std::move(Writer().u8(uint8_t(Command::GET)).str(key).i64(timeout_.count())),
                  deadline_after(timeout_ < timeout_.zero() ? timeout_ : timeout_ + kReplyGrace),
                  what, timeout_);
  return decode(payload, what, [](Reader& r) { return r.bytes(); });
}

int64_t TCPStore::add(const std::string& key, int64_t value) {
  std::string what = "ADD " + quoted({key});
  auto payload = conn_->call(std::move(Writer().u8(uint8_t(Command::ADD)).str(key).i64(value)),
                             deadline_after(timeout_), what, timeout_);
  return decode(payload, what, [](Reader& r) { return r.i64(); });
}

std::vector<uint8_t> TCPStore::compare_set(const std::string& key,
                                           const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) {
  std::string what = "COMPARE_SET " + quoted({key});
  auto payload = conn_->call(
      std::move(Writer().u8(uint8_t(Command::COMPARE_SET)).str(key).bytes(expected).bytes(desired)),
      deadline_after(timeout_), what, timeout_);
  return decode(payload, what, [](Reader& r) { return r.bytes(); });
}

bool TCPStore::delete_key(const std::string& key) {
  std::string what = "DELETE_KEY " + quoted({key});
  auto payload = conn_->call(std::move(Writer().u8(uint8_t(Command::DELETE_KEY)).str(key)),
                             deadline_after(timeout_), what, timeout_);
  return decode(payload, what, [](Reader& r) { return r.u8() != 0; });
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  std::string what = "CHECK " + quoted(keys);
  auto payload = conn_->call(std::move(Writer().u8(uint8_t(Command::CHECK)).strs(keys)),
                             deadline_after(timeout_), what, timeout_);
  return decode(payload, what, [](Reader& r) { return r.u8() != 0; });
}

void TCPStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::string what = "WAIT " + quoted(keys);
  auto payload = conn_->call(
      std::move(Writer().u8(uint8_t(Command::WAIT)).strs(keys).i64(timeout.count())),
      deadline_after(timeout < timeout.zero() ? timeout : timeout + kReplyGrace), what, timeout);
  decode(payload, what, [](Reader&) { return 0; });
}

int64_t TCPStore::num_keys() {
  auto payload = conn_->call(std::move(Writer().u8(uint8_t(Command::NUM_KEYS))),
                             deadline_after(timeout_), "NUM_KEYS", timeout_);
  return decode(payload, "NUM_KEYS", [](Reader& r) { return r.i64(); });
}

void TCPStore::set_on_disconnect(const std::string& key, const std::string& value) {
  std::string what = "ON_DISCONNECT " + quoted({key});
  std::lock_guard<std::mutex> lock(conn_->keeper_mu);
  if (!conn_->keeper.valid())
    conn_->keeper = connect_with_retry("TCPStore", host_, port_, timeout_);
  std::vector<uint8_t> payload;
  try {
    payload = conn_->exchange(
        conn_->keeper, std::move(Writer().u8(uint8_t(Command::ON_DISCONNECT)).str(key).str(value)),
        deadline_after(timeout_), what);
  } catch (...) {
    conn_->keeper.reset();  // out of step: closing it fires what it registered, as a death would
    throw;
  }
  Reader reply(payload.data(), payload.size());
  GLASS_CHECK(static_cast<Status>(reply.u8()) == Status::OK && reply.at_end(),
              "TCPStore: the server at ", conn_->where(), " refused ", what);
}

void TCPStore::wait_for_workers(int num_workers, std::chrono::milliseconds timeout) {
  GLASS_CHECK(server_ != nullptr, "TCPStore::wait_for_workers(): only the object that runs the ",
              "server (is_server = true) can wait for workers; this one is a client of ", host_,
              ":", port_);
  int64_t joined = server_->wait_for_count(kNumWorkersKey, num_workers, timeout);
  GLASS_CHECK(joined >= num_workers, "TCPStore: only ", joined, " of ", num_workers,
              " workers joined the store at ", host_, ":", port_, " within ", timeout.count(),
              " ms");
}

}  // namespace glass::distributed
