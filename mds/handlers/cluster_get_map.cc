// getMap: the newest ANU map this member has.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> get_map(Call& c) {
  c.reply.setMap(c.mds.cluster().map().serialize());
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
