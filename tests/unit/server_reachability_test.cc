// ServerReachability: how patiently a client tries a storage server it
// could not reach. Pure: a manual clock, no sockets.
#include <doctest/doctest.h>

#include "fs/server_reachability.h"

namespace pvfs {
namespace {

using Try = ServerReachability::Try;
using std::chrono::milliseconds;
const ServerReachability::Clock::time_point t0{};

TEST_CASE("a server never found unreachable is tried patiently") {
  ServerReachability r(milliseconds(1000));
  CHECK(r.how(3, t0) == Try::patiently);
}

TEST_CASE("an unreachable server fails calls at once for the quiet time, then gets one attempt per call") {
  ServerReachability r(milliseconds(1000));
  r.unreachable(3, t0);
  CHECK(r.how(3, t0) == Try::not_at_all);
  CHECK(r.how(3, t0 + milliseconds(999)) == Try::not_at_all);
  CHECK(r.how(3, t0 + milliseconds(1000)) == Try::once);
  // Other servers are not affected.
  CHECK(r.how(4, t0) == Try::patiently);
  // A failed attempt starts the quiet time again.
  r.unreachable(3, t0 + milliseconds(1500));
  CHECK(r.how(3, t0 + milliseconds(2000)) == Try::not_at_all);
  CHECK(r.how(3, t0 + milliseconds(2500)) == Try::once);
}

TEST_CASE("a server reached again is tried patiently again") {
  ServerReachability r(milliseconds(1000));
  r.unreachable(3, t0);
  r.reached(3);
  CHECK(r.how(3, t0) == Try::patiently);
}

}  // namespace
}  // namespace pvfs
