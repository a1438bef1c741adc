// pvfs-ctl client MOUNT: what one mount did, from its read-only virtual
// xattr user.pvfs.client_stats on the mount's root (fs/mount_stats.h), so
// no socket or daemon is involved: totals since the mount started, or with
// -n/-d (as top(1)) the rates of each interval. Blocking; not thread-safe.
#include <sys/xattr.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "fs/mount_stats.h"
#include "shared/text_format.h"
#include "utils/ctl/command.h"
#include "utils/ctl/ctl_cluster.h"
#include "utils/ctl/ctl_format.h"

namespace pvfs::ctl {

namespace {

constexpr const char* kClientStatsXattr = "user.pvfs.client_stats";  // fs/client.h

struct ClientOptions {
  std::string mount;
  bool json = false;
  unsigned iterations = 0;  // -n: 0 = once (totals), or until interrupted with -d
  double delay_s = 0;       // -d: 0 = 1 s when live
};

// The mount point `path` is on a pvfs mount's root, or nullopt after the error.
std::optional<MountStatsView> read_stats(const std::string& path) {
  std::error_code ec;
  const auto canonical = std::filesystem::canonical(path, ec);
  if (ec) {
    error("client {}: {}", path, ec.message());
    return std::nullopt;
  }
  if (!on_pvfs(path)) {
    error("client {}: not on a pvfs file system", path);
    return std::nullopt;
  }
  std::string value(64 * 1024, '\0');
  const ssize_t n = ::getxattr(canonical.c_str(), kClientStatsXattr, value.data(), value.size());
  if (n < 0) {
    const int err = errno;
    error("client {}: {}{}", path, std::strerror(err),
          err == ENODATA || err == EOPNOTSUPP ? " (give the mount point: the stats are on its root; or the "
                                                "mount's pvfsmount predates them)"
                                              : "");
    return std::nullopt;
  }
  value.resize(static_cast<size_t>(n));
  auto view = parse_mount_stats(value);
  if (!view) {
    error("client {}: {}", path, view.status().detail());
    return std::nullopt;
  }
  return *view;
}

uint64_t counter(const MountStatsView& v, const std::string& key) {
  auto it = v.counters.find(key);
  return it == v.counters.end() ? 0 : it->second;
}

uint64_t minus(uint64_t now, uint64_t before) { return now >= before ? now - before : now; }

// An operation's p50 and p99 (us): since the mount started (`was` null), or
// over the interval since `was` (nullopt from an older pvfsmount).
std::optional<std::pair<double, double>> percentiles(const MountStatsView::Op& op, const MountStatsView::Op* was) {
  if (!was) return std::pair{op.p50_us, op.p99_us};
  return interval_percentiles(op, *was);
}

// Totals (`before` null) or the change since `before` over `seconds`.
std::string render_text(const MountStatsView& now, const MountStatsView* before, double seconds) {
  const bool rates = before != nullptr;
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"OPERATION", rates ? "OPS/S" : "COUNT", "ERRORS", "MEAN", "P50", "P99"});
  for (const auto& [name, op] : now.ops) {
    MountStatsView::Op was;
    if (rates)
      if (auto it = before->ops.find(name); it != before->ops.end()) was = it->second;
    const uint64_t count = minus(op.count, was.count);
    if (rates && count == 0) continue;
    const double mean_us = count ? (op.sum_us - was.sum_us) / static_cast<double>(count) : 0;
    const auto pct = percentiles(op, rates ? &was : nullptr);
    const auto cell = [](double us) { return human_micros(static_cast<uint64_t>(us)); };
    rows.push_back({name, rates ? fmt::format("{:.1f}", static_cast<double>(count) / seconds) : std::to_string(count),
                    std::to_string(minus(op.errors, was.errors)), cell(mean_us), pct ? cell(pct->first) : "-",
                    pct ? cell(pct->second) : "-"});
  }
  std::string out = table(rows, {1, 2, 3, 4, 5});
  auto delta = [&](const char* key) { return minus(counter(now, key), rates ? counter(*before, key) : 0); };
  if (rates) {
    out += fmt::format("read {:.1f} MiB/s, written {:.1f} MiB/s",
                       static_cast<double>(delta("bytes_read")) / seconds / (1 << 20),
                       static_cast<double>(delta("bytes_written")) / seconds / (1 << 20));
  } else {
    out += fmt::format("read {}, written {}", human_bytes(delta("bytes_read")), human_bytes(delta("bytes_written")));
  }
  out += fmt::format("; metadata retries {}, redirects {}; cache hits {}; write pieces redirected {} of {}; "
                     "calls kept waiting by a busy server {}\n",
                     delta("mds_retries"), delta("mds_redirects"), delta("cache_hits"), delta("pieces_redirected"),
                     delta("pieces_redirected") + delta("pieces_home"), delta("busy_waits"));
  if (counter(now, "writes_behind") > 0)
    out += fmt::format("writes behind {} (waited for room {}, failed afterwards {})\n", delta("writes_behind"),
                       delta("behind_waits"), delta("behind_failures"));
  if (counter(now, "appends") > 0)
    out += fmt::format("appends placed by the metadata server {}\n", delta("appends"));
  if (counter(now, "dir_leases_taken") > 0)
    out += fmt::format("directory leases taken {}; lookups of absent names answered from them {}\n",
                       delta("dir_leases_taken"), delta("lookups_by_lease"));
  return out;
}

std::string render_json(const MountStatsView& now, const MountStatsView* before, double seconds) {
  std::string out = "{";
  if (before) out += fmt::format("\"interval_s\": {:.3f}, ", seconds);
  for (const auto& [key, value] : now.counters)
    out += fmt::format("{}: {}, ", json_string(key), minus(value, before ? counter(*before, key) : 0));
  out += "\"ops\": {";
  bool first = true;
  for (const auto& [name, op] : now.ops) {
    MountStatsView::Op was;
    if (before)
      if (auto it = before->ops.find(name); it != before->ops.end()) was = it->second;
    const auto pct = percentiles(op, before ? &was : nullptr);
    const auto number = [](double us) { return fmt::format("{:.0f}", us); };
    out += fmt::format("{}{}: {{\"count\": {}, \"errors\": {}, \"sum_us\": {:.0f}, \"p50_us\": {}, \"p99_us\": {}}}",
                       first ? "" : ", ", json_string(name), minus(op.count, was.count), minus(op.errors, was.errors),
                       op.sum_us - was.sum_us, pct ? number(pct->first) : "null", pct ? number(pct->second) : "null");
    first = false;
  }
  return out + "}}\n";
}

int client(const ClientOptions& o) {
  auto first = read_stats(o.mount);
  if (!first) return 1;
  const bool live = o.iterations > 0 || o.delay_s > 0;
  if (!live) {
    std::fputs((o.json ? render_json(*first, nullptr, 0) : render_text(*first, nullptr, 0)).c_str(), stdout);
    return 0;
  }
  const auto delay = std::chrono::duration<double>(o.delay_s > 0 ? o.delay_s : 1.0);
  MountStatsView before = *first;
  auto at = std::chrono::steady_clock::now();
  for (unsigned i = 0; o.iterations == 0 || i < o.iterations; ++i) {
    std::this_thread::sleep_for(delay);
    auto now = read_stats(o.mount);
    if (!now) return 1;
    const auto t = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(t - at).count();
    if (o.json) {
      std::fputs(render_json(*now, &before, seconds).c_str(), stdout);
    } else {
      std::fputs(fmt::format("{}{} over {:.1f} s\n", i ? "\n" : "", o.mount, seconds).c_str(), stdout);
      std::fputs(render_text(*now, &before, seconds).c_str(), stdout);
    }
    std::fflush(stdout);
    before = std::move(*now);
    at = t;
  }
  return 0;
}

}  // namespace

void add_client(Commands& commands) {
  auto o = std::make_shared<ClientOptions>();
  auto* command = commands.add(
      "client",
      "what a mount did: FUSE operations by kind with latencies, bytes read and written, metadata "
      "retries and redirects, cache hits; totals, or live rates with -n/-d",
      [o](const DaemonOptions&) { return client(*o); });
  command->add_option("mount", o->mount, "the mount point of a pvfs mount")->required();
  command->add_flag("--json", o->json, "one JSON object (per interval when live)");
  command->add_option("-n,--iterations", o->iterations, "live: this many intervals, then exit");
  command->add_option("-d,--delay", o->delay_s, "live: seconds per interval [1]")->check(CLI::Range(0.05, 3600.0));
}

}  // namespace pvfs::ctl
