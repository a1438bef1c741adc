// The I/O-step scheduler as the MDS cluster's delegate hosts it: owns the
// pure iosched::Scheduler while this member is the acting delegate, feeds
// it clients' ioStep messages and the clock, and answers pvfs-ctl. A member
// that becomes the delegate starts empty and, for one lease, only gives
// back tokens that clients re-register (a client stops using a token one
// lease after its last renewal, so nothing a former delegate granted can
// still be in use when new grants start). A member that stops being the
// delegate forgets its queues; one that stays the delegate in its own view
// but loses its cluster lease for a while keeps them, answers nothing
// meanwhile, and goes on without a grace if the lapse was shorter than an
// I/O lease. The run-time policy set with pvfs-ctl is shared with the
// members through the heartbeats (MdsCluster::iosched_setting()).
// Not thread-safe: runs on the MDS's network thread.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include <asio.hpp>

#include "mds/cluster/mds_cluster.h"
#include "policy/iosched/scheduler.h"
#include "config/config.h"
#include "shared/metrics/metrics.h"
#include "shared/proto/mds.capnp.h"

namespace pvfs::mds {

class IoschedHost {
 public:
  // `cluster` must outlive the host.
  IoschedHost(asio::io_context& io, const Config& config, MdsCluster& cluster);

  // Starts the timer that expires leases and grants what they free.
  void start();
  void stop();

  // The requests (mds/handlers/iosched_*.cc), each answered into `reply`.
  // Each fails with unavailable, naming the delegate, when this member is
  // not it.
  // ioStep: the client's claims and ends. Errors: invalid_argument for a
  // client key of 0, an empty or overlong job id, too many claims or
  // servers; not_found for an end of a job that has no step this client is
  // in (nothing of the message is applied then); again when the scheduler
  // is full.
  Status io_step(proto::mds::Request::IoStep::Reader req, proto::mds::Reply::Builder reply);
  // ioschedStatus.
  Status status(proto::mds::Reply::Builder reply);
  // ioschedPolicy. Errors: invalid_argument for an unknown policy.
  Status set_policy(std::string_view name, proto::mds::Reply::Builder reply);

  // Per job: summed token wait and I/O time, steps, and the tokens held
  // now (empty unless this member hosts the scheduler).
  void add_metrics(metrics::Families& out) const;

 private:
  // Whether this member hosts the scheduler now; takes over (fresh, in
  // grace) or drops it as the delegate changes.
  bool hosting();
  // Whether new tokens wait for clients to re-register what a former
  // delegate gave them: a lease after taking over, but never under none.
  bool in_grace() const;
  iosched::Nanos now() const;
  Status step(proto::mds::Request::IoStep::Reader req, proto::mds::Reply::IoStepReply::Builder out);
  Status not_delegate() const;
  void fill(proto::mds::Reply::IoschedState::Builder out) const;
  asio::awaitable<void> tick_loop();

  asio::io_context& io_;
  const Config& config_;
  MdsCluster& cluster_;
  iosched::Policy policy_;
  std::optional<iosched::Scheduler> scheduler_;
  TimePoint grace_until_{};
  TimePoint last_acting_{};  // when hosting() last found this member the acting delegate
  bool lapsed_ = false;      // the scheduler is kept through a lapse of the cluster lease
  asio::steady_timer timer_;
  bool stopped_ = false;
};

}  // namespace pvfs::mds
