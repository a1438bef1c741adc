// leaseDir: every name in a directory, hashed, and a lease on them that the
// MDS recalls before it adds a name there for another client
// (mds/dir_lease_table.h); or the renewal of such a lease, without the names.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> lease_dir(Call& c) {
  if (c.mds.dir_lease_term().count() == 0)
    co_return Status(Errc::not_supported,
                     "directory leases are off ([mds_tuning] dir_lease_ms = 0, or no room between "
                     "[mds_cluster] lease_ms and dead_after_ms)");
  const auto r = c.req.getLeaseDir();
  const InodeId dir(r.getIno());
  auto s = c.at(dir.value);
  if (!s) co_return s.status();
  if (r.getRenew()) {
    if (!c.mds.dir_lease_renewed(dir, c.conn.get()))
      co_return Status(Errc::not_found, "no lease on this directory to renew");
    c.reply.initDirLease().setTermMs(static_cast<uint32_t>(c.mds.dir_lease_term().count()));
    co_return Status{};
  }
  const NameHashKey key = random_name_hash_key();
  auto names = (*s)->name_hashes(c.caller, dir, key, c.mds.config().dir_lease_max_entries);
  if (!names) co_return names.status();
  if (Status given = c.mds.dir_leased(dir, c.conn); !given.ok()) co_return given;
  auto lease = c.reply.initDirLease();
  lease.setTermMs(static_cast<uint32_t>(c.mds.dir_lease_term().count()));
  lease.setKey(kj::arrayPtr(reinterpret_cast<const kj::byte*>(key.data()), key.size()));
  auto list = lease.initNames(static_cast<unsigned>(names->size()));
  for (unsigned i = 0; i < names->size(); ++i) list.set(i, (*names)[i]);
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
