// setMap: the delegate distributes a new map.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> set_map(Call& c) {
  co_return c.none_or(c.mds.cluster().take_map(text(c.req.getSetMap())));
}

}  // namespace pvfs::mds::handlers
