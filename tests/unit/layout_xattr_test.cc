// The text form of layouts behind user.pvfs.layout and pvfs-ctl setstripe.
#include <doctest/doctest.h>

#include "fs/layout_xattr.h"

using namespace pvfs;

TEST_CASE("a file layout prints its stripe size, count and servers in object order") {
  Layout layout{1 << 20, {ServerId(3), ServerId(0), ServerId(1)}};
  CHECK(format_layout(layout) == "stripe_size=1048576 stripe_count=3 servers=3,0,1");
}

TEST_CASE("a policy parses back to what was printed") {
  LayoutPolicy policy{4 << 20, 2, {ServerId(5), ServerId(7)}};
  auto parsed = parse_policy(format_policy(policy));
  REQUIRE(parsed.ok());
  CHECK(*parsed == policy);
}

TEST_CASE("missing keys mean the cluster default and keys may come in any order") {
  auto parsed = parse_policy("stripe_count=2");
  REQUIRE(parsed.ok());
  CHECK(parsed->stripe_size == 0);
  CHECK(parsed->stripe_count == 2);
  CHECK(parsed->servers.empty());
  auto reordered = parse_policy("servers=1,2 stripe_size=65536");
  REQUIRE(reordered.ok());
  CHECK(reordered->stripe_size == 65536);
  CHECK(reordered->servers == std::vector<ServerId>{ServerId(1), ServerId(2)});
  auto empty = parse_policy("");
  REQUIRE(empty.ok());
  CHECK(*empty == LayoutPolicy{});
}

TEST_CASE("bad layout text is rejected with a reason naming the bad part") {
  auto unknown = parse_policy("stripe_width=4");
  CHECK(unknown.code() == Errc::invalid_argument);
  CHECK(unknown.status().detail().find("stripe_width") != std::string::npos);
  CHECK(parse_policy("stripe_size=1000").code() == Errc::invalid_argument);  // not 4 KiB-aligned
  CHECK(parse_policy("stripe_count=-1").code() == Errc::invalid_argument);
  CHECK(parse_policy("servers=1,x").code() == Errc::invalid_argument);
  CHECK(parse_policy("stripe_count").code() == Errc::invalid_argument);
  CHECK(parse_policy("stripe_count=1 stripe_count=2").code() == Errc::invalid_argument);
}
