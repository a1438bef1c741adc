// Daemons and a mount on one host talk over the daemons' local sockets
// (shared/rpc/local_socket.h), not TCP, and everything works as it does over
// TCP; with [network] local_sockets = false they use TCP again. What the
// kernel lists in /proc/net/unix tells which: every connection accepted on
// a local socket shows that socket's abstract name.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "shared/rpc/local_socket.h"
#include "tests/integration/session.h"

namespace pvfs::test {
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
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
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
}

}  // namespace pvfs::test
