// This storage server's part in per-job QoS (U-Shape paper, Zhang, Davis,
// Jiang, §3.2): measures each job's requests per epoch (policy/qos's
// LocalityTracker: AvgDist, AvgSize, service time) and how much of them
// its planned window served, reports that to the QoS coordinator on the
// metadata cluster's delegate (mds/qos_host.h) once per period, and
// installs the plan the coordinator hands back in the I/O queue's gate.
// Clock assumption: periods start at the delegate's wall-clock times; the
// agent converts them to this host's steady clock through its own wall
// clock, so the hosts' clocks must agree (NTP or chrony); a skew of s moves
// every window of this server by s against the others'. It talks every
// half period, at a quarter and three quarters into each period (the
// report, then a fetch of the plan the coordinator made from all
// servers' reports at the half). Reports are numbered: one no member
// takes (the delegate paused, failing over, its answer lost) is kept and
// sent again under its number, which the coordinator counts once, so a
// pause costs a job none of the bytes it has done. Finds the delegate by
// asking the members in id order past those that say they are not it. For a job the plan says
// is being profiled (`pvfs-ctl qos profile`), the report also carries each
// epoch's record (AvgDist, AvgSize, bytes, service time), the profile the
// coordinator trains the job's model from; under ushape it does so for
// every job with a goal too, so that the coordinator evaluates the job's
// model on each epoch's locality. Not thread-safe: runs
// on the storage service's network thread.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <asio.hpp>

#include "config/config.h"
#include "policy/qos/locality.h"
#include "policy/qos/client_span.h"
#include "server/io_queue.h"
#include "shared/rpc/peer.h"
#include "shared/secret.h"

namespace pvfs {

class QosAgent {
 public:
  // `queue` must outlive the agent; the agent sets its on_served observer.
  QosAgent(asio::any_io_executor ex, const Config& config, const Secret& key, uint32_t id, IoQueue& queue);
  void start();
  void stop();

  // The job's figures since the last report (for tests and logs): bytes.
  uint64_t pending_bytes(std::string_view job) const;

 private:
  struct Totals {
    uint64_t bytes = 0;
    uint64_t window_bytes = 0;
    uint64_t requests = 0;
    double dist_weighted = 0;  // sum of AvgDist x requests over closed epochs
    double size_weighted = 0;
    uint64_t epoch_requests = 0;
    std::chrono::nanoseconds service{0};
    std::chrono::nanoseconds idle_sum{0};
    uint64_t idle_n = 0;
    std::vector<qos::EpochSample> epochs;  // kept only for a job being profiled or, under ushape, with a goal
    std::map<uint64_t, qos::ClientSpan> clients;  // a job being profiled: the clients' I/O time stamps
  };
  struct Last {
    std::chrono::nanoseconds done{0};
  };
  void served(const IoQueue::Served& s);
  asio::awaitable<void> loop();
  // Sends the reports no member has taken yet, a new one first added when
  // `report` (else, with none waiting, only asks for the plan), and
  // installs the last answer's plan.
  asio::awaitable<void> exchange(bool report);
  // Turns the period's totals into the next numbered report, kept in
  // unsent_ until a member takes it.
  void keep_report();
  // `out` to the delegate, else to each member in turn: the reply of the
  // first that takes it, or null.
  asio::awaitable<std::unique_ptr<rpc::InMessage>> deliver(rpc::OutMessage& out);
  // The plan in a coordinator's reply, into the I/O queue's gate.
  void install(rpc::InMessage& reply);

  // Reports kept while no metadata server takes them: a minute of periods
  // at the default 1 s.
  static constexpr size_t kMaxUnsentReports = 64;

  asio::any_io_executor ex_;
  const Config& config_;
  uint32_t id_;
  IoQueue& queue_;
  qos::LocalityTracker tracker_;
  std::map<std::string, Totals, std::less<>> totals_;  // this period's, not yet in a report
  std::deque<std::unique_ptr<rpc::OutMessage>> unsent_;  // reports no member has taken, oldest first
  uint64_t next_seq_;                                     // starts at the wall clock's ns: grows across restarts
  std::map<std::string, Last, std::less<>> last_;
  std::vector<std::unique_ptr<rpc::Peer>> members_;  // config order
  std::vector<uint32_t> member_ids_;
  std::optional<size_t> delegate_;
  std::set<std::string, std::less<>> profiling_;  // jobs the last plan said are being profiled
  std::set<std::string, std::less<>> goals_;      // jobs the last plan said have a goal
  // Bytes served for each job of goals_ since the period in which this
  // server learned of its goal (added up at each report, off the request
  // path); reported every period while the goal lasts, so that a delegate
  // that takes over knows the job's bytes done (QosJobReport.goalBytes),
  // with the goal's id: a new goal for the job counts from 0.
  struct GoalCount {
    uint64_t id = 0;
    uint64_t bytes = 0;
  };
  std::map<std::string, GoalCount, std::less<>> goal_bytes_;
  std::chrono::steady_clock::time_point last_report_;
  int64_t installed_start_ = 0;
  bool warned_ = false;
  bool dropped_warned_ = false;
  asio::steady_timer timer_;
  bool stopped_ = false;
};

}  // namespace pvfs
