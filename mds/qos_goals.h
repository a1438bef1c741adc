// The per-job QoS goals and the run-time QoS policy as every member of the
// metadata cluster keeps them (mds/qos_host.h uses them on the delegate):
// a versioned value, its text form (sent with each heartbeat, like the
// ANU map) and the file each member keeps it in (`qos-goals` in its data
// directory, written to a temporary file, synced and renamed), so that a
// goal outlives a kill -9 of the delegate (the other members hold it) and
// of the whole cluster (every member's file). The higher version wins.
// Pure values except save_goals()/load_goals(), which do file I/O.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <map>
#include <string>
#include <string_view>

#include "shared/status.h"

namespace pvfs::mds {

struct QosGoal {
  std::string job;             // 1..kMaxJobIdBytes bytes, no whitespace or control characters
  uint64_t runtime_ms = 0;     // the required execution time, > 0
  int64_t start_unix_ms = 0;   // when the clock started; 0: not yet (at the job's first I/O)
  uint64_t bytes = 0;          // the job's declared total I/O; 0: unknown
  // Which goal this is: the goals' version that set it (0: set before
  // goals had ids). A job given a goal again gets a new id, and the
  // storage servers count its bytes afresh (QosPlan.goalIds).
  uint64_t id = 0;
  auto operator<=>(const QosGoal&) const = default;
};

struct QosGoals {
  uint64_t version = 0;        // 0: nothing ever set
  std::string policy;          // "off", "average", "ushape"; "": the configuration's [qos] policy
  std::map<std::string, QosGoal, std::less<>> goals;  // by job
  bool operator==(const QosGoals&) const = default;
};

// invalid_argument, saying why, for a job id that cannot name a goal.
Status check_goal_job(std::string_view job);

// The text form:
//   pvfs-qos-goals 2
//   version <n>
//   policy <name or ->
//   goal <job> <runtime_ms> <start_unix_ms> <bytes> <id>   (one per goal, by job)
//   checksum <16 hex digits>                               (FNV-1a 64 of every byte before it)
// Form 1, without <id>, is still read (ids 0).
std::string serialize(const QosGoals& goals);
// corrupt, naming the line, for anything serialize() would not write
// (in either form).
Result<QosGoals> parse_goals(std::string_view text);

// Writes `goals` to `path` durably (temporary file, fsync, rename, fsync of
// the directory). Errors: io, naming the file.
Status save_goals(const std::filesystem::path& path, const QosGoals& goals);
// Writes `text` to `path` durably, as save_goals() does. Errors: io,
// naming the file.
Status write_durably(const std::filesystem::path& path, std::string_view text);
// The whole of the file at `path`; nullopt when there is none. Errors: io,
// naming the file.
Result<std::optional<std::string>> read_if_exists(const std::filesystem::path& path);

// The goals saved at `path`; empty (version 0) when there is no file.
// Errors: corrupt (see parse_goals), io.
Result<QosGoals> load_goals(const std::filesystem::path& path);

}  // namespace pvfs::mds
