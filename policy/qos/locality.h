// Request locality of each job at one storage server, per epoch: the
// U-Shape paper's AvgDist and AvgSize (Zhang, Davis, Jiang, §3.1) and the
// job's throughput while it was being served (B_profile). Pure: the driver
// tells it what the disk served and when; no clock, no I/O. Driven by the
// storage service (profiling and run time) and by pvfs-sim. Not
// thread-safe: owned by the executor that completes disk operations.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "shared/ids.h"

namespace pvfs::qos {

using Nanos = std::chrono::nanoseconds;

// The per-server logical block address the locality metrics are computed
// over. A storage server keeps objects as files of a local file system and
// cannot see where their blocks are; the model gives every object its own
// extent of a 2^64-byte address space: 2^kExtentBits bytes (1 TiB) at
// slot(object) << kExtentBits, where slot is a 24-bit mix of the object id
// that we own (stable across restarts and hosts). Offset `o` of an object
// is at its extent's base + o (offsets past 1 TiB wrap inside the extent).
// So two requests of one object are as far apart as their offsets, and
// requests of two objects are far apart (a different file on disk: a long
// seek), which is what the metrics need to tell sequential, local and
// scattered access apart. Two objects may share a slot (1 in 2^24): they
// then look closer than they are, which only blurs the metric.
inline constexpr int kExtentBits = 40;
uint64_t object_slot(ObjectId object);
uint64_t object_lba(ObjectId object, uint64_t offset);

// One job's requests served by one server in one epoch.
struct EpochSample {
  std::string job;
  int64_t epoch = 0;        // epoch index; it covers [epoch * length, (epoch + 1) * length)
  uint64_t requests = 0;    // > 0
  // Mean of |LBA_i - (LBA_{i-1} + S_{i-1})| over the job's consecutive
  // requests in service order. §3.1 writes the signed difference; a job
  // going back and forth between two regions would then average to 0 and
  // look sequential, so we take the distance's magnitude. The first
  // request of an epoch is measured against the job's last request of an
  // earlier epoch (§3.1 skips it), so an epoch with one scattered request
  // is not taken for a sequential one; the job's very first request has no
  // predecessor and is left out (0 when it is the only one).
  double avg_dist_bytes = 0;
  double avg_size_bytes = 0;
  uint64_t bytes = 0;
  // §3.1's sum of ServTime_i: each request counts from its arrival, or
  // from the completion of the job's previous request at this server if
  // that was later, to its completion. For one request at a time this is
  // arrival to completion; for several in flight it is the time the job
  // had work at this server (its own requests queued behind each other are
  // not counted twice).
  Nanos service{0};

  // B_profile of §3.1: bytes per second of service; 0 when service is 0.
  double throughput() const;
};

class LocalityTracker {
 public:
  // `epoch` > 0 (checked); the paper's default is 100 ms.
  explicit LocalityTracker(Nanos epoch);

  // A request of `job` at [lba, lba + length), length > 0 (checked),
  // arrived at `arrival` and completed at `done` >= arrival (checked).
  // Calls must come in completion order (`done` not decreasing, checked);
  // the request counts in the epoch of its completion.
  void record(std::string_view job, uint64_t lba, uint64_t length, Nanos arrival, Nanos done);

  // The samples of every epoch that ended at or before `now` and had a
  // request, ordered by epoch then job; they are forgotten here. A job
  // with no request in an epoch has no sample for it.
  std::vector<EpochSample> close(Nanos now);

  // Forgets `job` (its open epoch and its last position).
  void forget(std::string_view job);

  Nanos epoch_length() const { return epoch_; }
  int64_t epoch_of(Nanos t) const { return t.count() / epoch_.count(); }

 private:
  struct Open {
    int64_t epoch = 0;
    uint64_t requests = 0;
    uint64_t distances = 0;  // requests that had a predecessor
    double dist_sum = 0;
    uint64_t bytes = 0;
    Nanos service{0};
  };
  struct Job {
    bool has_last = false;
    uint64_t last_end = 0;  // LBA just past the last request
    Nanos last_done{0};
    bool open = false;
    Open current;
  };
  static EpochSample sample_of(const std::string& job, const Open& open);

  Nanos epoch_;
  Nanos last_done_{0};
  std::map<std::string, Job, std::less<>> jobs_;
  std::vector<EpochSample> closed_;
};

}  // namespace pvfs::qos
