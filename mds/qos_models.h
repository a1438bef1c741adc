// The QoS profiles and models every member of the metadata cluster keeps
// (mds/qos_host.h makes them on the delegate): each job's last profiling
// run (policy/qos/training.h's Profile: the storage servers' per-epoch
// records and the run's times) and its trained model (policy/qos/model.h,
// the versioned model file embedded as it is), as one versioned value with
// a text form and a file, `qos-models` in each member's data directory,
// written like `qos-goals` (temporary file, fsync, rename, fsync of the
// directory). Members hand it on with heartbeats only to a peer that holds
// an older version (it is larger than the goals). The higher version wins.
// Pure values except save_models()/load_models(), which do file I/O.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "policy/qos/model.h"
#include "policy/qos/training.h"
#include "shared/status.h"

namespace pvfs::mds {

struct QosModelEntry {
  uint64_t revision = 0;         // the value's version it was trained in (pvfs-ctl qos show: "revision")
  uint64_t samples = 0;          // training set size (profile + synthetic)
  uint64_t profile_samples = 0;  // of those, from the profiling run
  int64_t required_ns = 0;       // the execution time it was trained for
  int64_t trained_unix_ms = 0;
  bool met = false;              // cross-validated error below the threshold
  qos::Model model;
};

struct QosModels {
  uint64_t version = 0;  // 0: nothing ever profiled
  std::map<std::string, qos::Profile, std::less<>> profiles;  // by job
  std::map<std::string, QosModelEntry, std::less<>> models;   // by job
};

// The text form:
//   pvfs-qos-models 1
//   version <n>
//   profile <job> <share> <start_ms> <end_ms> <io_ns> <io_source 0|1|2> <bytes> <dropped> <records> <clients>
//   e <server> <epoch> <requests> <avg_dist> <avg_size> <bytes> <service_ns>      (records lines)
//   c <client, 16 hex digits> <first_ns> <last_ns>                               (clients lines)
//   model <job> <revision> <samples> <profile_samples> <required_ns> <trained_unix_ms> <met 0|1> <lines>
//   <the model file, policy/qos/model.h's serialize()>                           (lines lines)
//   checksum <16 hex digits>      (FNV-1a 64 of every byte before it)
std::string serialize(const QosModels& models);
// corrupt, naming the line (or the job whose embedded model file is
// damaged, with parse_model()'s reason), for anything serialize() would
// not write.
Result<QosModels> parse_models(std::string_view text);

// Errors: io, naming the file.
Status save_models(const std::filesystem::path& path, const QosModels& models);
// The models saved at `path`; empty (version 0) when there is no file.
// Errors: corrupt (see parse_models), io.
Result<QosModels> load_models(const std::filesystem::path& path);

}  // namespace pvfs::mds
