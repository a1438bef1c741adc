// Asks every daemon of a config what pvfs-ctl health judges (policy/health):
// each daemon's status (reachable, clock, requests in progress, delete
// backlog), the storage servers' space from a metadata server, and each
// reachable member's view of the MDS cluster (fenced, file sets held).
// Used by pvfs-ctl health and pvfs-cluster status. Blocking: the daemons
// are asked in parallel, so it takes about one `timeout` when some are
// silent. Thread-safe: calls share nothing.
#pragma once

#include <chrono>

#include "config/config.h"
#include "policy/health/health.h"
#include "shared/secret.h"

namespace pvfs {

// The inputs of health::judge() for the cluster of `config`. A daemon that
// does not answer within `timeout` is unreachable, with the error as why.
health::Inputs gather_health(const Config& config, const Secret& key, std::chrono::milliseconds timeout);

}  // namespace pvfs
