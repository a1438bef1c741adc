// pvfs-ctl fsck: gathers the listings (files first, from every metadata
// server, each listing the file sets it holds; then every storage server at
// once), judges them, prints and optionally repairs. See ctl_fsck.h.
#include "utils/ctl/ctl_fsck.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "config/config.h"
#include "shared/secret.h"
#include "policy/placement/policy.h"
#include "utils/ctl/command.h"
#include "utils/ctl/fsck.h"
#include "utils/common/mds_status.h"
#include "utils/common/progress.h"

namespace pvfs::ctl {

namespace {

using std::chrono::milliseconds;

// Storage servers scanned at once, each on a thread of its own.
constexpr size_t kMaxParallelScans = 16;

template <typename... Args>
void fsck_error(fmt::format_string<Args...> format, Args&&... args) {
  std::fprintf(stderr, "pvfs-ctl: fsck: %s\n", fmt::format(format, std::forward<Args>(args)...).c_str());
}

void say(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

ProgressOptions progress_options(const char* label) {
  ProgressOptions o;
  o.label = label;
  o.terminal = Progress::stderr_is_terminal();
  o.show_after = milliseconds(500);  // a small cluster is checked before a bar would help
  return o;
}

// The files of every metadata server, merged (each member of a cluster
// lists the file sets it holds; a set being moved may be listed by both
// ends, once). nullopt after naming each that did not answer: without a
// member's files, the objects of its files would look orphaned.
std::optional<std::vector<fsck::File>> scan_files(const Config& config, const Secret& key, Wait wait) {
  std::map<InodeId, fsck::File> merged;
  bool all = true;
  for (const auto& mds : config.mds) {
    Progress progress(progress_options("fsck: files"), true);
    auto count = fsck::inode_count(mds.address, key, wait);
    progress.start(count ? std::optional<uint64_t>(*count) : std::nullopt);
    auto files = fsck::scan_files(mds.address, key, wait, [&](size_t n) { progress.update(n); });
    progress.finish(files ? files->size() : 0);
    if (!files) {
      fsck_error("mds{} ({}): {}", mds.id, mds.address.to_string(), files.status().to_string());
      all = false;
      continue;
    }
    for (auto& f : *files) merged.emplace(f.ino, std::move(f));
  }
  if (!all) return std::nullopt;
  std::vector<fsck::File> out;
  out.reserve(merged.size());
  for (auto& [ino, f] : merged) out.push_back(std::move(f));
  return out;
}

// Which member holds which file sets, as one string, when the MDS cluster
// is settled: every member has the same map and holds only file sets it
// owns by it. nullopt while file sets are moving (or a member does not
// answer). Equal before and after a scan means no file set moved during it,
// so no file was missed between two members' listings.
std::optional<std::string> settled_holdings(const Config& config, const Secret& key, Wait wait) {
  if (config.mds.size() == 1) return std::string();
  std::string out, map_text;
  for (const auto& mds : config.mds) {
    auto view = mds_cluster_status(mds.address, key, wait);
    if (!view) return std::nullopt;
    if (map_text.empty()) map_text = view->map;
    if (view->map != map_text) return std::nullopt;
    auto map = placement::AnuMap::parse(view->map);
    auto policy = placement::parse_policy(view->placement);
    if (!map || !policy || map->empty()) return std::nullopt;
    out += fmt::format("{}:", view->self);
    for (const auto& member : view->members) {
      if (member.id != view->self) continue;
      for (uint16_t set : member.file_sets) {
        if (placement::owner_of(*map, *policy, FileSetId(set)) != MdsId(view->self)) return std::nullopt;
        out += fmt::format("{},", set);
      }
    }
    if (!view->moves.empty()) out += fmt::format("@{}", view->moves.back().at_unix_ms);
    out += ";";
  }
  return map_text + " " + out;
}

// scan_files() while no file set moves between members (tries for about 20 s).
std::optional<std::vector<fsck::File>> scan_files_settled(const Config& config, const Secret& key,
                                                          Wait wait) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto before = settled_holdings(config, key, wait);
    if (!before) {
      std::this_thread::sleep_for(milliseconds(1000));
      continue;
    }
    auto files = scan_files(config, key, wait);
    if (!files) return std::nullopt;
    if (settled_holdings(config, key, wait) == before) return files;
  }
  fsck_error("file sets kept moving between the metadata servers; nothing checked (run fsck again)");
  return std::nullopt;
}

// Every storage server's listing, parallel to config.servers.
std::vector<Result<fsck::ServerScan>> scan_servers(const Config& config, const Secret& key, Wait wait) {
  const auto& servers = config.servers;
  std::vector<Result<fsck::ServerScan>> scans(servers.size());
  std::atomic<size_t> next{0}, finished{0};
  auto worker = [&] {
    for (size_t i = next++; i < servers.size(); i = next++) {
      scans[i] = fsck::scan_server(ServerId(servers[i].id), servers[i].address, key, wait);
      ++finished;
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 0; i < std::min(servers.size(), kMaxParallelScans); ++i) threads.emplace_back(worker);
  Progress progress(progress_options("fsck: servers"), true);
  progress.start(servers.size());
  while (finished < servers.size()) {
    progress.update(finished);
    std::this_thread::sleep_for(milliseconds(100));
  }
  for (auto& t : threads) t.join();
  progress.finish(servers.size());
  return scans;
}

}  // namespace

int fsck(const DaemonOptions& options, const FsckOptions& fsck_options) {
  if (options.config_path.empty()) {
    fsck_error("no cluster config: give -c FILE or set PVFS_CONFIG");
    return 1;
  }
  auto config = Config::load(options.config_path);
  if (!config) {
    fsck_error("{}", config.status().detail());
    return 1;
  }
  auto key = load_secret(config->secret_file);
  if (!key) {
    fsck_error("{}", key.status().to_string());
    return 1;
  }
  // A page of a large listing takes longer than a connect: by default the
  // longer of the two timeouts of the config. A daemon that says it is busy
  // (a loaded cluster) is waited for, as pvfsmount waits for it.
  const Wait wait(options.timeout.count() > 0
                      ? options.timeout
                      : milliseconds(std::max<uint32_t>({config->connect_timeout_ms, config->rpc_timeout_ms, 1})),
                  milliseconds(config->rpc_busy_limit_ms));

  int status = 0;
  auto files = scan_files_settled(*config, *key, wait);
  if (!files) {
    fsck_error("not every metadata server answered: nothing was checked");
    return 1;
  }
  fsck::Input input;
  input.files = std::move(*files);
  input.grace = fsck_options.grace;
  size_t objects = 0, answered = 0;
  auto scans = scan_servers(*config, *key, wait);
  for (size_t i = 0; i < scans.size(); ++i) {
    const DaemonEntry& server = config->servers[i];
    if (scans[i]) {
      objects += scans[i]->objects.size();
      ++answered;
      input.servers.push_back(std::move(*scans[i]));
      continue;
    }
    fsck_error("server{} ({}): {}: its objects, fragments and redirects were not checked", server.id,
          server.address.to_string(), scans[i].status().to_string());
    status = 1;
    fsck::ServerScan unknown;
    unknown.id = ServerId(server.id);
    input.servers.push_back(std::move(unknown));
  }

  const auto findings = fsck::check(input);
  size_t repaired = 0;
  for (const auto& f : findings) {
    say(f.problem);
    if (!fsck_options.repair) continue;
    if (f.repair == fsck::Repair::none) {
      say("  not repaired: no safe repair; see pvfs-ctl(1)");
      continue;
    }
    Status st = fsck::repair(f, *config, *key, wait);
    if (st.ok()) {
      say("  repaired: " + f.repaired);
      ++repaired;
    } else {
      fsck_error("repairing the {}: {}", fsck::kind_name(f.kind), st.to_string());
    }
  }
  say(fmt::format("fsck: {} files, {} objects on {} servers checked: {} problems ({} repaired)",
                  input.files.size(), objects, answered, findings.size(), repaired));
  if (repaired < findings.size()) status = 1;
  return status;
}

void add_fsck(Commands& commands) {
  struct Options {
    FsckOptions fsck;
    uint32_t grace_s = 60;
  };
  auto o = std::make_shared<Options>();
  auto* command = commands.add(
      "fsck",
      "check that the namespace and the storage servers agree: objects without a file, missing "
      "objects, stale redirects, orphan fragments, sizes below the data (exit 1 while problems "
      "remain); run it on a quiet cluster",
      [o](const DaemonOptions& d) {
        o->fsck.grace = std::chrono::seconds(o->grace_s);
        return fsck(d, o->fsck);
      });
  commands.add_daemon_options(command);
  command->add_flag("--repair", o->fsck.repair, "fix what is safe to fix, saying what was done");
  command->add_option("--grace", o->grace_s, "seconds a fragment without a redirect entry may be a write in flight")
      ->capture_default_str()
      ->check(CLI::Range(0u, 86400u));
}

}  // namespace pvfs::ctl
