// Unit tests of shared/text_format's closest_name: the "did you mean"
// of config keys and pvfs-ctl commands. Pure.
#include "shared/text_format.h"

#include <doctest/doctest.h>

namespace pvfs {

TEST_CASE("a typo is matched to the one name it is close to") {
  const std::vector<std::string_view> keys = {"stripe_size", "stripe_count", "full_percent"};
  CHECK(closest_name("stripe_sise", keys) == "stripe_size");
  CHECK(closest_name("stirpe_size", keys) == "stripe_size");  // two letters swapped: one edit
  CHECK(closest_name("strip_count", keys) == "stripe_count");
  CHECK(closest_name("timeout", {"timeouts", "layout"}) == "timeouts");
  CHECK(closest_name("pnig", {"ping", "jobs", "top"}) == "ping");
}

TEST_CASE("a name far from all, or as close to two, gets no suggestion") {
  CHECK(closest_name("frobnicate", {"layout", "timeouts"}).empty());
  CHECK(closest_name("top", {"tap", "tip"}).empty());  // a tie: either could be meant
  CHECK(closest_name("ab", {"xy"}).empty());           // short names allow one edit only
  CHECK(closest_name("x", {}).empty());
}

}  // namespace pvfs
