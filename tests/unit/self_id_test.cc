// Unit tests of shared/self_id: how a daemon started without --id picks its
// config entry from the entries' resolved addresses and this machine's
// addresses (given as values here), and the error asking for --id when that
// is not exactly one entry.
#include "shared/self_id.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace pvfs {
namespace {

SelfCandidate candidate(uint32_t id, const std::string& host, uint16_t port,
                        std::vector<std::string> resolved) {
  return SelfCandidate{id, Endpoint{host, port}, std::move(resolved)};
}

// Four storage servers on four hosts, as genconfig writes them.
std::vector<SelfCandidate> four_hosts() {
  return {candidate(0, "10.1.0.10", 7100, {"10.1.0.10"}),
          candidate(1, "10.1.0.11", 7100, {"10.1.0.11"}),
          candidate(2, "node12", 7100, {"10.1.0.12", "fd00::12"}),
          candidate(3, "10.1.0.13", 7100, {"10.1.0.13"})};
}

TEST_CASE("the one entry whose host is an address of this machine is chosen") {
  auto id = choose_self_id("server", four_hosts(), {"127.0.0.1", "::1", "10.1.0.11"});
  REQUIRE(id.ok());
  CHECK(*id == 1);
}

TEST_CASE("an entry named by a host name matches any of the addresses it resolves to") {
  auto id = choose_self_id("server", four_hosts(), {"127.0.0.1", "fd00::12"});
  REQUIRE(id.ok());
  CHECK(*id == 2);
}

TEST_CASE("ids are the entries' ids, not their positions") {
  std::vector<SelfCandidate> entries = {candidate(7, "a", 1, {"10.0.0.1"}),
                                        candidate(3, "b", 1, {"10.0.0.2"})};
  auto id = choose_self_id("mds", entries, {"10.0.0.2"});
  REQUIRE(id.ok());
  CHECK(*id == 3);
}

TEST_CASE("no local entry is an error listing every entry and asking for --id") {
  auto entries = four_hosts();
  entries.push_back(candidate(4, "gone.example", 7100, {}));
  auto id = choose_self_id("server", entries, {"127.0.0.1", "192.168.5.5"});
  REQUIRE_FALSE(id.ok());
  CHECK(id.status().code() == Errc::invalid_argument);
  const std::string msg = id.status().detail();
  CAPTURE(msg);
  CHECK(msg.find("no [[server]] entry") != std::string::npos);
  CHECK(msg.find("0=10.1.0.10:7100") != std::string::npos);
  CHECK(msg.find("2=node12:7100") != std::string::npos);
  CHECK(msg.find("4=gone.example:7100 (does not resolve)") != std::string::npos);
  CHECK(msg.find("--id") != std::string::npos);
  CHECK(msg.find('\n') == std::string::npos);
}

TEST_CASE("several local entries (a one-host cluster) is an error naming them") {
  std::vector<SelfCandidate> entries = {candidate(0, "127.0.0.1", 7100, {"127.0.0.1"}),
                                        candidate(1, "10.1.0.11", 7100, {"10.1.0.11"}),
                                        candidate(2, "localhost", 7102, {"127.0.0.1", "::1"})};
  auto id = choose_self_id("server", entries, {"127.0.0.1", "::1"});
  REQUIRE_FALSE(id.ok());
  const std::string msg = id.status().detail();
  CAPTURE(msg);
  CHECK(msg.find("several [[server]] entries") != std::string::npos);
  CHECK(msg.find("0=127.0.0.1:7100") != std::string::npos);
  CHECK(msg.find("2=localhost:7102") != std::string::npos);
  CHECK(msg.find("1=10.1.0.11") == std::string::npos);
  CHECK(msg.find("--id") != std::string::npos);
}

TEST_CASE("an empty section is an error naming it") {
  auto id = choose_self_id("mds", {}, {"127.0.0.1"});
  REQUIRE_FALSE(id.ok());
  CHECK(id.status().detail().find("[[mds]]") != std::string::npos);
}

TEST_CASE("address literals resolve to themselves in canonical form") {
  CHECK(resolve_host("10.1.2.3") == std::vector<std::string>{"10.1.2.3"});
  CHECK(resolve_host("::1") == std::vector<std::string>{"::1"});
  CHECK(resolve_host("0:0:0:0:0:0:0:1") == std::vector<std::string>{"::1"});
  CHECK(resolve_host("no such host .invalid").empty());
}

TEST_CASE("the loopback address is among this machine's addresses") {
  auto local = local_addresses();
  REQUIRE(local.ok());
  CHECK(std::find(local->begin(), local->end(), "127.0.0.1") != local->end());
}

}  // namespace
}  // namespace pvfs
