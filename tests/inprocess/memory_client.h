// Test support for in-process tests: a client connection over a
// MemoryNetwork, handshake done and reading started, or a test failure.
#pragma once

#include <chrono>
#include <memory>

#include <doctest/doctest.h>

#include "shared/rpc/memory_network.h"
#include "tests/inprocess/loop.h"

namespace pvfs::test {

inline std::shared_ptr<rpc::Connection> connect_client(Loop& loop, rpc::MemoryNetwork& net, const Endpoint& at,
                                                       const Secret& key) {
  auto conn = loop.run(net.connect(at, rpc::Auth(key, {rpc::Kind::client, 0}), std::chrono::seconds(30)));
  REQUIRE_MESSAGE(conn.ok(), conn.status().to_string());
  (*conn)->start({});
  return *conn;
}

}  // namespace pvfs::test
