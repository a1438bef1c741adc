// pvfs-ctl qos: asks the metadata servers of a config, in id order, for the
// QoS coordinator until the delegate answers (setting or clearing a goal,
// or switching the policy, first), and renders what it says as tables or
// JSON. Parsing durations and start times and the rendering are pure;
// qos_call() blocks on the network.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "shared/secret.h"
#include "shared/status.h"

namespace pvfs {

struct QosJobRow {
  std::string job;
  uint64_t runtime_ms = 0;
  int64_t start_unix_ms = 0;  // 0: not started
  uint64_t bytes = 0;         // declared; 0: unknown
  uint64_t elapsed_ms = 0;
  uint64_t projected_ms = 0;  // 0: unknown
  double bound_bps = 0;
  std::string bound_source;
  double throughput_bps = 0;
  uint64_t bytes_done = 0;
  double window_ms = 0;
  bool dedicated = false;
  double loss_ms = 0;
  double cut_ms = 0;
  bool behind = false;
};

struct QosWindowRow {
  std::string kind;
  std::string job;
  int64_t length_ns = 0;
};

struct QosView {
  uint32_t delegate = 0;
  std::string policy;
  uint32_t period_ms = 0;
  uint32_t epoch_ms = 0;
  uint64_t version = 0;
  uint32_t replicas = 0;
  std::vector<uint32_t> servers;
  std::vector<QosJobRow> jobs;
  std::vector<QosWindowRow> windows;
  int64_t plan_start_unix_ns = 0;
};

// What to ask the coordinator.
struct QosAction {
  enum class Kind : uint8_t { status, set, clear, policy } kind = Kind::status;
  std::string job;            // set, clear
  uint64_t runtime_ms = 0;    // set
  int64_t start_unix_ms = 0;  // set; 0: at the job's first I/O
  uint64_t bytes = 0;         // set; 0: unknown
  std::string policy;         // policy
};

// "90s", "10m", "1h30m", "500ms", "2h", or a plain number of seconds.
// invalid_argument for anything else, or 0.
Result<std::chrono::milliseconds> parse_qos_duration(std::string_view text);
// A goal's start: "now", "+DURATION" (from now), seconds since 1970, or
// "YYYY-MM-DDTHH:MM:SS[Z]" in UTC; as Unix milliseconds. invalid_argument
// otherwise.
Result<int64_t> parse_qos_start(std::string_view text, int64_t now_unix_ms);

// Runs `action` on the delegate and returns its view. Tries every [[mds]]
// in id order past those that are unreachable or say they are not the
// delegate. Errors: the last member's (unavailable, timeout,
// access_denied), or the delegate's (invalid_argument, not_found for
// clearing a job without a goal, io).
Result<QosView> qos_call(const Config& config, const Secret& key, std::chrono::milliseconds timeout,
                         const QosAction& action);

std::string render_qos_status(const QosView& view);
std::string render_qos_list(const QosView& view);
std::string render_qos_json(const QosView& view);

}  // namespace pvfs
