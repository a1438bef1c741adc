// ServerRegistry: which storage servers count as alive, and which of those
// may take objects of new files (full ones are left out unless all are).
#include "mds/server_registry.h"

#include <doctest/doctest.h>

namespace pvfs::mds {
namespace {

using namespace std::chrono_literals;
using TimePoint = ServerRegistry::TimePoint;

constexpr uint64_t kGiB = uint64_t{1} << 30;

ServerRegistry::Entry server(uint32_t id, uint64_t capacity, uint64_t free) {
  return {ServerId(id), "127.0.0.1:" + std::to_string(7100 + id), capacity, free, {}};
}

std::vector<ServerId> server_ids(std::initializer_list<uint32_t> values) {
  std::vector<ServerId> out;
  for (uint32_t v : values) out.push_back(ServerId(v));
  return out;
}

}  // namespace

TEST_CASE("servers at or above the fullness threshold get no new files") {
  ServerRegistry r(5000ms);
  const TimePoint t0{};
  r.heard_from(server(0, 100 * kGiB, 50 * kGiB), t0);
  r.heard_from(server(1, 100 * kGiB, 5 * kGiB), t0);   // 95% full
  r.heard_from(server(2, 100 * kGiB, 6 * kGiB), t0);   // 94% full
  r.heard_from(server(3, 100 * kGiB, 0), t0);          // full
  r.heard_from(server(4, 0, 0), t0);                   // reported no capacity
  CHECK(r.with_room(t0, 95) == server_ids({0, 2, 4}));
  CHECK(r.with_room(t0, 100) == server_ids({0, 1, 2, 4}));
  CHECK(r.with_room(t0, 50) == server_ids({4}));
  // A heartbeat with more free space brings a server back.
  r.heard_from(server(3, 100 * kGiB, 40 * kGiB), t0 + 1s);
  CHECK(r.with_room(t0 + 1s, 95) == server_ids({0, 2, 3, 4}));
}

TEST_CASE("only live servers have room, and when all live ones are full all of them are used") {
  ServerRegistry r(5000ms);
  const TimePoint t0{};
  r.heard_from(server(0, 100 * kGiB, 1 * kGiB), t0 + 10s);
  r.heard_from(server(1, 100 * kGiB, 2 * kGiB), t0 + 10s);
  r.heard_from(server(2, 100 * kGiB, 90 * kGiB), t0);  // silent since t0
  CHECK(r.live(t0 + 10s) == server_ids({0, 1}));
  CHECK(r.with_room(t0 + 10s, 95) == server_ids({0, 1}));
  // A free count above the capacity (a racy statvfs) is not "more than empty".
  r.heard_from(server(2, 10 * kGiB, 20 * kGiB), t0 + 10s);
  CHECK(r.with_room(t0 + 10s, 95) == server_ids({2}));
  CHECK(ServerRegistry(5000ms).with_room(t0, 95).empty());
}

}  // namespace pvfs::mds
