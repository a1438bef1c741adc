#include "shared/rpc/job_counters.h"

#include <algorithm>
#include <vector>

namespace pvfs::rpc {

void JobCounters::count(std::string_view job, uint64_t bytes_read, uint64_t bytes_written) {
  ++total_;
  if (job.empty()) job = kNoJob;
  job = job.substr(0, kMaxJobIdBytes);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) {
    if (jobs_.size() >= kMaxJobs) {
      auto idle = by_last_.begin();
      jobs_.erase(jobs_.find(idle->second));
      by_last_.erase(idle);
    }
    it = jobs_.emplace(std::string(job), Counts{}).first;
  } else {
    by_last_.erase(it->second.last);
  }
  ++it->second.ops;
  it->second.bytes_read += bytes_read;
  it->second.bytes_written += bytes_written;
  it->second.last = total_;
  by_last_.emplace(total_, std::string_view(it->first));
}

std::vector<JobCounters::Job> JobCounters::busiest(size_t max) const {
  std::vector<Job> order;
  order.reserve(jobs_.size());
  for (const auto& [id, c] : jobs_) order.push_back(Job{id, c.ops, c.bytes_read, c.bytes_written});
  // Stable over the map's id order: equal counts stay in id order.
  std::stable_sort(order.begin(), order.end(), [](const Job& a, const Job& b) { return a.ops > b.ops; });
  if (order.size() > max) order.resize(max);
  return order;
}

void JobCounters::fill(proto::DaemonStatus::Builder status, size_t max) const {
  const auto order = busiest(max);
  auto list = status.initJobs(static_cast<unsigned>(order.size()));
  for (size_t i = 0; i < order.size(); ++i) {
    list[i].setJobId(order[i].id);
    list[i].setOps(order[i].ops);
    list[i].setBytesRead(order[i].bytes_read);
    list[i].setBytesWritten(order[i].bytes_written);
  }
  status.setRequests(total_);
}

}  // namespace pvfs::rpc
