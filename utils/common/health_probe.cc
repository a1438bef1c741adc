#include "utils/common/health_probe.h"

#include <future>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "utils/common/daemon_probe.h"
#include "utils/common/mds_status.h"

namespace pvfs {

namespace {

using std::chrono::milliseconds;

int64_t wall_ms() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Target {
  std::string name;
  DaemonKind kind;
  Endpoint address;
};

struct Probe {
  Result<DaemonReport> report = Status(Errc::unavailable, "not asked");
  int64_t sent_ms = 0, received_ms = 0;
};

// What a status error means to an operator, without the code's name twice.
std::string why(const Status& st) {
  switch (st.code()) {
    case Errc::timeout: return fmt::format("no answer within the timeout ({})", st.detail());
    case Errc::unavailable: return fmt::format("not reachable ({})", st.detail());
    case Errc::access_denied: return fmt::format("refused our key ({})", st.detail());
    default: return st.to_string();
  }
}

}  // namespace

health::Inputs gather_health(const Config& config, const Secret& key, milliseconds timeout) {
  std::vector<Target> targets;
  for (const auto& m : config.mds) targets.push_back({fmt::format("mds{}", m.id), DaemonKind::mds, m.address});
  for (const auto& s : config.servers)
    targets.push_back({fmt::format("server{}", s.id), DaemonKind::server, s.address});

  std::vector<std::future<Probe>> asked;
  for (const auto& t : targets)
    asked.push_back(std::async(std::launch::async, [&t, &key, timeout] {
      Probe p;
      p.sent_ms = wall_ms();
      p.report = probe_daemon(t.kind, t.address, key, timeout);
      p.received_ms = wall_ms();
      return p;
    }));

  health::Inputs in;
  std::vector<const Target*> reachable_mds;
  uint64_t backlog = 0;
  bool backlog_known = false;
  for (size_t i = 0; i < targets.size(); ++i) {
    const Probe p = asked[i].get();
    health::Daemon d;
    d.name = targets[i].name;
    d.address = targets[i].address.to_string();
    d.is_mds = targets[i].kind == DaemonKind::mds;
    d.reachable = p.report.ok();
    if (!p.report) {
      d.why = why(p.report.status());
      in.daemons.push_back(std::move(d));
      continue;
    }
    const DaemonReport& r = *p.report;
    if (r.unix_ms != 0) {
      d.clock_offset_ms = r.unix_ms - (p.sent_ms + p.received_ms) / 2;
      d.offset_error_ms = static_cast<uint64_t>(p.received_ms - p.sent_ms) / 2 + 1;
    }
    d.in_progress = r.in_progress > 0 ? r.in_progress - 1 : 0;  // not counting our own status request
    d.oldest_request_ms = d.in_progress > 0 ? r.oldest_request_ms : 0;
    if (r.orphans) {
      backlog += *r.orphans;
      backlog_known = true;
    }
    if (d.is_mds && r.data_free_bytes) in.mds_space.push_back({d.name, *r.data_free_bytes, r.reserve_bytes});
    if (d.is_mds) reachable_mds.push_back(&targets[i]);
    in.daemons.push_back(std::move(d));
  }
  if (backlog_known) in.delete_backlog = backlog;
  if (reachable_mds.empty()) return in;

  // The MDS's registry has the servers' space; any reachable member will do.
  for (const Target* m : reachable_mds) {
    auto servers = list_servers(m->address, key, timeout);
    if (!servers) continue;
    for (const auto& s : *servers)
      in.space.push_back({fmt::format("server{}", s.id), s.capacity_bytes, s.free_bytes});
    break;
  }

  if (config.mds.size() < 2) return in;
  std::vector<std::future<Result<MdsClusterView>>> views;
  for (const Target* m : reachable_mds)
    views.push_back(std::async(std::launch::async, [m, &key, timeout] {
      return mds_cluster_status(m->address, key, timeout);
    }));
  std::set<uint16_t> held;                   // by a reachable member that serves
  std::map<uint16_t, std::string> reported;  // every set any view mentions, with a holder
  for (size_t i = 0; i < views.size(); ++i) {
    const auto view = views[i].get();
    if (!view) continue;
    if (!view->serving) in.fenced.push_back(reachable_mds[i]->name);
    for (const auto& member : view->members) {
      const std::string name = fmt::format("mds{}", member.id);
      const bool is_self = member.id == view->self;
      for (uint16_t set : member.file_sets) {
        if (is_self && view->serving) held.insert(set);
        // Prefer naming a member other than the one answering: the lost holder.
        if (!reported.count(set) || !is_self) reported[set] = name;
      }
    }
  }
  for (const auto& [set, holder] : reported)
    if (!held.count(set)) in.unserved.push_back({set, holder});
  return in;
}

}  // namespace pvfs
