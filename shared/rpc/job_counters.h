// Per-job request counters every daemon keeps (pvfs-ctl jobs): operations
// and bytes read/written, keyed by the job id each request carries.
// Not thread-safe: owned by the daemon's network thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "shared/proto/common.capnp.h"

namespace pvfs::rpc {

class JobCounters {
 public:
  // Counts one request of `job` (empty ids count as "unknown").
  void count(std::string_view job, uint64_t bytes_read, uint64_t bytes_written);
  // Fills a DaemonStatus's job list, busiest (by ops) first, at most `max`.
  void fill(proto::DaemonStatus::Builder status, size_t max) const;
  uint64_t total_requests() const { return total_; }

  struct Job {
    std::string id;
    uint64_t ops = 0, bytes_read = 0, bytes_written = 0;
  };
  // The `max` busiest jobs (by ops; ties by id), busiest first.
  std::vector<Job> busiest(size_t max) const;

 private:
  struct Counts {
    uint64_t ops = 0, bytes_read = 0, bytes_written = 0;
  };
  // Bounded: past kMaxJobs the least busy job is dropped.
  static constexpr size_t kMaxJobs = 4096;
  std::map<std::string, Counts, std::less<>> jobs_;
  uint64_t total_ = 0;
};

}  // namespace pvfs::rpc
