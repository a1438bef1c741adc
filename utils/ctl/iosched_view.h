// pvfs-ctl iosched: asks the metadata servers of a config, in id order, for
// the I/O-step scheduler until the delegate answers (optionally switching
// its policy first), and renders what it says as tables or JSON. The
// rendering is pure; iosched_status() blocks on the network.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "shared/secret.h"
#include "shared/status.h"

namespace pvfs {

struct IoStepRow {
  std::string job;
  uint64_t bytes = 0;  // declared or predicted; 0: unknown
  std::string source;  // declared, predicted, unknown
  std::vector<uint32_t> servers;  // empty: all
  uint64_t wait_ms = 0;
  uint64_t running_ms = 0;
  uint64_t bytes_written = 0;
  uint32_t holders = 0;
  bool starved = false;
};

struct IoJobRow {
  std::string job;
  uint64_t steps = 0;
  uint64_t wait_ms = 0;
  uint64_t io_ms = 0;
  uint64_t bytes_written = 0;
};

struct IoschedView {
  uint32_t delegate = 0;
  std::string policy;
  uint32_t lease_ms = 0;
  double max_wait_s = 0;
  uint32_t grace_ms = 0;
  uint32_t gather_ms = 0;
  std::vector<IoStepRow> active;
  std::vector<IoStepRow> pending;
  std::vector<IoJobRow> jobs;
};

// The scheduler as the delegate sees it, after switching it to `policy`
// (empty: only report). Tries every [[mds]] in id order past those that
// are unreachable or say they are not the delegate. Errors: the last
// member's (unavailable, timeout, access_denied), or the delegate's
// (invalid_argument for an unknown policy).
Result<IoschedView> iosched_status(const Config& config, const Secret& key, std::chrono::milliseconds timeout,
                                   const std::string& policy = {});

std::string render_iosched(const IoschedView& view);
std::string render_iosched_json(const IoschedView& view);

}  // namespace pvfs
