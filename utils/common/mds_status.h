// The MDS cluster as one member reports it (mds.capnp Reply.ClusterState),
// as plain values, and asking a member for it over the real protocol: used
// by pvfs-ctl mds and the ANU benchmark (tests/bench/anu_sampler.cc).
// Rendering is in utils/ctl/mds_view.h. mds_cluster_status() is synchronous
// (its own io_context); not for use inside another io_context's thread.
// Thread-safe: calls share nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "shared/secret.h"
#include "shared/status.h"
#include "utils/common/call_once.h"

namespace pvfs {

// One member's measurements over one tuning interval.
struct MdsInterval {
  uint64_t seq = 0;         // interval number since the member started
  double latency_ms = 0;    // mean request latency (0: no requests)
  uint64_t requests = 0;
  // What the delegate tunes with beside the latency (issue 21): requests
  // outstanding at the interval's end and their mean age, the fraction of
  // the interval the member's event loop worked on requests (its CPU time,
  // up to the time one was outstanding; with --slowdown, its virtual
  // server's busy time) and that time per request completed.
  uint64_t backlog = 0;
  double backlog_age_ms = 0;
  double busy = 0;
  double service_ms = 0;
};

struct MdsMemberView {
  uint32_t id = 0;
  std::string address;
  bool alive = false;            // as the answering member sees it
  double share = 0;              // of the mapped half, per the map
  std::vector<uint16_t> file_sets;  // as last reported
  MdsInterval interval;          // its last complete interval
  double slowdown = 1;           // its --slowdown factor (1: none)
};

// One server's part in one tuning step of the delegate.
struct MdsTunedServer {
  uint32_t server = 0;
  double latency_ms = 0;
  std::string decision;  // placement::decision_name()
  double old_share = 0, new_share = 0;
};

struct MdsTuningStep {
  int64_t at_unix_ms = 0;
  double average_ms = 0;
  uint64_t map_version = 0;  // the map it produced (or the unchanged one)
  std::vector<MdsTunedServer> servers;
};

// The `from` of a move its receiver reports: it does not know the sender.
inline constexpr uint32_t kUnknownMember = 0xffffffff;

struct MdsMove {
  uint16_t set = 0;
  uint32_t from = 0, to = 0;  // from: kUnknownMember in a receiver's record
  int64_t at_unix_ms = 0;
  uint64_t bytes = 0;
  uint32_t duration_ms = 0;
  std::string outcome;  // "shipped", "received", "taken over", or the error
};

// What one member answered to clusterStatus.
struct MdsClusterView {
  uint32_t self = 0;
  uint32_t delegate = 0;
  std::string map;        // AnuMap::serialize()
  std::string placement;  // "anu", "hash" or "round-robin"
  std::vector<MdsMemberView> members;
  std::vector<MdsTuningStep> history;  // the delegate's recent steps, oldest first
  std::vector<MdsMove> moves;          // this member's recent moves, oldest first
  bool serving = true;                 // holds its lease (false: fenced, serves nothing)
};

// Asks the metadata server at `at` for its view of the cluster. Errors:
// those of the connection (unavailable, timeout, access_denied), of the
// server, or io for a malformed reply.
Result<MdsClusterView> mds_cluster_status(const Endpoint& at, const Secret& key, Wait wait);

}  // namespace pvfs
