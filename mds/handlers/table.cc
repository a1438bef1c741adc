// Which handler serves which MDS request.
//
// Adding a request to the MDS:
//   1. its message in shared/proto/mds.capnp, and its file set (if it has
//      one) in rpc::route_of (shared/rpc/mds_route.cc);
//   2. one handler file, mds/handlers/<audience>_<request>.cc (audience:
//      namespace for file system operations, cluster for the members' own
//      messages, admin for tools and storage servers, iosched for jobs' I/O
//      steps, locks for file locks), defining
//      `asio::awaitable<Status> <request>(Call& c)` (see call.h), listed in
//      mds/handlers/meson.build;
//   3. one table entry below: its declaration and its row.
// The envelope (MdsService::handle) does the rest: file set admission, the
// request log, statistics and the one reply. tests/unit/request_tables_test
// fails while a kind of the schema has no entry. More in docs/requests.md.
#include "mds/handlers/table.h"

namespace pvfs::mds::handlers {

// Namespace: what pvfsmount asks on behalf of system calls.
Handler lookup, getattr, setattr, mknod, mkdir, unlink, rmdir, symlink, readlink, rename, link, readdir,
    setxattr, getxattr, listxattr, removexattr, access, open, update_size, sync_file_set, release_orphan,
    hold_orphan, open_files, append_at, lease_dir;
// Cluster: the MDS members' own messages (mds/cluster/).
Handler get_map, peer_ping, set_map, ship_file_set, detach_file_set, cluster_status;
// Administration: pvfs-ctl, pvfs-cluster and the storage servers.
Handler statfs, get_servers, register_server, status, set_layout, get_layout_policy, metrics, set_log_level,
    scan_files, make_file_set;
// Jobs' I/O steps: pvfsmount and pvfs-ctl, on the delegate (mds/iosched_host.h).
Handler io_step, iosched_status, iosched_policy;
// Per-job QoS: pvfs-ctl, pvfsmount and storage servers, on the delegate (mds/qos_host.h).
Handler qos_set, qos_clear, qos_status, qos_policy, qos_report, qos_profile, qos_train, qos_show;
// Locks across clients: pvfsmount and pvfs-ctl, on the owner of the file set (mds/lock_host.h).
Handler lock, lock_status;

namespace {

using R = mp::Request;

constexpr Entry kTable[] = {
    {R::LOOKUP, lookup},
    {R::GETATTR, getattr},
    {R::SETATTR, setattr},
    {.kind = R::MKNOD, .handler = mknod, .needs_room = true},
    {.kind = R::MKDIR, .handler = mkdir, .needs_room = true},
    {R::UNLINK, unlink},
    {R::RMDIR, rmdir},
    {.kind = R::SYMLINK, .handler = symlink, .needs_room = true},
    {R::READLINK, readlink},
    {R::RENAME, rename},
    {.kind = R::LINK, .handler = link, .needs_room = true},
    {R::READDIR, readdir},
    {.kind = R::SETXATTR, .handler = setxattr, .needs_room = true},
    {R::GETXATTR, getxattr},
    {R::LISTXATTR, listxattr},
    {R::REMOVEXATTR, removexattr},
    {R::ACCESS, access},
    {R::OPEN, open},
    {R::UPDATE_SIZE, update_size},
    {R::LEASE_DIR, lease_dir},
    // An fsync waits for the disk, not for this member's load.
    {R::SYNC_FILE_SET, sync_file_set, false},
    {R::RELEASE_ORPHAN, release_orphan},
    {R::HOLD_ORPHAN, hold_orphan},
    {R::OPEN_FILES, open_files},
    {R::APPEND_AT, append_at},

    {R::GET_MAP, get_map},
    {R::PEER_PING, peer_ping},
    {R::SET_MAP, set_map},
    {R::SHIP_FILE_SET, ship_file_set},
    {R::DETACH_FILE_SET, detach_file_set},
    {R::CLUSTER_STATUS, cluster_status},

    {R::STATFS, statfs},
    {R::GET_SERVERS, get_servers},
    {R::REGISTER_SERVER, register_server},
    {R::HEARTBEAT, register_server},
    {R::STATUS, status},
    {R::SET_LAYOUT, set_layout},
    {R::GET_LAYOUT_POLICY, get_layout_policy},
    {R::METRICS, metrics},
    {R::SET_LOG_LEVEL, set_log_level},
    {R::SCAN_FILES, scan_files},
    {.kind = R::MAKE_FILE_SET, .handler = make_file_set, .needs_room = true},

    {R::IO_STEP, io_step},
    {R::IOSCHED_STATUS, iosched_status},
    {R::IOSCHED_POLICY, iosched_policy},

    {R::QOS_SET, qos_set, false},
    {R::QOS_CLEAR, qos_clear, false},
    {R::QOS_STATUS, qos_status, false},
    {R::QOS_POLICY, qos_policy, false},
    {R::QOS_REPORT, qos_report, false},
    {R::QOS_PROFILE, qos_profile, false},
    {R::QOS_TRAIN, qos_train, false},
    {R::QOS_SHOW, qos_show, false},

    // A held F_SETLKW waits for another client, not for this member.
    {R::LOCK, lock, false, false},
    {R::LOCK_STATUS, lock_status, false},
};

}  // namespace

std::span<const Entry> table() { return kTable; }

}  // namespace pvfs::mds::handlers
