// Daemons and a mount on one host talk over the daemons' local sockets
// (shared/rpc/local_socket.h), not TCP, and everything works as it does over
// TCP; with [network] local_sockets = false they use TCP again. What the
// kernel lists in /proc/net/unix tells which: every connection accepted on
// a local socket shows that socket's abstract name. Over a local socket the
// frames' bulk data goes without a tag (shared/rpc/handshake.h); over TCP,
// or when either end encrypts, it keeps one.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "shared/rpc/connection.h"
#include "shared/rpc/local_socket.h"
#include "shared/rpc/run_sync.h"
#include "tests/integration/session.h"

namespace pvfs::test::local_socket_test {
namespace {

namespace fs = std::filesystem;

// Sockets of this host bound to the local socket name of `at` (the
// listener and every connection it accepted).
int sockets_named_for(const Endpoint& at) {
  auto ep = rpc::resolve(at);
  REQUIRE(ep.ok());
  std::string name = rpc::local_socket_name(*ep);
  name[0] = '@';  // how /proc/net/unix shows the abstract namespace
  std::ifstream in("/proc/net/unix");
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.size() >= name.size() && line.compare(line.size() - name.size(), name.size(), name) == 0) ++n;
  return n;
}

// Writes `text` to `file` through the mount and reads it back.
std::string round_trip(const fs::path& file, const std::string& text) {
  {
    std::ofstream out(file, std::ios::binary);
    out << text;
    REQUIRE(out.good());
  }
  return pvfs::test::read_text(file);
}

// How a connection to `to` seals its frames' data, asked with `encrypt`:
// true when the data is tagged.
bool tags_data(const Config& config, const Endpoint& to, bool encrypt) {
  auto key = load_secret(config.secret_file);
  REQUIRE(key.ok());
  auto tagged = rpc::run_sync([&]() -> asio::awaitable<Result<bool>> {
    auto conn = co_await rpc::Connection::connect(to, rpc::Auth(*key, {}, encrypt), std::chrono::seconds(5));
    if (!conn) co_return conn.status();
    const bool out = (*conn)->tags_data();
    (*conn)->close();
    co_return out;
  }());
  REQUIRE_MESSAGE(tagged.ok(), tagged.status().to_string());
  return *tagged;
}

}  // namespace

// Three 1 MiB stripes and more: every one of the two servers holds a part.
const size_t kFileBytes = (size_t{3} << 20) + 12345;

TEST_CASE("a mount on the daemons' host reaches them over their local sockets") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(2), true);
  const std::string text(kFileBytes, 'x');
  CHECK(round_trip(c.mnt() / "f", text) == text);
  // Each daemon's listener, plus at least the mount's connection to it.
  CHECK(sockets_named_for(c.config().mds.at(0).address) >= 2);
  for (const auto& server : c.config().servers) CHECK(sockets_named_for(server.address) >= 2);
  // The data went without a tag, and arrived whole (the check above).
  CHECK_FALSE(tags_data(c.config(), c.config().servers.at(0).address, false));
  CHECK_FALSE(tags_data(c.config(), c.config().mds.at(0).address, false));
  // Asking for encryption brings the tag back.
  CHECK(tags_data(c.config(), c.config().servers.at(0).address, true));
}

TEST_CASE("with [network] local_sockets = false the same mount uses TCP and works") {
  if (skip_without_fuse()) return;
  ClusterOptions options = with_servers(2);
  options.local_sockets = false;
  TestCluster c(options, true);
  const std::string text(kFileBytes, 'y');
  CHECK(round_trip(c.mnt() / "f", text) == text);
  CHECK(sockets_named_for(c.config().mds.at(0).address) == 0);
  for (const auto& server : c.config().servers) CHECK(sockets_named_for(server.address) == 0);
  CHECK(tags_data(c.config(), c.config().servers.at(0).address, false));
}

}  // namespace pvfs::test::local_socket_test
