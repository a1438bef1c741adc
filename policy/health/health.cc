#include "policy/health/health.h"

#include <algorithm>

#include <fmt/format.h>

namespace pvfs::health {

namespace {

std::string seconds_text(uint64_t ms) {
  if (ms < 10000) return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000);
  return fmt::format("{} s", ms / 1000);
}

std::string gib_text(uint64_t bytes) {
  return fmt::format("{:.1f}", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

std::string_view short_name(Level level) {
  switch (level) {
    case Level::ok: return "OK";
    case Level::warn: return "WARN";
    case Level::err: return "ERR";
  }
  return "?";
}

void down(const Inputs& in, std::vector<Reason>& out) {
  bool any_mds = false;
  for (const auto& d : in.daemons) any_mds = any_mds || (d.is_mds && d.reachable);
  for (const auto& d : in.daemons) {
    if (d.reachable) continue;
    std::string what;
    Level level = Level::err;
    if (!d.is_mds) what = "its stripes cannot be read or written";
    else if (any_mds) {
      level = Level::warn;
      what = "another metadata server is up";
    } else {
      what = "no metadata server is up";
    }
    out.push_back({level, "DAEMON_DOWN",
                   fmt::format("{} ({}) down: {}; {}", d.name, d.address, d.why.empty() ? "not answering" : d.why,
                               what)});
  }
}

void full(const Inputs& in, const Thresholds& limits, std::vector<Reason>& out) {
  for (const auto& s : in.space) {
    if (s.capacity_bytes == 0) continue;
    const uint64_t used = s.capacity_bytes - std::min(s.free_bytes, s.capacity_bytes);
    const double percent = 100.0 * static_cast<double>(used) / static_cast<double>(s.capacity_bytes);
    if (percent < limits.full_warn_percent) continue;
    const bool err = percent >= limits.full_err_percent;
    out.push_back({err ? Level::err : Level::warn, "SERVER_FULL",
                   fmt::format("{} {:.0f}% full ({} of {} GiB used; {} at {:g}%)", s.name, percent, gib_text(used),
                               gib_text(s.capacity_bytes), err ? "error" : "warning",
                               err ? limits.full_err_percent : limits.full_warn_percent)});
  }
}

std::string mib_text(uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

void mds_full(const Inputs& in, std::vector<Reason>& out) {
  for (const auto& m : in.mds_space) {
    if (m.reserve_bytes == 0 || m.free_bytes >= 2 * m.reserve_bytes) continue;
    const bool err = m.free_bytes < m.reserve_bytes;
    out.push_back({err ? Level::err : Level::warn, "MDS_FULL",
                   fmt::format("{}: {} free on its data disk, {} the reserve of {} ({})", m.name,
                               mib_text(m.free_bytes), err ? "under" : "within twice", mib_text(m.reserve_bytes),
                               err ? "new files and directories fail with ENOSPC; removals work"
                                   : "new files and directories will fail with ENOSPC under it")});
  }
}

void slow(const Inputs& in, const Thresholds& limits, std::vector<Reason>& out) {
  for (const auto& d : in.daemons) {
    if (!d.reachable || d.oldest_request_ms < limits.slow_request_ms) continue;
    out.push_back({Level::warn, "SLOW_REQUESTS",
                   fmt::format("{}: {} request(s) in progress, the oldest for {} (slow after {})", d.name,
                               d.in_progress, seconds_text(d.oldest_request_ms),
                               seconds_text(limits.slow_request_ms))});
  }
}

void skew(const Inputs& in, const Thresholds& limits, std::vector<Reason>& out) {
  // The pair whose offsets differ by most beyond what the measurement can explain.
  const Daemon* low = nullptr;
  const Daemon* high = nullptr;
  int64_t worst = 0;
  for (const auto& a : in.daemons) {
    if (!a.reachable || !a.clock_offset_ms) continue;
    for (const auto& b : in.daemons) {
      if (!b.reachable || !b.clock_offset_ms) continue;
      const int64_t apart = *b.clock_offset_ms - *a.clock_offset_ms -
                            static_cast<int64_t>(a.offset_error_ms + b.offset_error_ms);
      if (apart > worst) {
        worst = apart;
        low = &a;
        high = &b;
      }
    }
  }
  if (!low || static_cast<uint64_t>(worst) <= limits.clock_skew_ms) return;
  out.push_back({Level::warn, "CLOCK_SKEW",
                 fmt::format("clock skew: {} is {} ahead of {} (warning above {})", high->name,
                             seconds_text(static_cast<uint64_t>(worst)), low->name,
                             seconds_text(limits.clock_skew_ms))});
}

}  // namespace

std::string_view level_name(Level level) {
  switch (level) {
    case Level::ok: return "HEALTH_OK";
    case Level::warn: return "HEALTH_WARN";
    case Level::err: return "HEALTH_ERR";
  }
  return "HEALTH_ERR";
}

Verdict judge(const Inputs& in, const Thresholds& limits) {
  std::vector<Reason> all;
  down(in, all);
  for (const auto& m : in.fenced)
    all.push_back({Level::warn, "MDS_FENCED",
                   fmt::format("{} fenced: it holds no lease and serves nothing until the delegate answers it", m)});
  for (const auto& u : in.unserved)
    all.push_back({Level::err, "FILESET_UNSERVED",
                   u.last_holder.empty()
                       ? fmt::format("file set {} unserved: no metadata server holds it", u.set)
                       : fmt::format("file set {} unserved: last held by {}, no serving member holds it", u.set,
                                     u.last_holder)});
  full(in, limits, all);
  mds_full(in, all);
  slow(in, limits, all);
  if (in.delete_backlog && *in.delete_backlog >= limits.delete_backlog_files)
    all.push_back({Level::warn, "DELETE_BACKLOG",
                   fmt::format("delete backlog: {} unlinked files whose objects are not removed yet "
                               "(warning from {}; df counts them as used)",
                               *in.delete_backlog, limits.delete_backlog_files)});
  skew(in, limits, all);

  Verdict v;
  std::stable_partition(all.begin(), all.end(), [](const Reason& r) { return r.level == Level::err; });
  for (const auto& r : all) v.level = std::max(v.level, r.level);
  v.reasons = std::move(all);
  return v;
}

std::string render(const Verdict& verdict) {
  std::string out = fmt::format("{}\n", level_name(verdict.level));
  for (const auto& r : verdict.reasons) out += fmt::format("  {:<4} {}: {}\n", short_name(r.level), r.check, r.text);
  return out;
}

}  // namespace pvfs::health
