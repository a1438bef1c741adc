// The walk of pvfs-ctl fsck over the real protocol: pages of the files at
// the metadata server and of the objects, fragments and redirect entries on
// each storage server, turned into the plain listings utils/ctl/fsck_check.h
// judges; and the repairs it proposes. Synchronous (each call runs its own
// io_context, one connection per call); not for use inside another
// io_context's thread. Thread-safe: calls share nothing. Every request
// waits as `wait` says (utils/common/call_once.h): pvfs-ctl fsck waits for
// a daemon that says it is busy, up to the config's busy limit.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "config/config.h"
#include "shared/secret.h"
#include "shared/status.h"
#include "utils/common/call_once.h"
#include "utils/ctl/fsck_check.h"

namespace pvfs::fsck {

// Every regular file the metadata server at `mds` has (orphans included),
// asked a page at a time; `on_page(files so far)` runs after each page.
// Errors: those of the connection (unavailable, timeout, access_denied) or
// of the server (not_supported from a server without fsck).
Result<std::vector<File>> scan_files(const Endpoint& mds, const Secret& key, Wait wait,
                                     const std::function<void(size_t)>& on_page = {});

// The number of inodes of every kind the metadata server has (its statfs),
// an upper bound of the files scan_files() will list.
Result<uint64_t> inode_count(const Endpoint& mds, const Secret& key, Wait wait);

// What storage server `id` at `at` lists: its objects, the fragments it
// holds and the redirect entries of the objects it is home to; answered is
// set. Errors: as scan_files().
Result<ServerScan> scan_server(ServerId id, const Endpoint& at, const Secret& key,
                               Wait wait);

// Carries out `finding.repair` (not Repair::none) against the daemons of
// `config`: the storage server finding.server, or for update_size the
// metadata server that owns the file's set (each is asked in turn). create_object first makes sure the object
// is still missing (and makes the server forget any descriptor of a deleted
// file); it fails with exists rather than truncate an object that appeared.
// Errors: not_found when the server is not in the config; those of the
// connection or the daemon.
Status repair(const Finding& finding, const Config& config, const Secret& key, Wait wait);

}  // namespace pvfs::fsck
