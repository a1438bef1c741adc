#include "utils/common/daemon_probe.h"

#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/convert.h"
#include "utils/common/call_once.h"

namespace pvfs {

namespace {

DaemonReport from_wire(proto::DaemonStatus::Reader s) {
  DaemonReport r;
  r.kind = s.getKind();
  r.id = s.getId();
  r.version = s.getVersion();
  r.uptime_ms = s.getUptimeMs();
  r.requests = s.getRequests();
  for (auto j : s.getJobs())
    r.jobs.push_back({j.getJobId(), j.getOps(), j.getBytesRead(), j.getBytesWritten()});
  r.unix_ms = s.getUnixMs();
  r.in_progress = s.getInProgress();
  r.oldest_request_ms = s.getOldestRequestMs();
  if (s.getOrphans() >= 0) r.orphans = static_cast<uint64_t>(s.getOrphans());
  if (s.getDataFreeBytes() >= 0) r.data_free_bytes = static_cast<uint64_t>(s.getDataFreeBytes());
  r.reserve_bytes = s.getReserveBytes();
  return r;
}

}  // namespace

Result<DaemonReport> probe_daemon(DaemonKind kind, const Endpoint& at, const Secret& key,
                                  std::chrono::milliseconds timeout) {
  return call_once<DaemonReport>(
      at, key, timeout,
      [&](rpc::OutMessage& out) {
        if (kind == DaemonKind::mds) out.init_body<proto::mds::Request>().setStatus();
        else out.init_body<proto::storage::Request>().setStatus();
      },
      [&](rpc::InMessage& reply) -> Result<DaemonReport> {
        if (kind == DaemonKind::mds) return from_wire(reply.body<proto::mds::Reply>().getStatus());
        return from_wire(reply.body<proto::storage::Reply>().getStatus());
      });
}

Result<std::vector<ServerView>> list_servers(const Endpoint& mds, const Secret& key,
                                             std::chrono::milliseconds timeout) {
  return call_once<std::vector<ServerView>>(
      mds, key, timeout, [](rpc::OutMessage& out) { out.init_body<proto::mds::Request>().setGetServers(); },
      [](rpc::InMessage& reply) -> Result<std::vector<ServerView>> {
        std::vector<ServerView> servers;
        for (auto s : reply.body<proto::mds::Reply>().getServers()) {
          const ServerInfo info = rpc::from_wire(s);
          servers.push_back({info.id.value, info.address, info.capacity_bytes, info.free_bytes, info.alive});
        }
        return servers;
      });
}

Result<SchedView> sched_status(const Endpoint& at, const Secret& key,
                               std::chrono::milliseconds timeout) {
  return call_once<SchedView>(
      at, key, timeout, [](rpc::OutMessage& out) { out.init_body<proto::storage::Request>().setSchedStatus(); },
      [](rpc::InMessage& reply) -> Result<SchedView> {
        auto body = reply.body<proto::storage::Reply>();
        if (!body.isSchedStatus()) return Status(Errc::io, "unexpected reply to schedStatus");
        auto s = body.getSchedStatus();
        SchedView v;
        v.server = s.getLoad().getServer();
        v.requests = s.getLoad().getRequests();
        v.bytes = s.getLoad().getBytes();
        v.preassigned = s.getLoad().getPreassigned();
        v.redirect_objects = s.getRedirectObjects();
        v.redirect_entries = s.getRedirectEntries();
        v.fragments = s.getFragments();
        v.fragment_bytes = s.getFragmentBytes();
        v.pulled_bytes = s.getPulledBytes();
        v.pulls = s.getPulls();
        v.redirects = s.getRedirectsRecorded();
        v.fallbacks = s.getFallbacks();
        v.probes = s.getProbes();
        v.gc_pending = s.getGcPending();
        v.delay_factor = s.getDelayFactor();
        v.delay_remaining_ms = s.getDelayRemainingMs();
        for (double p : s.getPreassignProbability()) v.preassign_probability.push_back(p);
        return v;
      });
}

Status inject(const Endpoint& at, const Secret& key, std::chrono::milliseconds timeout,
              double delay_factor, std::chrono::seconds duration) {
  return call_once(at, key, timeout, [&](rpc::OutMessage& out) {
    auto i = out.init_body<proto::storage::Request>().initInject();
    i.setDelayFactor(delay_factor);
    i.setSeconds(static_cast<uint32_t>(duration.count()));
  });
}

Result<ElevatorView> elevator_status(const Endpoint& at, const Secret& key,
                                     std::chrono::milliseconds timeout, const std::string& policy) {
  return call_once<ElevatorView>(
      at, key, timeout,
      [&](rpc::OutMessage& out) { out.init_body<proto::storage::Request>().initElevator().setPolicy(policy); },
      [](rpc::InMessage& reply) -> Result<ElevatorView> {
        auto body = reply.body<proto::storage::Reply>();
        if (!body.isElevator()) return Status(Errc::io, "unexpected reply to elevator");
        auto e = body.getElevator();
        ElevatorView v;
        v.policy = e.getPolicy();
        // Lists longer than the classes we know (a newer server) lose the tail.
        auto per_class = [](auto list, std::array<uint64_t, kElevatorClasses>& to) {
          for (unsigned i = 0; i < list.size() && i < kElevatorClasses; ++i) to[i] = list[i];
        };
        per_class(e.getQueued(), v.queued);
        per_class(e.getInService(), v.in_service);
        per_class(e.getCompleted(), v.completed);
        per_class(e.getP50Us(), v.p50_us);
        per_class(e.getP99Us(), v.p99_us);
        v.objects_queued = e.getObjectsQueued();
        v.dispatches = e.getDispatches();
        v.seeks = e.getSeeks();
        v.dynamic_expiries = e.getDynamicExpiries();
        v.mandatory_expiries = e.getMandatoryExpiries();
        v.expiration_us = e.getExpirationUs();
        for (uint64_t n : e.getDispatchedSizes()) v.dispatched_sizes.push_back(n);
        v.emulated_disk = e.getEmulatedDisk();
        v.emulated_seeks = e.getEmulatedSeeks();
        v.bandwidth = e.getBandwidth();
        return v;
      });
}

}  // namespace pvfs
