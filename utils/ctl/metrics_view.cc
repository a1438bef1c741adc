#include "utils/ctl/metrics_view.h"

#include "utils/ctl/ctl_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "shared/metrics/prometheus.h"

namespace pvfs::ctl {

namespace {

using metrics::Families;
using metrics::Family;

std::string prefix_of(DaemonKind kind) { return kind == DaemonKind::mds ? "pvfs_mds_" : "pvfs_server_"; }

std::string count_text(double v) {
  if (!std::isfinite(v)) return "-";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:.3g}", v);
}

std::string bytes_text(double v) {
  return std::isfinite(v) && v >= 0 ? human_bytes(static_cast<uint64_t>(v)) : "-";
}

std::string seconds_text(double s) {
  return std::isfinite(s) && s >= 0 ? human_micros(static_cast<uint64_t>(std::llround(s * 1e6))) : "-";
}

// The value of the sample of `name` with labels `match` and suffix `suffix`.
double sample_value(const Families& families, std::string_view name, const std::vector<metrics::Label>& match,
                    std::string_view suffix = {}) {
  const Family* f = metrics::find(families, name);
  if (!f) return 0;
  for (const auto& s : f->samples) {
    if (s.suffix != suffix) continue;
    bool all = std::all_of(match.begin(), match.end(), [&](const metrics::Label& m) {
      auto v = metrics::label(s, m.name);
      return v && *v == m.value;
    });
    if (all && s.labels.size() == match.size()) return s.value;
  }
  return 0;
}

// name+suffix{a="x",b="y"}, as the Prometheus text spells a sample.
std::string sample_key(const Family& f, const metrics::Sample& s) {
  std::string key = f.name + s.suffix;
  if (s.labels.empty()) return key;
  key += '{';
  for (size_t i = 0; i < s.labels.size(); ++i)
    key += fmt::format("{}{}=\"{}\"", i ? "," : "", s.labels[i].name, s.labels[i].value);
  return key + '}';
}

// Families shown in their own tables rather than one per line.
bool in_a_table(const std::string& name, const std::string& prefix) {
  static const std::set<std::string> kTabled = {
      "requests_total", "request_errors_total", "received_bytes_total", "sent_bytes_total",
      "request_latency_seconds", "uptime_seconds", "elevator_queued", "elevator_in_service",
      "elevator_completed_total", "elevator_service_p50_seconds", "elevator_service_p99_seconds",
      "job_requests_total", "job_read_bytes_total", "job_written_bytes_total"};
  return name.starts_with(prefix) && kTabled.contains(name.substr(prefix.size()));
}

}  // namespace

Result<std::vector<DaemonTarget>> select_daemons(const std::vector<DaemonTarget>& all,
                                                 const std::vector<std::string>& names) {
  if (names.empty()) return all;
  std::vector<DaemonTarget> chosen;
  auto add = [&](const DaemonTarget& t) {
    if (std::none_of(chosen.begin(), chosen.end(), [&](const DaemonTarget& c) { return c.name == t.name; }))
      chosen.push_back(t);
  };
  for (const auto& name : names) {
    if (name == "all") {
      for (const auto& t : all) add(t);
      continue;
    }
    uint32_t number = 0;
    auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), number);
    const bool bare = !name.empty() && ec == std::errc() && ptr == name.data() + name.size();
    const std::string wanted = bare ? fmt::format("server{}", number) : name;
    auto it = std::find_if(all.begin(), all.end(), [&](const DaemonTarget& t) { return t.name == wanted; });
    if (it == all.end())
      return Status(Errc::invalid_argument,
                    fmt::format("no daemon '{}' in the config (want mdsN, serverN, a server number or all)", name));
    add(*it);
  }
  return chosen;
}

std::string render_stats(const DaemonTarget& target, const Families& families) {
  const bool server = target.kind == DaemonKind::server;
  const std::string prefix = prefix_of(target.kind);
  const double uptime_s = metrics::sum(families, prefix + "uptime_seconds");
  std::string out = fmt::format("{} ({}): {}, up {}\n", target.name, target.address.to_string(),
                                server ? "storage server" : "metadata server",
                                human_duration(std::chrono::milliseconds(static_cast<int64_t>(uptime_s * 1000))));

  std::vector<std::vector<std::string>> rows;
  if (server) rows.push_back({"TYPE", "REQUESTS", "ERRORS", "IN", "OUT", "P50", "P99"});
  else rows.push_back({"TYPE", "REQUESTS", "ERRORS", "P50", "P99"});
  for (const auto& [type, count] : metrics::by_label(families, prefix + "requests_total", "type")) {
    const std::vector<metrics::Label> t{{"type", type}};
    std::vector<std::string> row{type, count_text(count),
                                 count_text(metrics::sum(families, prefix + "request_errors_total", t))};
    if (server) {
      row.push_back(bytes_text(metrics::sum(families, prefix + "received_bytes_total", t)));
      row.push_back(bytes_text(metrics::sum(families, prefix + "sent_bytes_total", t)));
    }
    for (const char* q : {"0.5", "0.99"})
      row.push_back(seconds_text(
          sample_value(families, prefix + "request_latency_seconds", {{"type", type}, {"quantile", q}})));
    rows.push_back(std::move(row));
  }
  out += "\n" + table(rows, server ? std::set<size_t>{1, 2, 3, 4, 5, 6} : std::set<size_t>{1, 2, 3, 4});

  if (server) {
    std::vector<std::vector<std::string>> queues{{"CLASS", "QUEUED", "IN-SERVICE", "COMPLETED", "P50", "P99"}};
    for (const auto& [cls, queued] : metrics::by_label(families, prefix + "elevator_queued", "class")) {
      const std::vector<metrics::Label> c{{"class", cls}};
      queues.push_back({cls, count_text(queued),
                        count_text(metrics::sum(families, prefix + "elevator_in_service", c)),
                        count_text(metrics::sum(families, prefix + "elevator_completed_total", c)),
                        seconds_text(metrics::sum(families, prefix + "elevator_service_p50_seconds", c)),
                        seconds_text(metrics::sum(families, prefix + "elevator_service_p99_seconds", c))});
    }
    out += "\n" + table(queues, {1, 2, 3, 4, 5});
  }

  std::vector<std::vector<std::string>> others{{"COUNTER", "VALUE"}};
  for (const auto& f : families) {
    if (in_a_table(f.name, prefix)) continue;
    std::string short_name = f.name.starts_with(prefix) ? f.name.substr(prefix.size()) : f.name;
    for (const auto& s : f.samples) {
      std::string key = short_name;
      for (const auto& l : s.labels) key += fmt::format(" {}={}", l.name, l.value);
      const bool bytes = f.name.find("bytes") != std::string::npos;
      const bool secs = f.name.ends_with("_seconds");
      others.push_back({key, bytes ? bytes_text(s.value) : secs ? seconds_text(s.value) : count_text(s.value)});
    }
  }
  if (others.size() > 1) out += "\n" + table(others, {1});

  std::vector<std::vector<std::string>> jobs;
  if (server) jobs.push_back({"JOB", "REQUESTS", "READ", "WRITTEN"});
  else jobs.push_back({"JOB", "REQUESTS"});
  for (const auto& [job, ops] : metrics::by_label(families, prefix + "job_requests_total", "job")) {
    std::vector<std::string> row{job, count_text(ops)};
    if (server) {
      row.push_back(bytes_text(metrics::sum(families, prefix + "job_read_bytes_total", {{"job", job}})));
      row.push_back(bytes_text(metrics::sum(families, prefix + "job_written_bytes_total", {{"job", job}})));
    }
    jobs.push_back(std::move(row));
  }
  out += "\n" + table(jobs, server ? std::set<size_t>{1, 2, 3} : std::set<size_t>{1});
  if (jobs.size() == 1) out += "(no jobs)\n";
  return out;
}

std::string render_stats_json(const std::vector<DaemonSnapshot>& snapshots) {
  std::string out = "[\n";
  bool first = true;
  for (const auto& snap : snapshots) {
    if (!snap.families) continue;
    out += fmt::format("{}{{\"daemon\": {}, \"address\": {}, \"metrics\": {{", first ? "" : ",\n",
                       json_string(snap.target.name), json_string(snap.target.address.to_string()));
    bool first_sample = true;
    for (const auto& f : *snap.families)
      for (const auto& s : f.samples) {
        out += fmt::format("{}{}: {}", first_sample ? "" : ", ", json_string(sample_key(f, s)), json_number(s.value));
        first_sample = false;
      }
    out += "}}";
    first = false;
  }
  return out + (first ? "]\n" : "\n]\n");
}

Families merge_with_daemon_label(const std::vector<DaemonSnapshot>& snapshots) {
  Families out;
  for (const auto& snap : snapshots) {
    if (!snap.families) continue;
    for (const auto& f : *snap.families) {
      auto it = std::find_if(out.begin(), out.end(), [&](const Family& o) { return o.name == f.name; });
      if (it == out.end()) {
        out.push_back(metrics::make_family(f.name, f.help, f.type));
        it = out.end() - 1;
      }
      for (auto s : f.samples) {
        s.labels.insert(s.labels.begin(), metrics::Label{"daemon", snap.target.name});
        it->samples.push_back(std::move(s));
      }
    }
  }
  return out;
}

// --- top ---

double counter_rate(double before, double now, double elapsed_s) {
  if (!(elapsed_s > 0)) return std::nan("");
  const double delta = now >= before ? now - before : now;
  return delta / elapsed_s;
}

TopFrame compute_top(const std::vector<DaemonSnapshot>& before, const std::vector<DaemonSnapshot>& now,
                     double elapsed_s, size_t max_jobs) {
  constexpr double kMiB = 1024.0 * 1024.0;
  const double nan = std::nan("");
  TopFrame frame;
  std::map<std::string, TopJobRow> jobs;
  for (size_t i = 0; i < now.size(); ++i) {
    const DaemonSnapshot& cur = now[i];
    const metrics::Families* prev = i < before.size() && before[i].families ? &*before[i].families : nullptr;
    const std::string prefix = prefix_of(cur.target.kind);
    auto rate = [&](const std::string& name) {
      if (!prev) return nan;
      return counter_rate(metrics::sum(*prev, name), metrics::sum(*cur.families, name), elapsed_s);
    };
    if (cur.target.kind == DaemonKind::server) {
      TopServerRow row{cur.target.name};
      if (!cur.families) {
        row.down = true;
      } else {
        const auto& f = *cur.families;
        row.load = metrics::sum(f, prefix + "load_requests");
        row.queued = metrics::sum(f, prefix + "elevator_queued");
        row.in_mib_s = rate(prefix + "received_bytes_total") / kMiB;
        row.out_mib_s = rate(prefix + "sent_bytes_total") / kMiB;
        row.redirects_held = metrics::sum(f, prefix + "redirect_entries");
      }
      frame.servers.push_back(row);
    } else {
      TopMdsRow row{cur.target.name};
      if (!cur.families) {
        row.down = true;
      } else {
        const auto& f = *cur.families;
        row.ops_s = rate(prefix + "requests_total");
        row.mean_latency_s = nan;
        if (prev) {
          auto summed = [&](const Families& fs, std::string_view suffix) {
            const Family* fam = metrics::find(fs, prefix + "request_latency_seconds");
            double total = 0;
            if (fam)
              for (const auto& s : fam->samples) total += s.suffix == suffix ? s.value : 0;
            return total;
          };
          const double count = summed(f, "_count") - summed(*prev, "_count");
          const double secs = summed(f, "_sum") - summed(*prev, "_sum");
          if (count > 0) row.mean_latency_s = secs / count;
        }
        row.filesets = metrics::sum(f, prefix + "filesets");
        row.inodes = metrics::sum(f, prefix + "inodes");
      }
      frame.mds.push_back(row);
    }
    if (cur.families && cur.target.kind == DaemonKind::mds)
      for (const auto& [job, held] : metrics::by_label(*cur.families, prefix + "iosched_tokens", "job"))
        if (held > 0) frame.token_holders.push_back(job);
    if (cur.families && cur.target.kind == DaemonKind::mds)
      for (const auto& [job, waits] : metrics::by_label(*cur.families, prefix + "iosched_waiting", "job"))
        if (waits > 0) frame.token_waiters.push_back(job);
    if (cur.families && cur.target.kind == DaemonKind::mds)
      for (const auto& [job, behind] : metrics::by_label(*cur.families, prefix + "qos_behind", "job"))
        if (behind > 0) frame.behind_goal.push_back(job);
    if (!cur.families || !prev) continue;
    for (const auto& [job, ops] : metrics::by_label(*cur.families, prefix + "job_requests_total", "job")) {
      const std::vector<metrics::Label> j{{"job", job}};
      auto moved = [&](const Families& fs) {
        return metrics::sum(fs, prefix + "job_read_bytes_total", j) +
               metrics::sum(fs, prefix + "job_written_bytes_total", j);
      };
      TopJobRow& row = jobs[job];
      row.job = job;
      row.ops_s += counter_rate(metrics::sum(*prev, prefix + "job_requests_total", j), ops, elapsed_s);
      row.mib_s += counter_rate(moved(*prev), moved(*cur.families), elapsed_s) / kMiB;
    }
  }
  for (auto& [name, row] : jobs)
    if (row.ops_s > 0 || row.mib_s > 0) frame.jobs.push_back(row);
  std::sort(frame.jobs.begin(), frame.jobs.end(), [](const TopJobRow& a, const TopJobRow& b) {
    if (a.ops_s != b.ops_s) return a.ops_s > b.ops_s;
    if (a.mib_s != b.mib_s) return a.mib_s > b.mib_s;
    return a.job < b.job;
  });
  if (frame.jobs.size() > max_jobs) frame.jobs.resize(max_jobs);
  std::sort(frame.token_holders.begin(), frame.token_holders.end());
  frame.token_holders.erase(std::unique(frame.token_holders.begin(), frame.token_holders.end()),
                            frame.token_holders.end());
  std::sort(frame.token_waiters.begin(), frame.token_waiters.end());
  frame.token_waiters.erase(std::unique(frame.token_waiters.begin(), frame.token_waiters.end()),
                            frame.token_waiters.end());
  std::sort(frame.behind_goal.begin(), frame.behind_goal.end());
  frame.behind_goal.erase(std::unique(frame.behind_goal.begin(), frame.behind_goal.end()), frame.behind_goal.end());
  return frame;
}

std::string render_top(const TopFrame& frame, std::string_view title, size_t width) {
  auto rate_text = [](double v) { return std::isfinite(v) ? fmt::format("{:.1f}", v) : std::string("-"); };
  std::string out = std::string(title) + "\n";
  if (!frame.servers.empty()) {
    std::vector<std::vector<std::string>> rows{{"SERVER", "LOAD", "QUEUE", "MiB/s-IN", "MiB/s-OUT", "REDIRECTS"}};
    for (const auto& r : frame.servers) {
      if (r.down) rows.push_back({r.name, "down"});
      else
        rows.push_back({r.name, count_text(r.load), count_text(r.queued), rate_text(r.in_mib_s),
                        rate_text(r.out_mib_s), count_text(r.redirects_held)});
    }
    out += "\n" + table(rows, {1, 2, 3, 4, 5});
  }
  if (!frame.mds.empty()) {
    std::vector<std::vector<std::string>> rows{{"MDS", "OPS/s", "LATENCY", "FILESETS", "INODES"}};
    for (const auto& r : frame.mds) {
      if (r.down) rows.push_back({r.name, "down"});
      else
        rows.push_back({r.name, rate_text(r.ops_s), seconds_text(r.mean_latency_s), count_text(r.filesets),
                        count_text(r.inodes)});
    }
    out += "\n" + table(rows, {1, 2, 3, 4});
  }
  std::vector<std::vector<std::string>> rows{{"JOB", "OPS/s", "MiB/s"}};
  for (const auto& j : frame.jobs) rows.push_back({j.job, rate_text(j.ops_s), rate_text(j.mib_s)});
  out += "\n" + table(rows, {1, 2});
  if (frame.jobs.empty()) out += "(no active jobs)\n";
  if (!frame.token_holders.empty() || !frame.token_waiters.empty()) {
    out += "\nI/O tokens:";
    for (const auto& job : frame.token_holders) out += " " + job;
    if (frame.token_holders.empty()) out += " (none)";
    if (!frame.token_waiters.empty()) {
      out += "; waiting:";
      for (const auto& job : frame.token_waiters) out += " " + job;
    }
    out += "\n";
  }
  if (!frame.behind_goal.empty()) {
    out += "\nBehind their QoS goal:";
    for (const auto& job : frame.behind_goal) out += " " + job;
    out += "\n";
  }
  if (width == 0) return out;
  std::string cut;
  for (size_t start = 0; start < out.size();) {
    const size_t end = out.find('\n', start);
    cut += out.substr(start, std::min(end - start, width)) + "\n";
    start = end + 1;
  }
  return cut;
}

}  // namespace pvfs::ctl
