// status (pvfs-ctl ping, health): what this daemon is, for how long, its busiest
// jobs, its clock, its requests in progress, its delete backlog and the
// room on its disk.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> status(Call& c) {
  auto s = c.reply.initStatus();
  s.setKind("mds");
  s.setId(c.mds.id());
  s.setVersion(PVFS_VERSION);
  s.setUptimeMs(std::chrono::duration_cast<std::chrono::milliseconds>(c.mds.clock().now() -
                                                                      c.mds.started())
                    .count());
  c.mds.jobs().fill(s, 100);
  s.setUnixMs(std::chrono::duration_cast<std::chrono::milliseconds>(c.mds.clock().wall().time_since_epoch())
                  .count());
  s.setInProgress(static_cast<uint32_t>(c.mds.open_requests().count()));
  s.setOldestRequestMs(
      static_cast<uint64_t>(c.mds.open_requests().oldest_age(std::chrono::steady_clock::now()).count()));
  if (auto orphans = c.mds.orphan_backlog()) s.setOrphans(static_cast<int64_t>(*orphans));
  if (auto free = c.mds.data_free_bytes()) s.setDataFreeBytes(static_cast<int64_t>(*free));
  s.setReserveBytes(c.mds.reserve_bytes());
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
