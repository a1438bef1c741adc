#include "utils/ctl/ctl_iosched.h"

#include <sys/xattr.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "fs/client.h"
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
          err == ENOENT ? "the job has no I/O step on this mount" : std::strerror(err));
    return 1;
  }
  return 0;
}

}  // namespace pvfs::ctl
