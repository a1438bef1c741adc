#include "utils/ctl/ctl_cluster.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace pvfs::ctl {

bool on_pvfs(const std::string& path) {
  std::error_code ec;
  const auto canonical = std::filesystem::canonical(path, ec);
  if (ec) return false;
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream mountinfo;
  mountinfo << in.rdbuf();
  return mount_type_of(mountinfo.str(), canonical.string()) == kPvfsMountType;
}

std::optional<Cluster> open_cluster(const DaemonOptions& options, const char* command) {
  if (options.config_path.empty()) {
    error("{}: no cluster config: give -c FILE or set PVFS_CONFIG", command);
    return std::nullopt;
  }
  auto config = Config::load(options.config_path);
  if (!config) {
    // The detail names the file and the key: the command adds nothing.
    error("{}", config.status().detail());
    return std::nullopt;
  }
  auto key = load_secret(config->secret_file);
  if (!key) {
    error("{}: {}", command, key.status().to_string());
    return std::nullopt;
  }
  Cluster cluster{std::move(*config), *key, options.timeout};
  if (cluster.timeout.count() <= 0)
    cluster.timeout = std::chrono::milliseconds(std::max<uint32_t>(cluster.config.connect_timeout_ms, 1));
  return cluster;
}

}  // namespace pvfs::ctl
