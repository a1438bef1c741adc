#include "utils/ctl/ctl_format.h"

#include "shared/text_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

namespace pvfs::ctl {

namespace {

bool parse_u32(std::string_view text, uint32_t& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
}

// `text` with `prefix` before each of its lines.
std::string indent(std::string_view text, std::string_view prefix) {
  std::string out;
  for (size_t start = 0; start < text.size();) {
    size_t end = std::min(text.find('\n', start), text.size());
    out += fmt::format("{}{}\n", prefix, text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// A delay factor as people write it: 5, 2.5, 1000.
std::string factor_text(double factor) { return fmt::format("{:g}", factor); }

}  // namespace

std::string table(const std::vector<std::vector<std::string>>& rows, const std::set<size_t>& right) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) line += "  ";
      const bool last = i + 1 == row.size();
      if (right.contains(i)) line += fmt::format("{:>{}}", row[i], width[i]);
      else if (last) line += row[i];
      else line += fmt::format("{:<{}}", row[i], width[i]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

Result<std::vector<ServerId>> parse_server_list(std::string_view text) {
  std::vector<ServerId> out;
  std::set<uint32_t> seen;
  std::string_view rest = text;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    uint32_t id = 0;
    if (!parse_u32(item.starts_with("server") ? item.substr(6) : item, id))
      return Status(Errc::invalid_argument,
                    fmt::format("bad server id '{}' in '{}': want ids like 0,2,3 or server0,server2", item, text));
    if (!seen.insert(id).second)
      return Status(Errc::invalid_argument, fmt::format("server {} is listed twice", id));
    out.push_back(ServerId(id));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return out;
}

std::string human_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  // Compare with what one decimal would print, so 1048575 shows as 1.0 MiB, not 1024.0 KiB.
  while (value >= 1023.95 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string human_duration(std::chrono::milliseconds elapsed) {
  const uint64_t s = elapsed.count() < 0 ? 0 : static_cast<uint64_t>(elapsed.count()) / 1000;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  return fmt::format("{}d{:02}h", s / 86400, s % 86400 / 3600);
}

std::string render_layout(std::string_view path, const LayoutPolicy& layout, bool is_directory) {
  std::string out = fmt::format("{}\n", path);
  if (!is_directory) {
    out += fmt::format("stripe_count:  {}\n", layout.servers.size());
    out += fmt::format("stripe_size:   {}\n", layout.stripe_size);
    std::vector<std::vector<std::string>> rows = {{"index", "server"}};
    for (size_t i = 0; i < layout.servers.size(); ++i)
      rows.push_back({std::to_string(i), std::to_string(layout.servers[i].value)});
    out += indent(table(rows, {0, 1}), "  ");
    return out;
  }
  out += layout.stripe_count ? fmt::format("stripe_count:  {}\n", layout.stripe_count)
                             : std::string("stripe_count:  0 (cluster default)\n");
  out += layout.stripe_size ? fmt::format("stripe_size:   {}\n", layout.stripe_size)
                            : std::string("stripe_size:   0 (cluster default)\n");
  std::string servers;
  for (ServerId id : layout.servers) servers += (servers.empty() ? "" : ",") + std::to_string(id.value);
  out += fmt::format("servers:       {}\n", servers.empty() ? "any" : servers);
  return out;
}

std::vector<JobStat> merge_jobs(const std::vector<DaemonReport>& reports) {
  std::map<std::string, JobStat> sums;
  for (const auto& report : reports)
    for (const auto& job : report.jobs) {
      JobStat& sum = sums[job.job_id];
      sum.job_id = job.job_id;
      sum.ops += job.ops;
      sum.bytes_read += job.bytes_read;
      sum.bytes_written += job.bytes_written;
    }
  std::vector<JobStat> out;
  for (auto& [id, sum] : sums) out.push_back(std::move(sum));
  std::stable_sort(out.begin(), out.end(), [](const JobStat& a, const JobStat& b) {
    if (a.ops != b.ops) return a.ops > b.ops;
    return a.bytes_read + a.bytes_written > b.bytes_read + b.bytes_written;
  });
  return out;
}

std::string render_jobs(const std::vector<JobStat>& jobs, const std::optional<std::vector<JobIoTimes>>& io) {
  std::vector<std::vector<std::string>> rows = {{"JOB", "OPS", "READ", "WRITTEN", "I/O-TIME", "TOKEN-WAIT", "STEP"}};
  std::map<std::string, const JobIoTimes*> times;
  if (io)
    for (const auto& t : *io) times[t.job_id] = &t;
  const auto seconds = [](uint64_t ms) { return fmt::format("{:.2f} s", static_cast<double>(ms) / 1000); };
  const auto add = [&](const std::string& job, std::vector<std::string> row) {
    if (!io) {
      row.insert(row.end(), {"?", "?", "?"});
    } else if (auto it = times.find(job); it == times.end()) {
      row.insert(row.end(), {"-", "-", "-"});
    } else {
      row.insert(row.end(), {seconds(it->second->io_ms), seconds(it->second->wait_ms),
                             it->second->step.empty() ? std::string("-") : it->second->step});
      times.erase(it);
    }
    rows.push_back(std::move(row));
  };
  for (const auto& j : jobs)
    add(j.job_id, {j.job_id, std::to_string(j.ops), human_bytes(j.bytes_read), human_bytes(j.bytes_written)});
  if (io)
    for (const auto& t : *io)
      if (times.contains(t.job_id)) add(t.job_id, {t.job_id, "0", human_bytes(0), human_bytes(0)});
  std::string out = table(rows, {1, 2, 3, 4, 5});
  if (rows.size() == 1) out += "(no jobs)\n";
  return out;
}

std::vector<DaemonTarget> daemon_targets(const Config& config) {
  std::vector<DaemonTarget> out;
  for (const auto& m : config.mds)
    out.push_back({fmt::format("mds{}", m.id), DaemonKind::mds, m.id, m.address});
  for (const auto& s : config.servers)
    out.push_back({fmt::format("server{}", s.id), DaemonKind::server, s.id, s.address});
  return out;
}

PingResult judge_ping(const DaemonTarget& target, const Result<DaemonReport>& report) {
  if (!report) {
    const Status st = report.status();
    switch (st.code()) {
      case Errc::unavailable: return {false, "down", st.detail()};
      case Errc::timeout: return {false, "timeout", st.detail()};
      case Errc::access_denied:
        return {false, "denied", st.detail() + " (does it use this config's secret file?)"};
      default: return {false, "error", st.to_string()};
    }
  }
  const char* want_kind = target.kind == DaemonKind::mds ? "mds" : "server";
  if (report->kind != want_kind || report->id != target.id)
    return {false, "wrong",
            fmt::format("answers as {} {}, the config says {} {}", report->kind, report->id,
                        want_kind, target.id)};
  return {true, "ok", {}};
}

std::string render_ping(const std::vector<DaemonTarget>& targets,
                        const std::vector<Result<DaemonReport>>& reports,
                        const std::vector<PingResult>& verdicts) {
  std::vector<std::vector<std::string>> rows = {
      {"DAEMON", "ADDRESS", "STATE", "VERSION", "UPTIME", "REQUESTS", "DETAIL"}};
  for (size_t i = 0; i < targets.size(); ++i) {
    std::vector<std::string> row = {targets[i].name, targets[i].address.to_string(),
                                    verdicts[i].state};
    if (reports[i]) {
      row.push_back(reports[i]->version);
      row.push_back(human_duration(std::chrono::milliseconds(reports[i]->uptime_ms)));
      row.push_back(std::to_string(reports[i]->requests));
    } else {
      row.insert(row.end(), {"-", "-", "-"});
    }
    row.push_back(verdicts[i].detail);
    rows.push_back(std::move(row));
  }
  return table(rows, {5});
}

std::string render_servers(const std::vector<ServerView>& known,
                           const std::vector<DaemonEntry>& configured) {
  std::vector<ServerView> all = known;
  for (const auto& entry : configured) {
    const bool listed = std::any_of(all.begin(), all.end(),
                                    [&](const ServerView& v) { return v.id == entry.id; });
    if (!listed) {
      ServerView v;
      v.id = entry.id;
      v.address = entry.address.to_string();
      v.capacity_bytes = v.free_bytes = 0;
      all.push_back(v);
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const ServerView& a, const ServerView& b) { return a.id < b.id; });
  std::vector<std::vector<std::string>> rows = {
      {"ID", "ADDRESS", "STATE", "CAPACITY", "FREE", "USED"}};
  for (const auto& v : all) {
    const bool registered = std::any_of(known.begin(), known.end(),
                                        [&](const ServerView& k) { return k.id == v.id; });
    std::string state = !registered ? "unregistered" : v.alive ? "alive" : "dead";
    std::string used = "-";
    if (v.capacity_bytes > 0) {
      const uint64_t in_use = v.capacity_bytes - std::min(v.free_bytes, v.capacity_bytes);
      used = fmt::format("{:.0f}%", 100.0 * static_cast<double>(in_use) /
                                        static_cast<double>(v.capacity_bytes));
    }
    rows.push_back({std::to_string(v.id), v.address, state,
                    registered ? human_bytes(v.capacity_bytes) : "-",
                    registered ? human_bytes(v.free_bytes) : "-", used});
  }
  return table(rows, {0, 3, 4, 5});
}

std::string delay_cell(double factor, std::chrono::milliseconds remaining) {
  if (!(factor > 1.0)) return "-";
  if (remaining.count() <= 0) return fmt::format("{}x, until changed", factor_text(factor));
  const auto seconds = std::chrono::ceil<std::chrono::seconds>(remaining);
  return fmt::format("{}x, {} left", factor_text(factor), human_duration(seconds));
}

std::string render_sched(const std::vector<SchedView>& views) {
  std::vector<std::vector<std::string>> rows = {
      {"ID", "LOAD", "PREASSIGNED", "REDIR-OBJS", "REDIR-ENTRIES", "FRAGMENTS", "PULLED",
       "REDIRECTS", "FALLBACKS", "PROBES", "GC", "DELAY"}};
  for (const auto& v : views)
    rows.push_back({std::to_string(v.server),
                    fmt::format("{} / {}", v.requests, human_bytes(v.bytes)),
                    human_bytes(v.preassigned),
                    std::to_string(v.redirect_objects),
                    std::to_string(v.redirect_entries),
                    fmt::format("{} / {}", v.fragments, human_bytes(v.fragment_bytes)),
                    fmt::format("{} / {}", v.pulls, human_bytes(v.pulled_bytes)),
                    std::to_string(v.redirects),
                    std::to_string(v.fallbacks),
                    std::to_string(v.probes),
                    std::to_string(v.gc_pending),
                    delay_cell(v.delay_factor, std::chrono::milliseconds(v.delay_remaining_ms))});
  return table(rows, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
}

std::string render_sched_json(const std::vector<SchedView>& views) {
  if (views.empty()) return "[]\n";
  std::string out = "[\n";
  for (size_t i = 0; i < views.size(); ++i) {
    const SchedView& v = views[i];
    std::string probability;
    for (double p : v.preassign_probability)
      probability += (probability.empty() ? "" : ", ") + json_number(p);
    out += fmt::format(
        "  {{\"server\": {}, \"requests\": {}, \"bytes\": {}, \"preassigned\": {}, "
        "\"redirect_objects\": {}, \"redirect_entries\": {}, \"fragments\": {}, "
        "\"fragment_bytes\": {}, \"pulled_bytes\": {}, \"pulls\": {}, \"redirects\": {}, "
        "\"fallbacks\": {}, \"probes\": {}, \"gc_pending\": {}, \"delay_factor\": {}, "
        "\"delay_remaining_ms\": {}, \"preassign_probability\": [{}]}}{}\n",
        v.server, v.requests, v.bytes, v.preassigned, v.redirect_objects, v.redirect_entries,
        v.fragments, v.fragment_bytes, v.pulled_bytes, v.pulls, v.redirects, v.fallbacks,
        v.probes, v.gc_pending, json_number(v.delay_factor), v.delay_remaining_ms, probability,
        i + 1 < views.size() ? "," : "");
  }
  return out + "]\n";
}

std::string describe_inject(uint32_t server, double factor, std::chrono::seconds duration) {
  if (!(factor > 1.0)) return fmt::format("server {}: serving at normal speed", server);
  if (duration.count() <= 0)
    return fmt::format("server {}: serving {}x slower until changed", server, factor_text(factor));
  return fmt::format("server {}: serving {}x slower for {} s", server, factor_text(factor),
                     duration.count());
}

std::string human_micros(uint64_t us) {
  if (us < 1000) return fmt::format("{}us", us);
  const double ms = static_cast<double>(us) / 1000.0;
  if (ms < 99.95) return fmt::format("{:.1f}ms", ms);
  if (ms < 999.5) return fmt::format("{:.0f}ms", ms);
  return fmt::format("{:.2f}s", ms / 1000.0);
}

std::string bucket_label(unsigned k) {
  static constexpr const char* kSuffixes[] = {"", "K", "M", "G", "T", "P", "E"};
  return fmt::format("{}{}", uint64_t{1} << (k % 10), kSuffixes[k / 10]);
}

std::string size_histogram(const std::vector<uint64_t>& buckets) {
  std::string out;
  for (unsigned k = 0; k < buckets.size() && k < 64; ++k)
    if (buckets[k]) out += fmt::format("{}{}:{}", out.empty() ? "" : " ", bucket_label(k), buckets[k]);
  return out.empty() ? "-" : out;
}

std::string render_elevator(const std::vector<ElevatorView>& views) {
  std::vector<std::vector<std::string>> rows = {
      {"ID", "POLICY", "QUEUED N/U/B", "OBJECTS", "DISPATCHES", "SEEKS", "EXPIRED DYN/MAND",
       "NORMAL P50/P99", "URGENT P50/P99", "BACKGROUND P50/P99", "DEADLINE", "SIZES"}};
  for (const auto& v : views) {
    std::vector<std::string> row = {
        std::to_string(v.server), v.policy,
        fmt::format("{}/{}/{}", v.queued[0], v.queued[1], v.queued[2]),
        std::to_string(v.objects_queued), std::to_string(v.dispatches),
        v.emulated_disk ? fmt::format("{} (emulated {})", v.seeks, v.emulated_seeks)
                        : std::to_string(v.seeks),
        fmt::format("{}/{}", v.dynamic_expiries, v.mandatory_expiries)};
    for (size_t c = 0; c < kElevatorClasses; ++c)
      row.push_back(v.completed[c] ? fmt::format("{}/{}", human_micros(v.p50_us[c]),
                                                 human_micros(v.p99_us[c]))
                                   : "-");
    row.push_back(human_micros(v.expiration_us));
    row.push_back(size_histogram(v.dispatched_sizes));
    rows.push_back(std::move(row));
  }
  return table(rows, {0, 2, 3, 4, 5, 6, 7, 8, 9, 10});
}

std::string render_elevator_json(const std::vector<ElevatorView>& views) {
  if (views.empty()) return "[]\n";
  const auto list = [](const std::array<uint64_t, kElevatorClasses>& values) {
    return fmt::format("[{}, {}, {}]", values[0], values[1], values[2]);
  };
  std::string out = "[\n";
  for (size_t i = 0; i < views.size(); ++i) {
    const ElevatorView& v = views[i];
    std::string sizes;
    for (unsigned k = 0; k < v.dispatched_sizes.size() && k < 64; ++k)
      if (v.dispatched_sizes[k])
        sizes += fmt::format("{}\"{}\": {}", sizes.empty() ? "" : ", ", uint64_t{1} << k,
                             v.dispatched_sizes[k]);
    out += fmt::format(
        "  {{\"server\": {}, \"policy\": {}, \"queued\": {}, \"in_service\": {}, "
        "\"completed\": {}, \"p50_us\": {}, \"p99_us\": {}, \"objects_queued\": {}, "
        "\"dispatches\": {}, \"seeks\": {}, \"emulated_disk\": {}, \"emulated_seeks\": {}, "
        "\"dynamic_expiries\": {}, \"mandatory_expiries\": {}, \"expiration_us\": {}, "
        "\"dispatched_sizes\": {{{}}}, \"bandwidth\": {}}}{}\n",
        v.server, json_string(v.policy), list(v.queued), list(v.in_service), list(v.completed),
        list(v.p50_us), list(v.p99_us), v.objects_queued, v.dispatches, v.seeks, v.emulated_disk,
        v.emulated_seeks, v.dynamic_expiries, v.mandatory_expiries, v.expiration_us, sizes,
        json_string(v.bandwidth), i + 1 < views.size() ? "," : "");
  }
  return out + "]\n";
}

}  // namespace pvfs::ctl
