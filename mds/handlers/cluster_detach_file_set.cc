// detachFileSet: the owner of a file set's root entry removes it (rmdir).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> detach_file_set(Call& c) {
  const FileSetId set(c.req.getDetachFileSet());
  Status detached = c.mds.cluster().detach_request(set);
  // Its root goes next: a client's lease on it would answer "absent" where
  // this member will answer stale (mds/dir_lease_table.h).
  if (detached.ok()) co_await c.mds.recall_fileset_leases(set);
  co_return c.none_or(detached);
}

}  // namespace pvfs::mds::handlers
