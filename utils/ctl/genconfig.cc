#include "utils/ctl/genconfig.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "shared/secret.h"

namespace pvfs::ctl {

namespace fs = std::filesystem;

namespace {

Status invalid(std::string message) { return Status(Errc::invalid_argument, std::move(message)); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The address as compared for duplicates: host names are case-insensitive.
std::string address_key(const Endpoint& ep) {
  std::string host = ep.host;
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return Endpoint{host, ep.port}.to_string();
}

// Writes `text` to `file` through a temporary file and a rename, so a
// failure leaves no half-written config behind.
Status write_file_atomically(const fs::path& file, const std::string& text) {
  const fs::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return Status(Errc::io, fmt::format("cannot write {}", tmp.string()));
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Status(Errc::io, fmt::format("cannot write {}: {}", file.string(), ec.message()));
  }
  return {};
}

std::string plural(size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

Result<std::vector<DaemonEntry>> parse_daemon_list(std::string_view text, std::string_view what) {
  std::vector<DaemonEntry> out;
  std::set<uint32_t> ids;
  if (trim(text).empty()) return invalid(fmt::format("{}: no addresses given", what));
  size_t position = 0;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    if (item.empty()) return invalid(fmt::format("{}: empty entry in the list", what));
    DaemonEntry e;
    e.id = static_cast<uint32_t>(position);
    std::string_view address = item;
    if (const size_t eq = item.find('='); eq != std::string_view::npos) {
      const std::string_view id_text = trim(item.substr(0, eq));
      auto [ptr, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), e.id);
      if (id_text.empty() || ec != std::errc() || ptr != id_text.data() + id_text.size())
        return invalid(fmt::format("{}: bad id in '{}': want ID=host:port", what, item));
      address = trim(item.substr(eq + 1));
    }
    auto ep = parse_endpoint(address);
    if (!ep) return invalid(fmt::format("{}: {}", what, ep.status().detail()));
    if (ep->port == 0)
      return invalid(fmt::format("{}: port 0 in '{}': a cluster on several hosts needs fixed ports",
                                 what, item));
    if (!ids.insert(e.id).second) return invalid(fmt::format("{}: id {} given twice", what, e.id));
    e.address = *ep;
    out.push_back(std::move(e));
    ++position;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

Result<Config> plan_config(const GenconfigOptions& options, const std::string& key_ref) {
  auto mds = parse_daemon_list(options.mds, "--mds");
  if (!mds) return mds.status();
  auto servers = parse_daemon_list(options.servers, "--servers");
  if (!servers) return servers.status();
  std::set<std::string> used;
  for (const auto* list : {&*mds, &*servers})
    for (const auto& e : *list)
      if (!used.insert(address_key(e.address)).second)
        return invalid(fmt::format("address {} is given twice: each daemon needs its own port",
                                   e.address.to_string()));
  if (options.data_dir.empty() || !options.data_dir.is_absolute())
    return invalid(fmt::format("--data-dir '{}' must be an absolute path (each host uses it as is)",
                               options.data_dir.string()));
  if (options.stripe_size < 4096 || options.stripe_size % 4096 != 0)
    return invalid(fmt::format("--stripe-size {} is not a positive multiple of 4096 (4K)",
                               options.stripe_size));
  if (options.stripe_count > servers->size())
    return invalid(fmt::format("--stripe-count {} is more than the {} given", options.stripe_count,
                               plural(servers->size(), "storage server", "storage servers")));
  Config config;
  config.secret_file = key_ref;
  config.stripe_size = options.stripe_size;
  config.stripe_count = options.stripe_count;
  for (auto& e : *mds) e.data_dir = options.data_dir / fmt::format("mds{}", e.id);
  for (auto& e : *servers) e.data_dir = options.data_dir / fmt::format("server{}", e.id);
  config.mds = std::move(*mds);
  config.servers = std::move(*servers);
  return config;
}

int genconfig(const GenconfigOptions& options) {
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "pvfs-ctl: genconfig: %s\n", message.c_str());
    return 1;
  };
  const fs::path out = fs::absolute(options.out).lexically_normal();
  const fs::path key = options.key.empty() ? out.parent_path() / "secret.key"
                                           : fs::absolute(options.key).lexically_normal();
  if (out == key) return fail(fmt::format("the config and the key cannot both be {}", out.string()));
  // Beside the config, the key is named relatively, so both files can be
  // copied to any folder together; elsewhere every host needs the same path.
  const bool key_beside = key.parent_path() == out.parent_path();
  const std::string key_ref = key_beside ? key.filename().string() : key.string();
  auto config = plan_config(options, key_ref);
  if (!config) return fail(config.status().detail());

  std::error_code ec;
  for (const fs::path& file : {out, key}) {
    if (fs::exists(fs::symlink_status(file, ec)) && !options.force)
      return fail(fmt::format("{} exists: give --force to overwrite it", file.string()));
    if (fs::is_directory(file, ec)) return fail(fmt::format("{} is a directory", file.string()));
  }
  if (!fs::is_directory(out.parent_path(), ec))
    return fail(fmt::format("folder {} does not exist", out.parent_path().string()));
  if (!fs::is_directory(key.parent_path(), ec))
    return fail(fmt::format("folder {} does not exist", key.parent_path().string()));

  // A new config goes with a new key: remove the old one first, as
  // generate_secret never overwrites.
  if (options.force && ::unlink(key.c_str()) != 0 && errno != ENOENT)
    return fail(fmt::format("cannot replace {}: {}", key.string(), std::strerror(errno)));
  if (Status s = generate_secret(key); !s.ok()) return fail(s.detail());
  if (Status s = write_file_atomically(out, config->render()); !s.ok()) {
    ::unlink(key.c_str());
    return fail(s.detail());
  }

  std::set<uint16_t> ports;
  for (const auto* list : {&config->mds, &config->servers})
    for (const auto& e : *list) ports.insert(e.address.port);
  const std::string stripes =
      config->stripe_count == 0 ? "all servers" : plural(config->stripe_count, "server", "servers");
  std::string text = fmt::format(
      "wrote {}: {}, {}, files striped in {} KiB units over {}\n"
      "wrote {}: the cluster's secret key (mode 0600; keep it private)\n\n"
      "Next steps (see \"Deploying on a cluster\" in the README):\n",
      out.string(), plural(config->mds.size(), "metadata server", "metadata servers"),
      plural(config->servers.size(), "storage server", "storage servers"),
      config->stripe_size / 1024, stripes, key.string());
  if (key_beside)
    text += fmt::format(
        "  1. copy both files to /etc/pvfs/ on every host (servers and clients):\n"
        "       install -D -m 0644 {} /etc/pvfs/pvfs.toml\n"
        "       install -D -m 0600 {} /etc/pvfs/{}\n",
        out.string(), key.string(), key.filename().string());
  else
    text += fmt::format(
        "  1. copy {} to /etc/pvfs/pvfs.toml and {} to the same path (mode 0600)\n"
        "     on every host (servers and clients)\n",
        out.string(), key.string());
  text += fmt::format(
      "  2. allow TCP port(s) {} between all hosts\n"
      "  3. on the metadata server host(s):\n"
      "       systemctl enable --now pvfs-mds@$(systemd-escape --path /etc/pvfs/pvfs.toml)\n"
      "     on each storage server host:\n"
      "       systemctl enable --now pvfs-server@$(systemd-escape --path /etc/pvfs/pvfs.toml)\n"
      "  4. check every daemon answers:\n"
      "       pvfs-ctl ping -c /etc/pvfs/pvfs.toml\n"
      "  5. on each client, add this line to /etc/fstab, then mkdir /mnt/pvfs; mount /mnt/pvfs\n"
      "       /etc/pvfs/pvfs.toml  /mnt/pvfs  fuse.pvfsmount  _netdev,nofail  0  0\n",
      fmt::join(ports, ", "));
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace pvfs::ctl
