#include "utils/ctl/ctl_iosched.h"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "fs/client.h"
#include "utils/ctl/command.h"
#include "utils/ctl/ctl_cluster.h"
#include "utils/ctl/iosched_view.h"

namespace pvfs::ctl {

namespace {

// The servers= list of a path's user.pvfs.layout, or nullopt when it names
// none (a directory without a server choice: any server).
Result<std::optional<std::vector<uint32_t>>> layout_servers(const std::string& path) {
  char value[4096];
  const ssize_t n = ::getxattr(path.c_str(), kLayoutXattr, value, sizeof value - 1);
  if (n < 0) return Status::from_errno(errno, path + ": " + std::strerror(errno));
  const std::string text(value, static_cast<size_t>(n));
  const size_t at = text.find("servers=");
  if (at == std::string::npos) return std::optional<std::vector<uint32_t>>{};
  const size_t end = text.find_first_of(" \n", at);
  const std::string list = text.substr(at + 8, end == std::string::npos ? std::string::npos : end - at - 8);
  if (list.empty()) return std::optional<std::vector<uint32_t>>{};
  auto ids = parse_server_list(list);
  if (!ids) return ids.status();
  std::vector<uint32_t> out;
  for (ServerId s : *ids) out.push_back(s.value);
  return std::optional<std::vector<uint32_t>>{out};
}

}  // namespace

int iosched(const DaemonOptions& options, bool json, const std::string& policy) {
  auto cluster = open_cluster(options, "iosched");
  if (!cluster) return 1;
  auto view = iosched_status(cluster->config, cluster->key, cluster->timeout, policy);
  if (!view) {
    error("iosched: {}", view.status().to_string());
    return 1;
  }
  std::fputs((json ? render_iosched_json(*view) : render_iosched(*view)).c_str(), stdout);
  return 0;
}

int iostep(const IostepOptions& o) {
  if (o.paths.empty()) {
    error("iostep: give a path on the pvfs mount");
    return 2;
  }
  const std::string& at = o.paths[0];
  for (const auto& p : o.paths) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      error("iostep {}: {}: {}", o.verb, p, std::strerror(errno));
      return 1;
    }
    if (!on_pvfs(p)) {
      error("iostep {}: {}: not on a pvfs file system", o.verb, p);
      return 1;
    }
  }
  // Whose step: -j, or the job id the mount reads from this process's
  // environment.
  const std::string whose = o.job.empty() ? "this shell's job (PVFS_JOBID, SLURM_JOB_ID...; -j names one)"
                                          : "job " + o.job;
  if (o.verb == "status") {
    const std::string name = o.job.empty() ? std::string(kIoStepXattr) : std::string(kIoStepXattr) + "." + o.job;
    char value[64];
    const ssize_t n = ::getxattr(at.c_str(), name.c_str(), value, sizeof value - 1);
    if (n < 0) {
      error("iostep: {}: {}", at, std::strerror(errno));
      return 1;
    }
    std::printf("%.*s\n", static_cast<int>(n), value);
    return 0;
  }
  std::string command = o.verb;
  if (!o.job.empty()) command += " job=" + o.job;
  if (o.verb == "begin") {
    if (o.bytes) command += " bytes=" + std::to_string(*o.bytes);
    std::string servers = o.servers;
    if (servers.empty()) {
      std::set<uint32_t> all;
      bool everywhere = false;
      for (const auto& p : o.paths) {
        auto ids = layout_servers(p);
        if (!ids) {
          error("iostep: {}", ids.status().to_string());
          return 1;
        }
        if (!*ids) everywhere = true;
        else all.insert((*ids)->begin(), (*ids)->end());
      }
      if (!everywhere)
        for (uint32_t id : all) servers += (servers.empty() ? "" : ",") + std::to_string(id);
    }
    if (!servers.empty()) command += " servers=" + servers;
  }
  if (::setxattr(at.c_str(), kIoStepXattr, command.data(), command.size(), 0) != 0) {
    const int err = errno;
    error("iostep {}: {}: {}", o.verb, at,
          err == ENOENT ? whose + " has no I/O step on this mount" : std::strerror(err));
    return 1;
  }
  return 0;
}

void add_iosched(Commands& commands) {
  struct Options {
    std::vector<std::string> words;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* command = commands.add(
      "iosched",
      "the metadata delegate's scheduler of jobs' I/O steps: who holds tokens, the queue in the "
      "order it will be served, per-job token wait and I/O time; or 'policy NAME' to switch it",
      [o](const DaemonOptions& d) {
        if (!o->words.empty() && (o->words.size() != 2 || o->words[0] != "policy")) {
          std::fprintf(stderr, "pvfs-ctl: iosched takes no argument, or 'policy NAME' (see pvfs-ctl --help)\n");
          return 2;
        }
        return iosched(d, o->json, o->words.empty() ? std::string() : o->words[1]);
      });
  commands.add_daemon_options(command);
  command->add_option("policy", o->words, "policy NAME: switch to none, fcfs, sjf, sa-fcfs or sa-sjf")
      ->expected(0, 2);
  command->add_flag("--json", o->json, "one JSON object with the raw numbers instead of the tables");
}

void add_iostep(Commands& commands) {
  struct Options {
    IostepOptions step;
    uint64_t bytes = 0;
    CLI::Option* bytes_option = nullptr;
  };
  auto o = std::make_shared<Options>();
  auto* command = commands.add(
      "iostep",
      "open, end or show a job's I/O step on a mounted pvfs: the mount's client holds the job's "
      "writes until the scheduler grants it a token",
      [o](const DaemonOptions&) {
        if (o->bytes_option->count()) o->step.bytes = o->bytes;
        return iostep(o->step);
      });
  command->add_option("action", o->step.verb, "begin, end or status")
      ->required()
      ->check(CLI::IsMember({"begin", "end", "status"}));
  command->add_option("paths", o->step.paths,
                      "files or directories on the mount the step writes (their layouts give its servers)")
      ->required();
  command->add_option("-j,--job", o->step.job, "the job id [the caller's: PVFS_JOBID, SLURM_JOB_ID, ...]");
  o->bytes_option = command->add_option("-b,--bytes", o->bytes, "begin: the bytes the step will write (for SJF), e.g. 64G")
                        ->transform(size_transform());
  command->add_option("-s,--servers", o->step.servers,
                      "begin: the storage servers it writes to, e.g. 1,3 [from the paths' layouts]")
      ->check(server_list_check());
}

}  // namespace pvfs::ctl
