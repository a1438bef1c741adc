#include "utils/common/call_once.h"

#include <asio.hpp>

#include "shared/rpc/connection.h"
#include "shared/rpc/run_sync.h"

namespace pvfs {

Result<std::unique_ptr<rpc::InMessage>> call_once(const Endpoint& at, const Secret& key,
                                                  Wait wait, rpc::OutMessage& request) {
  bool reached = false;
  return call_once(at, key, wait, request, reached);
}

Result<std::unique_ptr<rpc::InMessage>> call_once(const Endpoint& at, const Secret& key, Wait wait,
                                                  rpc::OutMessage& request, bool& reached) {
  reached = false;
  return rpc::run_sync([&]() -> asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> {
    auto conn = co_await rpc::Connection::connect(at, key, wait.timeout);
    if (!conn) co_return conn.status();
    reached = true;
    (*conn)->start({});
    auto reply = co_await (*conn)->call(request, {}, wait.timeout, wait.busy_limit);
    (*conn)->close();
    co_return reply;
  }());
}

}  // namespace pvfs
