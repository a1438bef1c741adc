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
  bool promoted = false;      // dedicated because it fell behind in the shared window
  double loss_ms = 0;
  double cut_ms = 0;
  bool behind = false;
  uint64_t done_ms = 0;       // served its declared bytes this long after its start; 0: not done
};

// The status table's last column for a job: "BEHIND" while it runs behind
// its goal; once done, "met" or "MISSED"; else empty.
std::string qos_verdict(const QosJobRow& j);

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

// A job's profiling run and model (pvfs-ctl qos profile, train, show).
struct QosModelView {
  std::string job;
  uint64_t version = 0;        // of the profiles and models the metadata cluster keeps
  uint32_t replicas = 0;
  bool has_profile = false;
  bool profiling = false;      // the run has not ended
  uint32_t share_pct = 0;
  int64_t start_unix_ms = 0;
  int64_t end_unix_ms = 0;
  int64_t profile_ns = 0;      // T_profile
  int64_t comp_ns = 0;         // T_comp
  bool io_from_job = false;
  bool io_from_clients = false;  // else, without io_from_job, the busiest server's
  uint32_t clients = 0;          // that timed the job's requests
  uint64_t records = 0;
  uint64_t dropped = 0;
  uint64_t profile_bytes = 0;
  bool has_model = false;
  uint64_t revision = 0;
  uint32_t format_version = 0;
  uint32_t depth = 0;
  uint32_t leaves = 0;
  uint32_t nodes = 0;
  double cv_error = 0;
  bool met = false;
  uint64_t samples = 0;
  uint64_t profile_samples = 0;
  double alpha = 0;
  int64_t required_ns = 0;
  int64_t trained_unix_ms = 0;
  std::string model;           // the model file
};

struct QosModelAction {
  enum class Kind : uint8_t { profile, profile_end, train, show } kind = Kind::show;
  std::string job;
  uint32_t share_pct = 0;      // profile; 0: 100
  uint64_t io_time_ns = 0;     // profile_end; 0: the servers' measure
  uint64_t runtime_ms = 0;     // train; 0: the goal's, or the profiled time
};

// Runs `action` on the delegate, as qos_call() does. Errors: as qos_call()'s,
// not_found for a job without profile (train) or without either (show).
Result<QosModelView> qos_model_call(const Config& config, const Secret& key, std::chrono::milliseconds timeout,
                                    const QosModelAction& action);
// `qos show`'s text: the profile (start, share, times, records) and the
// model (revision, file format version, depth, leaves, CV error, training
// set size, alpha). Ends with a newline.
std::string render_qos_model(const QosModelView& view);
std::string render_qos_model_json(const QosModelView& view);

std::string render_qos_status(const QosView& view);
std::string render_qos_list(const QosView& view);
std::string render_qos_json(const QosView& view);

}  // namespace pvfs
