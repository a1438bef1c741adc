// The tools' one-shot call (utils/common/call_once.h) against a real RPC
// server on loopback whose every reply takes longer than the call's
// timeout, as a daemon with a long queue does: with a busy limit the tool
// waits for the answer (pvfs-ctl fsck on a loaded cluster), with a plain
// timeout it fails at the timeout (probes that want a quick answer).
#include <chrono>
#include <thread>

#include <doctest/doctest.h>

#include "shared/proto/storage.capnp.h"
#include "shared/rpc/rpc_server.h"
#include "utils/common/call_once.h"

namespace call_once_test {

namespace {

using std::chrono::milliseconds;

// A server on its own thread whose replies each take `serve_for`.
struct SlowDaemon {
  explicit SlowDaemon(milliseconds serve_for) {
    key.fill(3);
    auto listening = pvfs::rpc::RpcServer::listen(
        io, pvfs::Endpoint{"127.0.0.1", 0}, key,
        [serve_for](std::shared_ptr<pvfs::rpc::Connection> conn,
                    std::unique_ptr<pvfs::rpc::InMessage> msg) -> asio::awaitable<void> {
          asio::steady_timer wait(co_await asio::this_coro::executor, serve_for);
          asio::error_code ec;
          co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ec));
          pvfs::rpc::OutMessage out;
          out.init_body<pvfs::proto::storage::Reply>().setWritten(7);
          co_await conn->reply(msg->id(), out);
        },
        milliseconds(1000), false);
    REQUIRE_MESSAGE(listening.ok(), listening.status().to_string());
    server = std::move(*listening);
    server->start();
    at = pvfs::Endpoint{"127.0.0.1", server->port()};
    thread = std::thread([this] { io.run(); });
  }
  ~SlowDaemon() {
    asio::post(io, [this] { server->stop(); });
    io.stop();
    thread.join();
  }

  pvfs::Result<std::unique_ptr<pvfs::rpc::InMessage>> ask(pvfs::Wait wait) {
    pvfs::rpc::OutMessage request;
    request.init_body<pvfs::proto::storage::Request>().setStatus();
    return pvfs::call_once(at, key, wait, request);
  }

  asio::io_context io;
  pvfs::Secret key{};
  std::unique_ptr<pvfs::rpc::RpcServer> server;
  pvfs::Endpoint at;
  std::thread thread;
};

}  // namespace

TEST_CASE("a tool's call with a busy limit waits for a daemon that says it is busy") {
  SlowDaemon daemon(milliseconds(700));  // busy frames every 50 ms for a 200 ms timeout
  auto reply = daemon.ask(pvfs::Wait(milliseconds(200), milliseconds(10000)));
  REQUIRE_MESSAGE(reply.ok(), reply.status().to_string());
  CHECK((*reply)->body<pvfs::proto::storage::Reply>().getWritten() == 7);
}

TEST_CASE("a tool's call with a plain timeout fails at it, busy or not") {
  SlowDaemon daemon(milliseconds(700));
  auto reply = daemon.ask(milliseconds(200));
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().code() == pvfs::Errc::timeout);
}

}  // namespace call_once_test
