// The metadata server's metric families: what pvfs-ctl stats and top show
// and /metrics serves, built on request from the counters the service keeps
// (requests by type, inodes, storage servers, jobs). Names and meanings:
// docs/metrics.md. Runs on the network thread.
#include "mds/mds_service.h"

#include <map>

#include <fmt/format.h>

namespace pvfs::mds {

namespace {

using metrics::Type;

constexpr size_t kMaxJobs = 100;  // busiest jobs exported, to bound the series

}  // namespace

std::optional<uint64_t> MdsService::orphan_backlog() {
  uint64_t orphans = 0;
  for (const auto& store : filesets_.stores()) {
    auto o = store->orphan_count();
    if (!o) return std::nullopt;
    orphans += *o;
  }
  return orphans;
}

metrics::Families MdsService::metrics() {
  metrics::Families out;
  requests_.append_to(out, "pvfs_mds");
  const auto now = clock_.now();
  metrics::add_single(out, "pvfs_mds_uptime_seconds", "Seconds since the metadata server started.",
                      Type::gauge, std::chrono::duration<double>(now - started_).count());
  // A failed count (LMDB trouble) leaves the gauge out rather than report
  // a part as the whole.
  uint64_t inodes = 0;
  bool counted = true;
  for (const auto& store : filesets_.stores()) {
    auto n = store->inode_count();
    if (!n) {
      counted = false;
      break;
    }
    inodes += *n;
  }
  if (counted)
    metrics::add_single(out, "pvfs_mds_inodes", "Inodes in the namespace (files, directories, links).",
                        Type::gauge, static_cast<double>(inodes));
  if (auto orphans = orphan_backlog())
    metrics::add_single(out, "pvfs_mds_orphans",
                        "Unlinked files whose objects are not deleted yet (open ones included).",
                        Type::gauge, static_cast<double>(*orphans));
  if (auto free = data_free_bytes())
    metrics::add_single(out, "pvfs_mds_data_free_bytes",
                        "Free space of the disk holding this member's data directory.", Type::gauge,
                        static_cast<double>(*free));
  metrics::add_single(out, "pvfs_mds_refused_no_room_total",
                      "Requests adding to the namespace refused (ENOSPC) for want of room on this member's disk.",
                      Type::counter, static_cast<double>(space_.refused));
  metrics::add_single(out, "pvfs_mds_dir_leases", "Directory leases clients hold on this member now.",
                      Type::gauge, static_cast<double>(dir_leases_.count(now)));
  metrics::add_single(out, "pvfs_mds_dir_lease_grants_total", "Directory leases given (leaseDir).",
                      Type::counter, static_cast<double>(dir_leases_granted_));
  metrics::add_single(out, "pvfs_mds_dir_lease_renewals_total",
                      "Directory leases extended by their holder, without listing the directory again.",
                      Type::counter, static_cast<double>(dir_leases_renewed_));
  metrics::add_single(out, "pvfs_mds_dir_lease_recalls_total",
                      "Directory leases recalled before another client's new name or a file set's move.",
                      Type::counter, static_cast<double>(dir_leases_recalled_));
  metrics::add_single(out, "pvfs_mds_dir_lease_recalls_waited_total",
                      "Recalls the holder did not answer: the new name waited for the lease to end.",
                      Type::counter, static_cast<double>(dir_leases_waited_out_));
  metrics::add_single(out, "pvfs_mds_orphans_reclaimed_total",
                      "Unlinked files whose objects the collector deleted from every server.",
                      Type::counter, static_cast<double>(orphans_reclaimed_));
  metrics::add_single(out, "pvfs_mds_orphan_holds",
                      "Unlinked files kept for a client that has them open, each with a lease.",
                      Type::gauge, static_cast<double>(orphan_holds_.size()));
  metrics::add_single(out, "pvfs_mds_open_files",
                      "Files a client has open, or closed less than an open lease ago (mds_tuning.open_lease_ms).",
                      Type::gauge, static_cast<double>(open_leases_.files()));
  metrics::add_single(out, "pvfs_mds_orphan_holds_lapsed_total",
                      "Unlinked files kept for clients that had them open, deleted once no client renewed a hold.",
                      Type::counter, static_cast<double>(orphan_holds_lapsed_));
  metrics::add_single(out, "pvfs_mds_storage_servers", "Storage servers registered with this MDS.",
                      Type::gauge, static_cast<double>(registry_.all().size()));
  metrics::add_single(out, "pvfs_mds_storage_servers_alive",
                      "Storage servers whose heartbeat arrived within the configured window.", Type::gauge,
                      static_cast<double>(registry_.live(now).size()));
  metrics::add_single(out, "pvfs_mds_filesets", "File sets this MDS serves.", Type::gauge,
                      static_cast<double>(filesets_.size()));

  const auto& map = cluster_.map();
  metrics::add_single(out, "pvfs_mds_map_version", "Version of the ANU map this MDS holds.", Type::gauge,
                      static_cast<double>(map.version()));
  metrics::add_single(out, "pvfs_mds_map_share", "This MDS's share of the map's mapped half.", Type::gauge,
                      map.share(cluster_.self()));
  auto moves = metrics::make_family("pvfs_mds_fileset_moves_total",
                                    "File sets moved to or from this MDS (shipped or taken over).",
                                    Type::counter);
  moves.samples.push_back({{{"direction", "in"}}, static_cast<double>(cluster_.moves_in()), {}});
  moves.samples.push_back({{{"direction", "out"}}, static_cast<double>(cluster_.moves_out()), {}});
  out.push_back(std::move(moves));

  auto syncs = metrics::make_family("pvfs_mds_fsync_syncs_total",
                                    "LMDB syncs of a file set made for clients' fsync and fdatasync "
                                    "(fsyncs that arrive together share one).",
                                    Type::counter);
  for (const auto& [set, n] : fsync_syncs_)
    syncs.samples.push_back({{{"fileset", std::to_string(set)}}, static_cast<double>(n), {}});
  out.push_back(std::move(syncs));
  size_t writing = 0;
  for (const auto& [conn, w] : writers_) writing += w.files.size();
  metrics::add_single(out, "pvfs_mds_files_being_written",
                      "Files clients have said they write and not yet said they stopped.", Type::gauge,
                      static_cast<double>(writing));
  metrics::add_single(out, "pvfs_mds_sizes_reconciled_total",
                      "File sizes grown from the storage servers' data after the writing client's "
                      "connection ended before it published them.",
                      Type::counter, static_cast<double>(sizes_reconciled_));

  auto job_ops = metrics::make_family("pvfs_mds_job_requests_total", "Requests by job (the busiest 100).",
                                      Type::counter);
  for (const auto& j : jobs_.busiest(kMaxJobs))
    job_ops.samples.push_back({{{"job", j.id}}, static_cast<double>(j.ops), {}});
  out.push_back(std::move(job_ops));
  iosched_.add_metrics(out);
  qos_.add_metrics(out);

  metrics::add_single(out, "pvfs_mds_requests_in_progress", "Requests being served now.", Type::gauge,
                      static_cast<double>(open_.count()));
  metrics::add_single(out, "pvfs_mds_oldest_request_seconds",
                      "How long the oldest request in progress has been served (0: none).", Type::gauge,
                      std::chrono::duration<double>(open_.oldest_age(std::chrono::steady_clock::now())).count());
  const health::Verdict verdict = health::judge(health_inputs(), health::Thresholds{});
  metrics::add_single(out, "pvfs_mds_health",
                      "The cluster's health as this MDS sees it: 0 HEALTH_OK, 1 HEALTH_WARN, 2 HEALTH_ERR "
                      "(pvfs-ctl health asks every daemon).",
                      Type::gauge, static_cast<double>(verdict.level));
  auto checks = metrics::make_family("pvfs_mds_health_reasons",
                                     "Reasons for the health level, by check (DAEMON_DOWN, SERVER_FULL, ...).",
                                     Type::gauge);
  std::map<std::string, int> by_check;
  for (const auto& r : verdict.reasons) ++by_check[r.check];
  for (const auto& [check, n] : by_check) checks.samples.push_back({{{"check", check}}, static_cast<double>(n), {}});
  out.push_back(std::move(checks));
  return out;
}

health::Inputs MdsService::health_inputs() {
  health::Inputs in;
  const auto now = clock_.now();
  health::Daemon self;
  self.name = fmt::format("mds{}", id_);
  self.is_mds = true;
  self.reachable = true;
  self.in_progress = open_.count();
  self.oldest_request_ms =
      static_cast<uint64_t>(open_.oldest_age(std::chrono::steady_clock::now()).count());
  in.daemons.push_back(self);
  for (const auto& e : registry_.all()) {
    health::Daemon d;
    d.name = fmt::format("server{}", e.id.value);
    d.address = e.address;
    d.reachable = registry_.is_live(e.id, now);
    d.why = "no heartbeat within heartbeat_timeout_ms";
    in.daemons.push_back(std::move(d));
    in.space.push_back({fmt::format("server{}", e.id.value), e.capacity_bytes, e.free_bytes});
  }
  in.delete_backlog = orphan_backlog();
  if (auto free = data_free_bytes()) in.mds_space.push_back({self.name, *free, reserve_bytes()});
  cluster_.add_health(in);
  return in;
}

}  // namespace pvfs::mds
