// Per-job request counters every daemon keeps (pvfs-ctl jobs): operations
// and bytes read/written, keyed by the job id each request carries.
// Bounded: at most kMaxJobs jobs of at most kMaxJobIdBytes each; past that
// the job idle longest is forgotten. Not thread-safe: owned by the daemon's
// network thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "shared/request_limits.h"
#include "shared/proto/common.capnp.h"

namespace pvfs::rpc {

// The rows of requests that carry no job id (see Exchange::counted_job()).
inline constexpr std::string_view kDaemonsJob = "(daemons)";
inline constexpr std::string_view kNoJob = "(no-job)";

class JobCounters {
 public:
  // How many distinct jobs are kept.
  static constexpr size_t kMaxJobs = 4096;

  JobCounters() = default;
  // Not copyable: by_last_ views the keys of jobs_.
  JobCounters(const JobCounters&) = delete;
  JobCounters& operator=(const JobCounters&) = delete;

  // Counts one request of `job` (empty ids count as kNoJob; ids longer
  // than kMaxJobIdBytes count as their first kMaxJobIdBytes bytes). A job
  // not yet counted, when kMaxJobs are, replaces the one whose last request
  // is the oldest.
  void count(std::string_view job, uint64_t bytes_read, uint64_t bytes_written);
  // Fills a DaemonStatus's job list, busiest (by ops) first, at most `max`.
  void fill(proto::DaemonStatus::Builder status, size_t max) const;
  uint64_t total_requests() const { return total_; }
  // Jobs kept now.
  size_t size() const { return jobs_.size(); }

  struct Job {
    std::string id;
    uint64_t ops = 0, bytes_read = 0, bytes_written = 0;
  };
  // The `max` busiest jobs (by ops; ties by id), busiest first.
  std::vector<Job> busiest(size_t max) const;

 private:
  struct Counts {
    uint64_t ops = 0, bytes_read = 0, bytes_written = 0;
    uint64_t last = 0;  // total_ when last counted: the key in by_last_
  };
  std::map<std::string, Counts, std::less<>> jobs_;
  // Jobs by their last request, oldest first; views of jobs_'s keys (map
  // nodes do not move).
  std::map<uint64_t, std::string_view> by_last_;
  uint64_t total_ = 0;
};

}  // namespace pvfs::rpc
