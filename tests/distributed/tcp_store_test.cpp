// tests/distributed/tcp_store_test.cpp — TCPStore over loopback: every command's round
// trip, blocking get/wait and their timeouts, concurrent clients (exact sums), binding
// port 0, a port in use, an absent server, a server that starts late, ON_DISCONNECT (a
// destroyed client, a SIGKILLed child process), wait_for_workers, and a server that keeps
// serving when a client misbehaves or vanishes.
//
// Every server binds port 0 and hands port() on; every wait has a timeout; a child process
// is killed and reaped even when an assertion fails, and dies with the test (ChildProcess).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "distributed/child_process.h"
#include "distributed/socket.h"
#include "distributed/tcp_store.h"
#include "distributed/tcp_store_protocol.h"
#include "distributed/test_util.h"

namespace glass::distributed {
namespace {

using testing::bytes;
using testing::error_of;

using std::chrono::milliseconds;
using Bytes = std::vector<uint8_t>;
namespace proto = protocol;

const std::string kHost = "127.0.0.1";

TCPStoreOptions server_options(milliseconds timeout = milliseconds(2000)) {
  TCPStoreOptions opts;
  opts.is_server = true;
  opts.timeout = timeout;
  return opts;
}

TCPStoreOptions client_options(uint16_t port, milliseconds timeout = milliseconds(2000)) {
  TCPStoreOptions opts;
  opts.port = port;
  opts.timeout = timeout;
  return opts;
}

// A socket bound to a free loopback port and not listening: connecting to it is refused,
// and while it lives no one else can take the port.
Socket bound_socket(uint16_t& port) {
  Socket sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address = resolve_ipv4(kHost, 0);
  EXPECT_EQ(::bind(sock.fd(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t len = sizeof(address);
  ::getsockname(sock.fd(), reinterpret_cast<sockaddr*>(&address), &len);
  port = ntohs(address.sin_port);
  return sock;
}

// One raw request frame to the server, bypassing TCPStore (to misbehave on purpose).
void send_frame(int fd, proto::Writer&& w) {
  Bytes frame = std::move(w).frame();
  ASSERT_TRUE(send_all(fd, frame.data(), frame.size()));
}

// Reads one reply frame's payload within a second.
Bytes recv_frame(int fd) {
  auto deadline = std::chrono::steady_clock::now() + milliseconds(1000);
  uint8_t header[proto::kFrameHeaderBytes];
  if (recv_all(fd, header, sizeof(header), deadline) != RecvStatus::kOk) return {};
  Bytes payload(proto::decode_u64(header));
  if (recv_all(fd, payload.data(), payload.size(), deadline) != RecvStatus::kOk) return {};
  return payload;
}

// ---- [SECTION] commands ---------------------------------------------------------------------

TEST(TCPStore, EveryCommandRoundTrips) {
  TCPStore server(kHost, server_options());
  TCPStore client(kHost, client_options(server.port()));
  EXPECT_EQ(server.get_string(TCPStore::kNumWorkersKey), "2");  // both constructions counted

  client.set("text", "hello");
  client.set("binary", Bytes{0, 1, 254, 255, 0});
  EXPECT_EQ(server.get_string("text"), "hello");
  EXPECT_EQ(server.get("binary"), (Bytes{0, 1, 254, 255, 0}));
  client.set("empty", Bytes{});
  EXPECT_EQ(server.get("empty"), Bytes{});

  EXPECT_EQ(client.add("n", 7), 7);
  EXPECT_EQ(server.add("n", -10), -3);
  EXPECT_EQ(client.get_string("n"), "-3");

  EXPECT_EQ(client.compare_set("cas", {}, bytes("a")), bytes("a"));
  EXPECT_EQ(server.compare_set("cas", bytes("a"), bytes("b")), bytes("b"));
  EXPECT_EQ(client.compare_set("cas", bytes("zzz"), bytes("c")), bytes("b"));
  EXPECT_EQ(client.compare_set("absent", bytes("e"), bytes("d")), bytes("e"));

  EXPECT_TRUE(client.check({"text", "binary", "n"}));
  EXPECT_FALSE(client.check({"text", "absent"}));
  EXPECT_EQ(client.num_keys(), 6);  // num_workers, text, binary, empty, n, cas
  EXPECT_TRUE(client.delete_key("text"));
  EXPECT_FALSE(server.delete_key("text"));
  EXPECT_EQ(server.num_keys(), 5);

  std::string big(3 << 20, 'x');  // larger than any socket buffer: partial sends and reads
  big[12345] = 'y';
  client.set("big", big);
  EXPECT_EQ(server.get_string("big"), big);
}

TEST(TCPStore, AddOnTextIsAnErrorAndTheStoreStaysUsable) {
  TCPStore server(kHost, server_options());
  server.set("name", "alice");
  EXPECT_EQ(error_of([&] { server.add("name", 1); }),
            "store: key \"name\" holds \"alice\", which is not an integer (add() keeps "
            "counters as decimal text)");
  EXPECT_EQ(server.add("fine", 1), 1);
}

TEST(TCPStore, GetBlocksUntilAnotherClientSets) {
  TCPStore server(kHost, server_options());
  TCPStore writer(kHost, client_options(server.port()));
  std::string got;
  auto start = std::chrono::steady_clock::now();
  std::thread reader([&] { got = server.get_string("late"); });
  std::this_thread::sleep_for(milliseconds(50));  // let the reader block first
  writer.set("late", "here");
  reader.join();
  EXPECT_EQ(got, "here");
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(50));
}

TEST(TCPStore, OneStoreSharedByThreadsDoesNotBlockASetBehindAGet) {
  TCPStore store(kHost, server_options());
  std::string got;
  std::thread reader([&] { got = store.get_string("k"); });
  std::this_thread::sleep_for(milliseconds(30));
  store.set("k", "v");  // from the same object while the reader's get is in flight
  reader.join();
  EXPECT_EQ(got, "v");
}

TEST(TCPStore, GetAndWaitTimeOutNamingTheKeys) {
  TCPStore server(kHost, server_options(milliseconds(200)));
  const std::string where = "TCPStore at 127.0.0.1:" + std::to_string(server.port());
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { server.get("never"); }),
            where + ": timed out after 200 ms waiting for keys: never");
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, milliseconds(200));
  EXPECT_LT(elapsed, milliseconds(3000));  // bounded, not hung (CI's 2 cores are busy)

  server.set("b", "1");
  EXPECT_EQ(error_of([&] {
              server.wait({"a", "b", "c"}, milliseconds(50));
            }),
            where + ": timed out after 50 ms waiting for keys: a, c");
  // The server answered the timeout, so the connection is still in step.
  server.set("after", "ok");
  EXPECT_EQ(server.get_string("after"), "ok");
  server.wait({"b", "after"}, milliseconds(50));
}

TEST(TCPStore, ConcurrentAddsFromManyClientsSumExactly) {
  TCPStore server(kHost, server_options());
  constexpr int kThreads = 8, kAdds = 100;
  TCPStore shared(kHost, client_options(server.port()));  // half the threads share one client
  std::vector<std::vector<int64_t>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::unique_ptr<TCPStore> own;
      if (t % 2) own = std::make_unique<TCPStore>(kHost, client_options(server.port()));
      TCPStore& store = own ? *own : shared;
      for (int i = 0; i < kAdds; ++i) seen[t].push_back(store.add("sum", 1));
    });
  for (auto& thread : threads) thread.join();
  std::set<int64_t> all;
  for (auto& values : seen) all.insert(values.begin(), values.end());
  EXPECT_EQ(all.size(), size_t(kThreads * kAdds));  // every add saw a distinct total
  EXPECT_EQ(*all.rbegin(), kThreads * kAdds);
  EXPECT_EQ(server.get_string("sum"), std::to_string(kThreads * kAdds));
  EXPECT_EQ(server.get_string(TCPStore::kNumWorkersKey), std::to_string(2 + kThreads / 2));
}

// ---- [SECTION] connecting -------------------------------------------------------------------

TEST(TCPStore, ServerBindsPortZeroAndClientsReachPort) {
  TCPStore server(kHost, server_options());
  EXPECT_NE(server.port(), 0);
  TCPStore client("localhost", client_options(server.port()));
  client.set("via", "localhost");
  EXPECT_EQ(server.get_string("via"), "localhost");
  EXPECT_EQ(client.port(), server.port());
}

TEST(TCPStore, SecondServerOnABoundPortSaysPortInUse) {
  TCPStore server(kHost, server_options());
  TCPStoreOptions opts = server_options();
  opts.port = server.port();
  EXPECT_EQ(
      error_of([&] { TCPStore(kHost, opts); }),
      "TCPStore: cannot listen on 127.0.0.1:" + std::to_string(server.port()) + ": port in use");
}

TEST(TCPStore, ClientWithoutServerFailsWithinItsTimeout) {
  uint16_t port = 0;
  Socket held = bound_socket(port);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { TCPStore(kHost, client_options(port, milliseconds(300))); }),
            "TCPStore: could not connect to 127.0.0.1:" + std::to_string(port) +
                " within 300 ms (connection refused)");
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, milliseconds(300));   // it retried rather than failing at once
  EXPECT_LT(elapsed, milliseconds(3000));  // bounded, not hung (CI's 2 cores are busy)
}

// Sends to a peer that has gone report failure (EPIPE) instead of raising SIGPIPE, which
// would kill the whole process — the server's and every client's sends rely on this.
TEST(TCPStore, SendToAClosedPeerFailsWithoutSIGPIPE) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  Socket mine(pair[0]);
  ::close(pair[1]);
  char data[16] = {};
  errno = 0;
  EXPECT_FALSE(send_all(mine.fd(), data, sizeof(data)));
  EXPECT_EQ(errno, EPIPE);
}

TEST(TCPStore, UnknownHostIsOneClearLine) {
  EXPECT_EQ(error_of([&] {
              TCPStore("no-such-host.invalid", client_options(1, milliseconds(100)));
            }).rfind("TCPStore: cannot resolve host 'no-such-host.invalid'", 0),
            0u);
}

// The client retries while nothing listens; the "server" here is the test itself, which
// starts listening late and answers the client's first request (ADD num_workers) by hand.
TEST(TCPStore, ClientRetriesUntilTheServerListens) {
  uint16_t port = 0;
  Socket listener = bound_socket(port);
  std::atomic<bool> connected{false};
  std::string error;
  std::thread client([&] {
    try {
      TCPStore store(kHost, client_options(port, milliseconds(3000)));
      connected = true;
    } catch (const Error& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(milliseconds(100));  // a few refused attempts first
  ASSERT_EQ(::listen(listener.fd(), 4), 0);
  pollfd pfd{listener.fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 3000), 1);
  Socket peer(::accept(listener.fd(), nullptr, nullptr));
  Bytes request = recv_frame(peer.fd());
  proto::Reader r(request.data(), request.size());
  EXPECT_EQ(proto::Command(r.u8()), proto::Command::ADD);
  EXPECT_EQ(r.str(), TCPStore::kNumWorkersKey);
  EXPECT_EQ(r.i64(), 1);
  send_frame(peer.fd(), std::move(proto::Writer().u8(0).i64(1)));
  client.join();
  EXPECT_TRUE(connected) << error;
}

// ---- [SECTION] ON_DISCONNECT ----------------------------------------------------------------

TEST(TCPStore, OnDisconnectFiresWhenTheClientIsDestroyed) {
  TCPStore server(kHost, server_options());
  {
    TCPStore rank1(kHost, client_options(server.port()));
    rank1.set_on_disconnect("glass/exited/1", "gone");
    rank1.set("alive", "yes");  // its other connections are not the one that fires
    EXPECT_FALSE(server.check({"glass/exited/1"}));
  }
  server.wait({"glass/exited/1"}, milliseconds(2000));
  EXPECT_EQ(server.get_string("glass/exited/1"), "gone");
}

// A child process holds a client, registers ON_DISCONNECT, and is killed with SIGKILL: no
// destructor runs, yet the kernel closes its socket and the server notices. The child is
// the test worker, exec'd (a forked copy of this threaded process could deadlock on a lock
// another thread held at the fork).
TEST(TCPStore, OnDisconnectFiresWhenAChildProcessIsKilled) {
  TCPStore server(kHost, server_options());
  test::ChildProcess child(
      {GLASS_WORKER_PATH, "store_client_until_killed", std::to_string(server.port())});
  ASSERT_TRUE(child.read_out_until(std::regex("ready\n"),
                                   std::chrono::steady_clock::now() + milliseconds(5000)))
      << "the child did not register within 5 s\n"
      << child.output();
  EXPECT_FALSE(server.check({"glass/exited/1"}));
  EXPECT_EQ(server.get_string(TCPStore::kNumWorkersKey), "2");

  ASSERT_EQ(::kill(child.pid(), SIGKILL), 0);
  EXPECT_EQ(child.finish(milliseconds(3000)), std::optional<int>(128 + SIGKILL));
  server.wait({"glass/exited/1"}, milliseconds(2000));
  EXPECT_EQ(server.get_string("glass/exited/1"), "rank 1 died");
}

// ---- [SECTION] wait_for_workers -------------------------------------------------------------

TEST(TCPStore, WaitForWorkersReturnsWhenAllJoined) {
  TCPStoreOptions opts = server_options();
  opts.num_workers = 1;  // itself: the constructor's wait succeeds at once
  TCPStore server(kHost, opts);
  std::vector<std::thread> workers;
  for (int i = 0; i < 3; ++i)
    workers.emplace_back([port = server.port()] {
      TCPStore worker(kHost, client_options(port));
      worker.add("joined", 1);
    });
  server.wait_for_workers(4, milliseconds(3000));
  for (auto& worker : workers) worker.join();
  EXPECT_EQ(server.get_string(TCPStore::kNumWorkersKey), "4");
  EXPECT_EQ(server.get_string("joined"), "3");
}

TEST(TCPStore, WaitForWorkersTimesOutNamingHowManyJoined) {
  TCPStoreOptions opts = server_options(milliseconds(200));
  opts.num_workers = 3;
  auto start = std::chrono::steady_clock::now();
  std::string error = error_of([&] { TCPStore(kHost, opts); });
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(200));
  EXPECT_EQ(error.rfind("TCPStore: only 1 of 3 workers joined the store at 127.0.0.1:", 0), 0u)
      << error;
  EXPECT_NE(error.find(" within 200 ms"), std::string::npos) << error;

  TCPStore server(kHost, server_options());
  TCPStore client(kHost, client_options(server.port()));
  EXPECT_NE(error_of([&] {
              client.wait_for_workers(2, milliseconds(10));
            }).find("only the object that runs the server"),
            std::string::npos);
}

// ---- [SECTION] misbehaving clients ----------------------------------------------------------

TEST(TCPStore, ServerKeepsServingAfterAClientVanishesMidGet) {
  TCPStore server(kHost, server_options());
  {
    Socket raw = connect_with_retry("test", kHost, server.port(), milliseconds(1000));
    send_frame(raw.fd(),
               std::move(proto::Writer().u8(uint8_t(proto::Command::GET)).str("late").i64(-1)));
    std::this_thread::sleep_for(milliseconds(30));  // let the server park the GET
  }  // gone with its GET parked: the server must forget the waiter, not answer a dead peer
  server.set("late", "value");
  EXPECT_EQ(server.get_string("late"), "value");
  EXPECT_EQ(server.add("still", 1), 1);
}

// A client that asks for far more than the socket buffers hold and closes without reading:
// the server holds megabytes of replies for a peer that is gone, and must drop them (the
// connection reset, or EPIPE on a send, whichever it meets first) and carry on.
TEST(TCPStore, ServerSurvivesAClientThatClosesMidReply) {
  TCPStore server(kHost, server_options());
  server.set("big", std::string(1 << 20, 'b'));
  {
    Socket raw = connect_with_retry("test", kHost, server.port(), milliseconds(1000));
    for (int i = 0; i < 32; ++i)  // 32 MiB of replies; no one reads them
      send_frame(raw.fd(),
                 std::move(proto::Writer().u8(uint8_t(proto::Command::GET)).str("big").i64(0)));
    std::this_thread::sleep_for(milliseconds(30));  // let the server fill the socket
  }
  EXPECT_EQ(server.add("still", 1), 1);
  EXPECT_EQ(server.get_string("big").size(), size_t(1) << 20);
}

TEST(TCPStore, ServerAnswersUnknownCommandsAndDropsGarbage) {
  TCPStore server(kHost, server_options());
  Socket raw = connect_with_retry("test", kHost, server.port(), milliseconds(1000));
  send_frame(raw.fd(), std::move(proto::Writer().u8(200)));
  Bytes reply = recv_frame(raw.fd());
  proto::Reader r(reply.data(), reply.size());
  EXPECT_EQ(proto::Status(r.u8()), proto::Status::ERROR);
  EXPECT_EQ(r.str(), "TCPStore server: unknown command 200");

  // A frame that claims 2^62 bytes is not our protocol: that connection is dropped.
  uint8_t huge[8] = {0, 0, 0, 0, 0, 0, 0, 0x40};
  ASSERT_TRUE(send_all(raw.fd(), huge, sizeof(huge)));
  uint8_t byte = 0;
  EXPECT_EQ(recv_all(raw.fd(), &byte, 1, std::chrono::steady_clock::now() + milliseconds(1000)),
            RecvStatus::kClosed);
  server.set("ok", "1");
  EXPECT_EQ(server.get_string("ok"), "1");
}

}  // namespace
}  // namespace glass::distributed
