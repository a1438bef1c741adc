// status (pvfs-ctl status): what this daemon is, for how long, and its busiest jobs.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> status(Call& c) {
  auto s = c.reply.initStatus();
  s.setKind("mds");
  s.setId(c.mds.id());
  s.setVersion(PVFS_VERSION);
  s.setUptimeMs(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                      c.mds.started())
                    .count());
  c.mds.jobs().fill(s, 100);
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
