// Tests of shared/rpc/memory_network: real Connections (handshake, seals,
// frames) between a client and a handler in one process, and the faults a
// test can put on them: held, dropped and cut traffic, refused connects.
#include <algorithm>

#include <doctest/doctest.h>

#include "shared/proto/storage.capnp.h"
#include "shared/rpc/memory_network.h"
#include "shared/rpc/peer.h"
#include "tests/inprocess/loop.h"
#include "tests/inprocess/memory_client.h"

namespace pvfs::test::memory_network_test {
namespace {

using rpc::Direction;

struct Net {
  Net() {
    key.fill(5);
    net.listen(at, rpc::Auth(key, {rpc::Kind::server, 1}),
               [this](std::shared_ptr<rpc::Connection> conn, std::unique_ptr<rpc::InMessage> msg)
                   -> asio::awaitable<void> {
                 ++served;
                 seen_from = conn->peer_address();
                 rpc::OutMessage out;
                 out.init_body<proto::storage::Reply>().setWritten(msg->data().size());
                 co_await conn->reply(msg->id(), out);
               });
  }
  std::shared_ptr<rpc::Connection> connect() {
    return connect_client(loop, net, at, key);
  }
  using Reply = Result<std::unique_ptr<rpc::InMessage>>;
  static asio::awaitable<Reply> ask(std::shared_ptr<rpc::Connection> conn, std::vector<std::byte> data) {
    rpc::OutMessage m;
    m.init_body<proto::storage::Request>().setStatus();
    co_return co_await conn->call(m, data, std::chrono::seconds(30));
  }
  std::shared_ptr<std::optional<Reply>> send(const std::shared_ptr<rpc::Connection>& conn, size_t bytes = 10) {
    return loop.spawn(ask(conn, std::vector<std::byte>(bytes)));
  }

  Loop loop;
  rpc::MemoryNetwork net{loop.io.get_executor()};
  Secret key{};
  Endpoint at{"server-1", 7000};
  int served = 0;
  std::string seen_from;
};

}  // namespace

TEST_CASE("a call through the memory network reaches the handler and its reply comes back") {
  Net n;
  n.net.set_source_address("127.0.0.9");
  auto conn = n.connect();
  auto reply = n.send(conn, 1234);
  n.loop.run_until([&] { return reply->has_value(); });
  REQUIRE((*reply)->ok());
  CHECK((***reply)->body<proto::storage::Reply>().getWritten() == 1234);
  CHECK(n.seen_from == "127.0.0.9");
}

TEST_CASE("a small frame that has arrived whole is taken in one read, and frames sent together in one") {
  Net n;
  auto conn = n.connect();
  auto link = n.net.links(n.at).back();
  auto first = n.send(conn, 4096);  // a 4 KiB write: header, message, data and tag
  n.loop.run_until([&] { return first->has_value(); });
  REQUIRE((*first)->ok());
  const uint64_t before = link.reads(Direction::to_responder);
  auto one = n.send(conn, 4096);
  n.loop.run_until([&] { return one->has_value(); });
  REQUIRE((*one)->ok());
  CHECK(link.reads(Direction::to_responder) - before == 1);

  link.hold(Direction::to_responder);
  std::vector<std::shared_ptr<std::optional<Net::Reply>>> replies;
  for (int i = 0; i < 20; ++i) replies.push_back(n.send(conn, 100));
  n.loop.settle();
  const uint64_t held_from = link.reads(Direction::to_responder);
  link.release(Direction::to_responder);
  n.loop.run_until([&] { return std::ranges::all_of(replies, [](auto& r) { return r->has_value(); }); });
  for (auto& r : replies) CHECK((*r)->ok());
  CHECK(link.reads(Direction::to_responder) - held_from == 1);
}

TEST_CASE("frames arrive whole however the stream cuts them") {
  // Sizes around the read-ahead (16 KiB) and the largest data read with
  // its message (64 KiB); every frame's tag covers its bytes, so one put
  // in the wrong place fails the seal and closes the connection.
  const std::vector<size_t> sizes{0, 1, 7, 4096, 16 * 1024 - 200, 16 * 1024, 16 * 1024 + 9, 65536, 65537, 200000};
  for (size_t cut : {size_t{0}, size_t{3}, size_t{5000}}) {
    CAPTURE(cut);
    Net n;
    auto conn = n.connect();
    auto link = n.net.links(n.at).back();
    link.set_capacity(Direction::to_responder, cut);
    link.set_capacity(Direction::to_initiator, cut);
    std::vector<std::shared_ptr<std::optional<Net::Reply>>> replies;
    for (int round = 0; round < (cut == 0 ? 3 : 1); ++round)
      for (size_t bytes : sizes) replies.push_back(n.send(conn, bytes));
    n.loop.run_until([&] { return std::ranges::all_of(replies, [](auto& r) { return r->has_value(); }); });
    for (size_t i = 0; i < replies.size(); ++i) {
      CAPTURE(i);
      REQUIRE((*replies[i])->ok());
      CHECK((***replies[i])->body<proto::storage::Reply>().getWritten() == sizes[i % sizes.size()]);
    }
    CHECK(conn->is_open());
  }
}

TEST_CASE("a held reply arrives only when released") {
  Net n;
  auto conn = n.connect();
  auto link = n.net.links(n.at).back();
  link.hold(Direction::to_initiator);
  auto reply = n.send(conn);
  n.loop.settle();
  CHECK(n.served == 1);
  CHECK_FALSE(reply->has_value());
  CHECK(link.pending(Direction::to_initiator) > 0);
  link.release(Direction::to_initiator);
  n.loop.run_until([&] { return reply->has_value(); });
  CHECK((*reply)->ok());
}

TEST_CASE("a dropped frame fails the seal of the next one and closes the connection") {
  Net n;
  auto conn = n.connect();
  n.net.links(n.at).back().drop(Direction::to_responder, 1);
  auto lost = n.send(conn);
  auto next = n.send(conn);
  n.loop.run_until([&] { return lost->has_value() && next->has_value(); });
  CHECK_FALSE((*lost)->ok());
  CHECK_FALSE((*next)->ok());
  CHECK(n.served == 0);
  CHECK_FALSE(conn->is_open());
}

TEST_CASE("a cut fails the calls in flight, and a new connection works") {
  Net n;
  auto conn = n.connect();
  auto link = n.net.links(n.at).back();
  link.hold(Direction::to_responder);
  auto reply = n.send(conn);
  n.loop.settle();
  n.net.cut(n.at);
  n.loop.run_until([&] { return reply->has_value(); });
  CHECK((*reply)->status().code() == Errc::unavailable);
  CHECK(n.served == 0);
  auto again = n.send(n.connect());
  n.loop.run_until([&] { return again->has_value(); });
  CHECK((*again)->ok());
}

TEST_CASE("connects are refused while an endpoint refuses or listens no more, and a wrong secret is denied") {
  Net n;
  const rpc::Auth client(n.key, {rpc::Kind::client, 0});
  n.net.refuse(n.at, true);
  CHECK(n.loop.run(n.net.connect(n.at, client, std::chrono::seconds(30))).status().code() == Errc::unavailable);
  n.net.refuse(n.at, false);
  Secret wrong{};
  wrong.fill(6);
  CHECK(n.loop.run(n.net.connect(n.at, rpc::Auth(wrong, {rpc::Kind::client, 0}), std::chrono::seconds(30)))
            .status()
            .code() == Errc::access_denied);
  n.net.unlisten(n.at);
  CHECK(n.loop.run(n.net.connect(n.at, client, std::chrono::seconds(30))).status().code() == Errc::unavailable);
}

// A peer that is paused: every connect hangs until the test lets it time
// out. Counts the attempts.
class PausedNetwork final : public rpc::Network {
 public:
  explicit PausedNetwork(asio::any_io_executor ex) : timer_(ex, rpc::Clock::time_point::max()) {}
  asio::awaitable<Result<std::shared_ptr<rpc::Connection>>> connect(const Endpoint& to, const rpc::Auth&,
                                                                     std::chrono::milliseconds) override {
    ++attempts;
    asio::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    co_return Status(Errc::timeout, "handshake with " + to.to_string() + " timed out");
  }
  void time_out() { timer_.cancel(); }
  int attempts = 0;

 private:
  asio::steady_timer timer_;
};

TEST_CASE("callers waiting on a peer's connect get its failure, and do not queue a connect each") {
  // Found with a paused metadata server: each waiter started its own
  // connect after the one it waited on failed, so N callers waited N
  // connect timeouts in a row, and every call to that peer outlived its
  // deadline.
  Loop loop;
  PausedNetwork paused(loop.io.get_executor());
  Secret key{};
  rpc::Peer peer(loop.io.get_executor(), Endpoint{"mds-2", 7000}, rpc::Auth(key, {rpc::Kind::client, 0}),
                 std::chrono::seconds(3), paused);
  std::vector<std::shared_ptr<std::optional<Result<std::shared_ptr<rpc::Connection>>>>> callers;
  for (int i = 0; i < 5; ++i) callers.push_back(loop.spawn(peer.connection()));
  loop.settle();
  CHECK(paused.attempts == 1);
  paused.time_out();
  loop.run_until([&] {
    return std::all_of(callers.begin(), callers.end(), [](const auto& c) { return c->has_value(); });
  });
  for (const auto& c : callers) CHECK((*c)->status().code() == Errc::timeout);
  CHECK(paused.attempts == 1);
}

}  // namespace pvfs::test::memory_network_test
