// The storage server's metric families: what pvfs-ctl stats and top show
// and /metrics serves, built on request from the counters the service
// keeps (requests by type, load, elevator, two-choice scheduling, jobs).
// Names and meanings: docs/metrics.md. Runs on the network thread.
#include <string>

#include "server/storage_service.h"

namespace pvfs {

namespace {

using metrics::Type;

constexpr size_t kMaxJobs = 100;  // busiest jobs exported, to bound the series

double seconds(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e9; }

}  // namespace

metrics::Families StorageService::metrics() {
  metrics::Families out;
  requests_.append_to(out, "pvfs_server");
  metrics::add_single(out, "pvfs_server_uptime_seconds", "Seconds since the server started.", Type::gauge,
                      seconds(clock_.now() - started_));
  metrics::add_single(out, "pvfs_server_requests_in_progress", "Requests being served now.", Type::gauge,
                      static_cast<double>(open_.count()));
  metrics::add_single(out, "pvfs_server_oldest_request_seconds",
                      "How long the oldest request in progress has been served (0: none).", Type::gauge,
                      seconds(open_.oldest_age(std::chrono::steady_clock::now())));

  preassign_.expire(now());
  metrics::add_single(out, "pvfs_server_load_requests", "Data requests outstanding (the two-choice load).",
                      Type::gauge, load_.requests());
  metrics::add_single(out, "pvfs_server_load_bytes", "Bytes of the data requests outstanding.", Type::gauge,
                      static_cast<double>(load_.bytes()));
  metrics::add_single(out, "pvfs_server_preassigned_bytes",
                      "Expected bytes of probes not yet followed by a write (preassign).", Type::gauge,
                      static_cast<double>(preassign_.preassigned_bytes()));

  const auto e = io_.stats();
  auto queued = metrics::make_family("pvfs_server_elevator_queued",
                                     "Requests waiting in the elevator, by class.", Type::gauge);
  auto in_service = metrics::make_family("pvfs_server_elevator_in_service",
                                         "Requests dispatched to the disk, not yet done, by class.", Type::gauge);
  auto completed = metrics::make_family("pvfs_server_elevator_completed_total",
                                        "Requests the elevator completed, by class.", Type::counter);
  auto p50 = metrics::make_family("pvfs_server_elevator_service_p50_seconds",
                                  "Median time from arrival in the elevator to completion, by class.",
                                  Type::gauge);
  auto p99 = metrics::make_family("pvfs_server_elevator_service_p99_seconds",
                                  "99th percentile of that time, by class.", Type::gauge);
  for (unsigned i = 0; i < elevator::kClasses; ++i) {
    static constexpr const char* kNames[] = {"normal", "urgent", "background"};
    const std::vector<metrics::Label> cls{{"class", i < 3 ? kNames[i] : std::to_string(i)}};
    const auto& c = e.by_class[i];
    queued.samples.push_back({cls, static_cast<double>(c.queued), {}});
    in_service.samples.push_back({cls, static_cast<double>(c.in_service), {}});
    completed.samples.push_back({cls, static_cast<double>(c.completed), {}});
    p50.samples.push_back({cls, seconds(c.p50), {}});
    p99.samples.push_back({cls, seconds(c.p99), {}});
  }
  for (auto* f : {&queued, &in_service, &completed, &p50, &p99}) out.push_back(std::move(*f));
  metrics::add_single(out, "pvfs_server_elevator_objects_queued", "Objects with a request in the elevator.",
                      Type::gauge, static_cast<double>(e.objects_queued));
  metrics::add_single(out, "pvfs_server_elevator_dispatches_total",
                      "Disk operations dispatched, after merging adjacent requests.", Type::counter,
                      static_cast<double>(e.dispatches));
  metrics::add_single(out, "pvfs_server_elevator_seeks_total",
                      "Dispatches not contiguous with the previous one on the same object.", Type::counter,
                      static_cast<double>(e.seeks));
  auto expiries = metrics::make_family("pvfs_server_elevator_deadline_expiries_total",
                                       "Dispatches made because a deadline expired, by kind.", Type::counter);
  expiries.samples.push_back({{{"kind", "dynamic"}}, static_cast<double>(e.dynamic_expiries), {}});
  expiries.samples.push_back({{{"kind", "mandatory"}}, static_cast<double>(e.mandatory_expiries), {}});
  out.push_back(std::move(expiries));
  metrics::add_single(out, "pvfs_server_elevator_expiration_seconds",
                      "The dynamic deadline a request arriving now would get.", Type::gauge,
                      seconds(e.expiration));
  auto where = metrics::make_family("pvfs_server_disk_ops_total",
                                    "Disk operations by where they ran: inline on the network thread, or "
                                    "on the disk threads.",
                                    Type::counter);
  where.samples.push_back({{{"thread", "network"}}, static_cast<double>(io_.inlined()), {}});
  where.samples.push_back({{{"thread", "disk"}}, static_cast<double>(io_.handed_off()), {}});
  out.push_back(std::move(where));
  metrics::add_single(out, "pvfs_server_small_write_seconds",
                      "Average time per 64 KiB of recent non-sync disk writes (what decides inlining).",
                      Type::gauge, seconds(io_.inline_gate().average(true)));
  metrics::add_single(out, "pvfs_server_small_read_seconds",
                      "Average time per 64 KiB of recent disk reads (what decides inlining).", Type::gauge,
                      seconds(io_.inline_gate().average(false)));
  if (io_.emulated())
    metrics::add_single(out, "pvfs_server_emulated_disk_seeks_total", "Seeks the emulated disk charged.",
                        Type::counter, static_cast<double>(io_.emulated_seeks()));

  metrics::add_single(out, "pvfs_server_probes_total", "Two-choice probes answered.", Type::counter,
                      static_cast<double>(probes_));
  metrics::add_single(out, "pvfs_server_redirects_total",
                      "Redirect entries recorded for objects homed here (writes placed elsewhere).",
                      Type::counter, static_cast<double>(redirects_recorded_));
  metrics::add_single(out, "pvfs_server_fallback_writes_total",
                      "Writes that fell back to this server after the chosen one failed.", Type::counter,
                      static_cast<double>(fallbacks_));
  metrics::add_single(out, "pvfs_server_refused_no_room_total",
                      "Data writes (objects, fragments, pull-backs) refused (ENOSPC) while the disk had less "
                      "free than [storage] reserve_mb.",
                      Type::counter, static_cast<double>(refused_no_room_));
  metrics::add_single(out, "pvfs_server_pullbacks_total", "Redirected ranges pulled back home.", Type::counter,
                      static_cast<double>(pulls_));
  metrics::add_single(out, "pvfs_server_pulled_bytes_total", "Bytes pulled back home.", Type::counter,
                      static_cast<double>(pulled_bytes_));
  metrics::add_single(out, "pvfs_server_redirected_objects", "Objects homed here with a redirected range.",
                      Type::gauge, static_cast<double>(table_.object_count()));
  metrics::add_single(out, "pvfs_server_redirect_entries",
                      "Remote entries in the redirect logs here (redirects held).", Type::gauge,
                      static_cast<double>(table_.remote_entry_count()));
  metrics::add_single(out, "pvfs_server_fragments_held", "Fragments held here for other servers' objects.",
                      Type::gauge, static_cast<double>(held_.size()));
  metrics::add_single(out, "pvfs_server_fragment_bytes_held", "Bytes of those fragments.", Type::gauge,
                      static_cast<double>(held_bytes_));
  metrics::add_single(out, "pvfs_server_fragment_gc_pending",
                      "Superseded fragments on other servers waiting to be dropped.", Type::gauge,
                      static_cast<double>(garbage_.size()));
  metrics::add_single(out, "pvfs_server_delay_factor", "Injected slowdown of data requests (1: none).",
                      Type::gauge, straggler_.factor());

  auto job_ops = metrics::make_family("pvfs_server_job_requests_total",
                                      "Requests by job (the busiest 100).", Type::counter);
  auto job_read = metrics::make_family("pvfs_server_job_read_bytes_total", "Bytes read by job.",
                                       Type::counter);
  auto job_written = metrics::make_family("pvfs_server_job_written_bytes_total", "Bytes written by job.",
                                          Type::counter);
  for (const auto& j : jobs_.busiest(kMaxJobs)) {
    const std::vector<metrics::Label> job{{"job", j.id}};
    job_ops.samples.push_back({job, static_cast<double>(j.ops), {}});
    job_read.samples.push_back({job, static_cast<double>(j.bytes_read), {}});
    job_written.samples.push_back({job, static_cast<double>(j.bytes_written), {}});
  }
  for (auto* f : {&job_ops, &job_read, &job_written}) out.push_back(std::move(*f));
  return out;
}

}  // namespace pvfs
