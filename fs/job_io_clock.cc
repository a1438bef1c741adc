#include "fs/job_io_clock.h"

#include <map>

namespace pvfs {

uint64_t JobIoClock::total_at(const Job& j, Nanos now) {
  Nanos t = j.total;
  if (j.outstanding > 0 && now > j.busy_since) t += now - j.busy_since;
  return static_cast<uint64_t>(t.count());
}

bool JobIoClock::make_room(Nanos now) {
  std::erase_if(jobs_, [&](const auto& kv) {
    return kv.second.outstanding == 0 && now - kv.second.last_end > kForgetAfter;
  });
  return jobs_.size() < kMaxJobs;
}

std::optional<uint64_t> JobIoClock::begin(std::string_view job, Nanos now) {
  if (job.empty()) return std::nullopt;
  auto it = jobs_.find(job);
  if (it == jobs_.end()) {
    if (jobs_.size() >= kMaxJobs && !make_room(now)) return std::nullopt;
    it = jobs_.emplace(std::string(job), Job{}).first;
  }
  Job& j = it->second;
  if (j.outstanding == 0 && j.last_end.count() > 0 && now > j.last_end && now - j.last_end < kJoinGap)
    j.total += now - j.last_end;
  const uint64_t so_far = total_at(j, now);
  if (j.outstanding++ == 0) j.busy_since = now;
  return so_far;
}

void JobIoClock::end(std::string_view job, Nanos now) {
  auto it = jobs_.find(job);
  if (it == jobs_.end() || it->second.outstanding == 0) return;
  Job& j = it->second;
  if (--j.outstanding == 0) {
    if (now > j.busy_since) j.total += now - j.busy_since;
    j.last_end = now;
  }
}

uint64_t JobIoClock::so_far(std::string_view job, Nanos now) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : total_at(it->second, now);
}

}  // namespace pvfs
