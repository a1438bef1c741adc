// Tests of waiting while busy (shared/rpc/connection.h): real Connections
// over the memory network, a handler that takes longer than the caller's
// timeout, and a link held to stand for a paused or cut-off peer.
// Connection's deadlines run on the steady clock, so these cases wait a
// few hundred milliseconds of real time; they assert outcomes, not times.
#include <algorithm>

#include <doctest/doctest.h>

#include "shared/proto/storage.capnp.h"
#include "shared/rpc/memory_network.h"
#include "tests/inprocess/loop.h"
#include "tests/inprocess/memory_client.h"

namespace pvfs::test::busy_wait_test {
namespace {

using std::chrono::milliseconds;
using Reply = Result<std::unique_ptr<rpc::InMessage>>;

// A server whose every reply takes `serve_for`, as behind a long queue.
struct SlowServer {
  explicit SlowServer(milliseconds serve_for) {
    key.fill(7);
    net.listen(at, rpc::Auth(key, {rpc::Kind::server, 1}),
               [this, serve_for](std::shared_ptr<rpc::Connection> conn,
                                 std::unique_ptr<rpc::InMessage> msg) -> asio::awaitable<void> {
                 asio::steady_timer wait(co_await asio::this_coro::executor, serve_for);
                 asio::error_code ec;
                 co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ec));
                 ++served;
                 rpc::OutMessage out;
                 out.init_body<proto::storage::Reply>().setWritten(7);
                 co_await conn->reply(msg->id(), out);
               });
  }
  std::shared_ptr<rpc::Connection> connect() {
    return connect_client(loop, net, at, key);
  }
  static asio::awaitable<Reply> ask(std::shared_ptr<rpc::Connection> conn, milliseconds timeout,
                                    milliseconds busy_limit, size_t data_bytes = 0) {
    rpc::OutMessage m;
    m.init_body<proto::storage::Request>().setStatus();
    std::vector<std::byte> data(data_bytes);
    co_return co_await conn->call(m, data, timeout, busy_limit);
  }
  Reply call(milliseconds timeout, milliseconds busy_limit) {
    return loop.run(ask(connect(), timeout, busy_limit));
  }

  Loop loop;
  rpc::MemoryNetwork net{loop.io.get_executor()};
  Secret key{};
  Endpoint at{"server-1", 7000};
  int served = 0;
};

}  // namespace

TEST_CASE("a call to a server that says it is busy waits past its timeout, up to the busy limit") {
  SlowServer s(milliseconds(600));  // busy frames every 50 ms for a 200 ms timeout
  Reply reply = s.call(milliseconds(200), milliseconds(10000));
  REQUIRE_MESSAGE(reply.ok(), reply.status().to_string());
  CHECK((*reply)->body<proto::storage::Reply>().getWritten() == 7);
}

TEST_CASE("without a busy limit the same call fails at its timeout") {
  SlowServer s(milliseconds(600));
  Reply reply = s.call(milliseconds(200), milliseconds(0));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == Errc::timeout);
  CHECK(reply.status().detail().find("within 200 ms") != std::string::npos);
}

TEST_CASE("a server busy for longer than the busy limit fails the call, saying so") {
  SlowServer s(milliseconds(1500));
  Reply reply = s.call(milliseconds(200), milliseconds(500));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == Errc::timeout);
  CAPTURE(reply.status().detail());
  CHECK(reply.status().detail().find("busy all along") != std::string::npos);
  CHECK(reply.status().detail().find("500 ms") != std::string::npos);
}

TEST_CASE("a server that falls silent (paused, cut off) fails the call one timeout after its last word") {
  SlowServer s(milliseconds(5000));
  auto conn = s.connect();
  auto reply = s.loop.spawn(SlowServer::ask(conn, milliseconds(200), milliseconds(20000)));
  // Let a few busy frames through, then hold everything coming back.
  const auto until = std::chrono::steady_clock::now() + milliseconds(400);
  s.loop.run_until([&] { return std::chrono::steady_clock::now() > until; });
  s.net.links(s.at).back().hold(rpc::Direction::to_initiator);
  s.loop.run_until([&] { return reply->has_value(); });  // the loop's 30 s guard: well short of 20 s + 5 s
  REQUIRE_FALSE((*reply)->ok());
  CAPTURE((*reply)->status().detail());
  CHECK((*reply)->status().code() == Errc::timeout);
  CHECK((*reply)->status().detail().find("of its last word that it was busy") != std::string::npos);
  CHECK(s.served == 0);
}

TEST_CASE("calls whose sends wait on a busy server that reads no more wait with it") {
  SlowServer s(milliseconds(600));
  auto conn = s.connect();
  // A socket's buffer: once the server stops reading (128 requests in
  // service), the 160 calls' further frames fill it and their sends wait.
  s.net.links(s.at).back().set_capacity(rpc::Direction::to_responder, 4096);
  std::vector<std::shared_ptr<std::optional<Reply>>> replies;
  for (int i = 0; i < 160; ++i)
    replies.push_back(s.loop.spawn(SlowServer::ask(conn, milliseconds(200), milliseconds(10000), 1024)));
  s.loop.run_until([&] {
    return std::all_of(replies.begin(), replies.end(), [](const auto& r) { return r->has_value(); });
  });
  int ok = 0;
  std::string first_failure;
  for (const auto& r : replies) {
    if ((*r)->ok()) ++ok;
    else if (first_failure.empty()) first_failure = (*r)->status().to_string();
  }
  CAPTURE(first_failure);
  CHECK(ok == 160);
  CHECK(s.served == 160);
  CHECK(conn->is_open());
}

TEST_CASE("calls in flight together each time out at their own deadline, the shortest first") {
  SlowServer s(milliseconds(0));
  auto conn = s.connect();
  REQUIRE(s.loop.run(SlowServer::ask(conn, milliseconds(10000), milliseconds(0))).ok());
  // Nothing comes back any more: every call waits for its deadline.
  s.net.links(s.at).back().hold(rpc::Direction::to_initiator);
  auto slow = s.loop.spawn(SlowServer::ask(conn, milliseconds(1500), milliseconds(0)));
  auto quick = s.loop.spawn(SlowServer::ask(conn, milliseconds(200), milliseconds(0)));
  auto middle = s.loop.spawn(SlowServer::ask(conn, milliseconds(700), milliseconds(0)));
  s.loop.run_until([&] { return quick->has_value(); });
  CHECK_FALSE(slow->has_value());
  CHECK_FALSE(middle->has_value());
  s.loop.run_until([&] { return middle->has_value(); });
  CHECK_FALSE(slow->has_value());
  s.loop.run_until([&] { return slow->has_value(); });
  for (auto [reply, within] : {std::pair{quick, "within 200 ms"}, std::pair{middle, "within 700 ms"},
                               std::pair{slow, "within 1500 ms"}}) {
    REQUIRE_FALSE((*reply)->ok());
    CHECK((*reply)->status().code() == Errc::timeout);
    CHECK((*reply)->status().detail().find(within) != std::string::npos);
  }
}

TEST_CASE("a server that answers within the timeout sends no busy frame") {
  SlowServer s(milliseconds(0));
  auto conn = s.connect();
  for (int i = 0; i < 20; ++i) {
    auto reply = s.loop.run(SlowServer::ask(conn, milliseconds(200), milliseconds(10000)));
    REQUIRE(reply.ok());
  }
  auto link = s.net.links(s.at).back();
  link.hold(rpc::Direction::to_initiator);
  // Nothing in service: nothing is sent back during two busy periods.
  const auto until = std::chrono::steady_clock::now() + milliseconds(150);
  s.loop.run_until([&] { return std::chrono::steady_clock::now() > until; });
  CHECK(link.pending(rpc::Direction::to_initiator) == 0);
}

TEST_CASE("a server kept busy by requests it answers within a busy period sends no busy frame") {
  // 400 ms timeouts: a period of 100 ms. Two callers keep a 30 ms request in
  // service at every tick for 600 ms, but none is in service a whole period.
  SlowServer s(milliseconds(30));
  auto conn = s.connect();
  auto link = s.net.links(s.at).back();
  // The first call's bytes include the handshake's; the second's are one reply.
  REQUIRE(s.loop.run(SlowServer::ask(conn, milliseconds(400), milliseconds(10000))).ok());
  const uint64_t before = link.written(rpc::Direction::to_initiator);
  REQUIRE(s.loop.run(SlowServer::ask(conn, milliseconds(400), milliseconds(10000))).ok());
  const uint64_t one_reply = link.written(rpc::Direction::to_initiator) - before;
  auto caller = [&]() -> asio::awaitable<int> {
    int ok = 0;
    for (int i = 0; i < 20; ++i)
      if ((co_await SlowServer::ask(conn, milliseconds(400), milliseconds(10000))).ok()) ++ok;
    co_return ok;
  };
  auto first = s.loop.spawn(caller());
  auto second = s.loop.spawn(caller());
  s.loop.run_until([&] { return first->has_value() && second->has_value(); });
  CHECK(**first + **second == 40);
  // Every byte back is a reply, all alike: no busy frame among them.
  CHECK(link.written(rpc::Direction::to_initiator) == before + 41 * one_reply);
}

}  // namespace pvfs::test::busy_wait_test
