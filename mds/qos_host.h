// The QoS coordinator as the MDS cluster's delegate hosts it (U-Shape
// paper, Zhang, Davis, Jiang, §3.2): takes goals from pvfs-ctl (and from
// clients' PVFS_QOS_RUNTIME), keeps them through MdsCluster::share_qos()
// (every live member holds a goal before `qos set` answers), gathers each
// storage server's report of the period just ended, and every period_ms,
// at the half of each period of the wall clock, plans the next period's
// service windows with the pure qos::WindowPlanner and hands the plan and
// its start time to the servers in the replies to their reports. A job's
// bound (B_required, §3.2.2) is the `average` baseline's constant, its
// declared bytes over its required time under `average`; under `ushape`,
// for a job with a trained model, the sum over the servers of the model's
// bound for each server's measured locality (§3.2.2), rescaled to the
// goal (mds/qos_host_models.cc, which also runs `qos profile`, `train` and
// `show`); status says which. A member
// that becomes the delegate starts planning from the goals it holds and
// from the next reports; one that stops being it forgets its measurements.
// Not thread-safe: runs on the MDS's network thread.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <asio.hpp>

#include "config/config.h"
#include "mds/cluster/mds_cluster.h"
#include "policy/qos/finish.h"
#include "policy/qos/gate.h"
#include "policy/qos/planner.h"
#include "policy/qos/training.h"
#include "shared/metrics/metrics.h"
#include "shared/proto/mds.capnp.h"

namespace pvfs::mds {

class QosHost {
 public:
  // `cluster` must outlive the host.
  QosHost(asio::io_context& io, const Config& config, MdsCluster& cluster);
  void start();
  void stop();

  // The requests (mds/handlers/qos_*.cc). Each fails with unavailable,
  // naming the delegate, when this member is not it.
  // qosSet. Errors: invalid_argument (bad job id, runtime 0, a start
  // before 1970); io when the goal could not be saved here.
  asio::awaitable<Status> set_goal(proto::mds::Request::QosGoal::Reader req, proto::mds::Reply::Builder reply);
  // qosClear. Errors: not_found for a job without a goal; io.
  asio::awaitable<Status> clear_goal(std::string_view job, proto::mds::Reply::Builder reply);
  // qosStatus.
  Status status(proto::mds::Reply::Builder reply);
  // qosPolicy. Errors: invalid_argument for an unknown policy; io.
  asio::awaitable<Status> set_policy(std::string_view name, proto::mds::Reply::Builder reply);
  // qosReport from a storage server; answered with the plan in force. A
  // numbered report counts once (a server resends one it had no answer to).
  // Errors: invalid_argument for more jobs than kMaxReportJobs.
  Status report(proto::mds::Request::QosReport::Reader req, proto::mds::Reply::Builder reply);

  // qosProfile (mds/qos_host_models.cc). Start: invalid_argument for a bad
  // job id, a share outside 1..100, the policy off (the servers measure
  // nothing then), or another job's run in progress. End: not_found when
  // the job has no run in progress; answers once the servers' last records
  // are in (two periods). io when the profiles could not be saved here.
  asio::awaitable<Status> profile(proto::mds::Request::QosProfileRequest::Reader req,
                                  proto::mds::Reply::Builder reply);
  // qosTrain. Errors: not_found (no profile), invalid_argument (the run
  // has not ended, too few records, a runtime shorter than the profiled
  // run), io.
  asio::awaitable<Status> train(proto::mds::Request::QosTrainRequest::Reader req, proto::mds::Reply::Builder reply);
  // qosShow. Errors: not_found for a job with neither profile nor model.
  Status show(std::string_view job, proto::mds::Reply::Builder reply);

  // Per goal: required, elapsed and projected time, bound, throughput,
  // window, loss (empty unless this member hosts the coordinator).
  void add_metrics(metrics::Families& out) const;

  static constexpr unsigned kMaxReportJobs = 4096;

 private:
  // What the servers reported of one job.
  struct Measured {
    uint64_t bytes = 0;          // this period, all servers
    uint64_t window_bytes = 0;
    uint64_t requests = 0;
    bool queued = false;
    std::chrono::nanoseconds seek{0};   // the largest any server reported
    std::chrono::nanoseconds idle{0};   // mean over the servers that measured one
    int idle_n = 0;
    double model_bound = 0;      // the job's model evaluated on each server's locality, summed
    int model_servers = 0;       // servers that contributed to model_bound
  };
  // What the coordinator keeps of a job with a goal between periods.
  struct Run {
    // Since its start: what this delegate counted, or what the servers
    // have served since they learned of the goal (Run::served), whichever
    // is more; the latter is what a delegate that took over starts from.
    uint64_t bytes_done = 0;
    std::map<uint32_t, uint64_t> served;  // storage server -> its QosJobReport.goalBytes, last heard
    double bound = 0;
    std::string source;
    double throughput = 0;       // last period
    bool model_bound = false;    // `bound` came from the job's model
    // Whether and when it served its declared bytes; its time stops there.
    qos::JobFinish finish;
    QosGoal finish_goal;  // the goal `finish` is for (a new goal starts afresh)
  };
  // Elapsed and projected execution time of a goal's job at `now_ms`, and
  // whether it is behind: once done, its finish; before, time since its
  // start and that time scaled by the bytes left.
  struct Progress {
    uint64_t elapsed_ms = 0;
    uint64_t projected_ms = 0;  // 0: unknown
    uint64_t done_ms = 0;
    bool behind = false;
  };
  Progress progress(const std::string& job, const QosGoal& goal, int64_t now_ms) const;

  bool hosting();
  qos::QosPolicy policy() const;
  Status not_delegate() const;
  int64_t unix_ns() const;
  void reset_planner();
  // Plans the period starting at `start_unix_ns`.
  void plan_next(int64_t start_unix_ns);
  void fill(proto::mds::Reply::QosState::Builder out) const;
  asio::awaitable<void> tick_loop();
  // Waits until every storage server that asked for the plan in the last
  // two periods has been told goals of `version` or later (they ask every
  // half period), at most a period and a half; so a job started after
  // `pvfs-ctl qos set` or `qos policy` returns has all its bytes measured.
  // Returns how many servers were not told in that time.
  asio::awaitable<size_t> servers_told(uint64_t version);
  asio::awaitable<void> told_or_warn(uint64_t version);
  // Saves and hands `next` to every live member; notes how many hold it.
  asio::awaitable<Status> share(QosGoals next);
  // Saves and hands on `next` profiles and models; notes how many hold them.
  asio::awaitable<Status> share_models(QosModels next);
  // The job's bound for the coming period from its model (ushape), into
  // `run`; false when it has no usable model (the caller falls back).
  bool model_bound(const std::string& job, const QosGoal& goal, const Measured& m, Run& run) const;
  // A running profiling run gets a window of its share of every period;
  // the planned windows of the other jobs share the rest (qos::with_profile).
  void plan_profile(const qos::Profile& p);
  // At debug level, one line per period: what the planner was told of
  // each job, and the plan it made.
  void log_period(const std::vector<qos::JobReport>& reports) const;
  // Records the servers sent for jobs being profiled, kept at the next tick.
  asio::awaitable<void> flush_profiles();
  // Whether reports for `job` still go into its profile (a run in progress,
  // or ended less than two and a half periods ago).
  bool collecting(const qos::Profile& p) const;
  void fill_model(std::string_view job, proto::mds::Reply::QosModelState::Builder out) const;

  asio::io_context& io_;
  const Config& config_;
  MdsCluster& cluster_;
  bool hosting_ = false;
  std::optional<qos::WindowPlanner> planner_;
  qos::QosPolicy planner_policy_ = qos::QosPolicy::off;
  std::map<std::string, Measured, std::less<>> period_;  // by job ("" for none), this period so far
  std::map<std::string, Run, std::less<>> runs_;         // jobs with a goal
  std::map<uint32_t, int64_t> servers_;                   // storage server -> last report (unix ns)
  std::map<uint32_t, uint64_t> counted_;                  // storage server -> its last counted report's seq
  // Storage server -> when it last asked for the plan (unix ns) and the
  // version of the goals and policy its answer carried.
  struct Told {
    int64_t at_ns = 0;
    uint64_t version = 0;
  };
  std::map<uint32_t, Told> told_;
  qos::Plan plan_;
  int64_t plan_start_ = 0;                               // unix ns; 0: no plan
  uint32_t replicas_ = 0;
  uint32_t model_replicas_ = 0;
  // What the servers reported of a job being profiled, kept into its
  // profile (and shared with the members) at the next half period.
  struct PendingProfile {
    std::vector<qos::ProfileEpoch> records;
    std::map<uint64_t, qos::ClientSpan> clients;  // by client id
  };
  std::map<std::string, PendingProfile, std::less<>> pending_records_;  // by job
  asio::steady_timer timer_;
  bool stopped_ = false;
};

}  // namespace pvfs::mds
