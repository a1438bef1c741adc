// statfs: the bytes of the live storage servers and the inodes of this
// member's file sets (a client adds up the members' inodes).
#include "mds/handlers/call.h"

#include <algorithm>

namespace pvfs::mds::handlers {

asio::awaitable<Status> statfs(Call& c) {
  auto s = c.reply.initStatfs();
  uint64_t total = 0, free = 0;
  auto now_steady = std::chrono::steady_clock::now();
  const ServerRegistry& registry = c.mds.registry();
  for (const auto& e : registry.all()) {
    if (!registry.is_live(e.id, now_steady)) continue;
    total += e.capacity_bytes;
    free += e.free_bytes;
  }
  uint64_t inodes = 0;
  for (const auto& set : c.mds.filesets().stores())
    if (auto n = set->inode_count()) inodes += *n;
  const uint64_t kInodeBudget = uint64_t{1} << 32;  // inode numbers are not the limit
  s.setTotalBytes(total);
  s.setFreeBytes(free);
  s.setTotalInodes(kInodeBudget);
  s.setFreeInodes(kInodeBudget - std::min(kInodeBudget, inodes));
  s.setBlockSize(4096);
  s.setNameMax(255);
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
