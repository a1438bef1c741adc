// A job's I/O time on one client: the time during which at least one of its
// data requests (a FUSE read or write) was outstanding on this mount, or
// between two of them less than kJoinGap apart, summed over the mount's
// life. pvfsmount stamps the figure on every data request
// of the job (rpc::Origin::job_io_ns), and the QoS coordinator takes a
// profiling run's I/O time from the stamps the storage servers saw, so the
// run's compute time is known without the job saying it (docs/qos.md,
// "Profiling"). Pure: the caller passes the time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace pvfs {

class JobIoClock {
 public:
  using Nanos = std::chrono::nanoseconds;
  // Jobs tracked at once; past it, jobs idle for kForgetAfter are dropped
  // to make room, and a new job finds none is not timed.
  static constexpr size_t kMaxJobs = 4096;
  static constexpr Nanos kForgetAfter = std::chrono::hours(1);
  // A request that starts less than this after the job's last one ended
  // continues the same I/O: the gap is the kernel copying the next
  // request's data (twice: into its pages, then to pvfsmount) and the
  // program's own time in the system call, which pvfsmount cannot see but
  // the job spends in I/O, not computing. dd writing 1 MiB blocks here
  // left gaps of 1-2 ms (0.65 of dd's time counted with a 1 ms join, 0.98
  // with 10 ms). The price: a program that computes for less than 10 ms
  // between requests has that counted as I/O.
  static constexpr Nanos kJoinGap = std::chrono::milliseconds(10);

  // A data request of `job` starts at `now`: the job's I/O time so far,
  // counting requests outstanding at `now` up to `now`. nullopt for no job
  // ("") or a job that is not timed; end() is then not to be called.
  std::optional<uint64_t> begin(std::string_view job, Nanos now);
  // A request that begin() timed ends at `now`.
  void end(std::string_view job, Nanos now);
  // The job's I/O time up to `now`; 0 for a job not timed.
  uint64_t so_far(std::string_view job, Nanos now) const;
  size_t jobs() const { return jobs_.size(); }

 private:
  struct Job {
    uint32_t outstanding = 0;
    Nanos busy_since{0};  // when outstanding last went from 0 to 1
    Nanos total{0};       // closed busy spans
    Nanos last_end{0};
  };
  static uint64_t total_at(const Job& j, Nanos now);
  bool make_room(Nanos now);

  std::map<std::string, Job, std::less<>> jobs_;
};

}  // namespace pvfs
