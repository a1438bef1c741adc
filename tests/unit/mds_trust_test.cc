// What the metadata server trusts: a storage server's registration only for
// an id and address the config lists, and root of a squashed client as
// nobody. Pure functions (mds/server_registry.h, mds/permissions.h).
#include <doctest/doctest.h>

#include "mds/permissions.h"
#include "mds/server_registry.h"

namespace pvfs::mds {

TEST_CASE("a registration must match a configured server's id, host and port") {
  Config config;
  config.servers = {{0, {"10.0.0.10", 7100}, {}}, {3, {"node-b", 0}, {}}};
  CHECK(check_registration(config, 0, {"10.0.0.10", 7100}).ok());
  CHECK(check_registration(config, 0, {"10.0.0.10", 7101}).code() == Errc::not_permitted);
  CHECK(check_registration(config, 0, {"10.0.0.66", 7100}).code() == Errc::not_permitted);
  CHECK(check_registration(config, 1, {"10.0.0.10", 7100}).code() == Errc::not_permitted);
  // Port 0 in the config: the server binds any free port and says which.
  CHECK(check_registration(config, 3, {"node-b", 40123}).ok());
  CHECK(check_registration(config, 3, {"node-c", 40123}).code() == Errc::not_permitted);
  const std::string why = check_registration(config, 0, {"10.0.0.66", 7100}).detail();
  CHECK(why.find("10.0.0.66:7100") != std::string::npos);
  CHECK(why.find("10.0.0.10:7100") != std::string::npos);
}

TEST_CASE("root squash makes uid and gid 0 nobody and leaves everyone else alone") {
  Caller root{0, 0, {0, 5}};
  Caller squashed = squash_root(root);
  CHECK(squashed.uid == kNobody);
  CHECK(squashed.gid == kNobody);
  CHECK(squashed.groups == std::vector<uint32_t>{5});
  Caller user{1000, 100, {100, 0}};
  Caller after = squash_root(user);
  CHECK(after.uid == 1000);
  CHECK(after.gid == 100);
  CHECK(after.groups == std::vector<uint32_t>{100});
  Caller gid_root{1000, 0, {}};
  CHECK(squash_root(gid_root).gid == kNobody);
  CHECK(squash_root(gid_root).uid == 1000);
}

}  // namespace pvfs::mds
