#include "config/config_keys.h"

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "shared/text_format.h"

namespace pvfs::config_keys {

namespace {

struct Section {
  std::string_view name;
  std::vector<std::string_view> keys;
};

// The sections (tables) of the file and their keys, as Config::load reads them.
const std::vector<Section>& sections() {
  static const std::vector<Section> all = {
      {"layout", {"stripe_size", "stripe_count", "full_percent"}},
      {"timeouts", {"rpc_ms", "busy_limit_ms", "connect_ms", "heartbeat_interval_ms", "heartbeat_timeout_ms"}},
      {"mds_tuning", {"sync_interval_ms", "fileset_per_top_directory", "orphan_lease_ms", "open_lease_ms", "reserve_mb",
                      "dir_lease_ms", "dir_lease_max_entries"}},
      {"mds_cluster",
       {"placement", "tune_interval_ms", "dead_after_ms", "lease_ms", "threshold", "thresholding", "top_off",
        "divergent", "backlog", "busy", "overload_guard", "floor_share"}},
      {"scheduling",
       {"dispatch_min_bytes", "redirect_margin_bytes", "redirect_skew_factor", "probe_timeout_ms", "load_ttl_ms",
        "maintainer_threads", "maintainer_interval_ms", "fragment_gc_grace_ms"}},
      {"elevator", {"policy", "quantum", "quantum_unit", "max_merge_bytes", "lambda", "queue_depth",
                    "urgent_max_service_ms"}},
      {"qos", {"policy", "period_ms", "epoch_ms", "min_window_ms", "train_max_error"}},
      {"storage", {"inline_max_bytes", "inline_max_latency_us", "reserve_mb"}},
      {"emulated_disk", {"seek_ms", "bandwidth_bytes"}},
      {"iosched", {"policy", "lease_ms", "max_wait_s", "idle_ms", "reads", "gather_ms"}},
      {"locks", {"lease_ms"}},
      {"client", {"attr_timeout_s", "entry_timeout_s", "write_behind_bytes"}},
      {"network", {"local_sockets"}},
      {"security", {"encrypt", "root_squash", "root_squash_except"}},
  };
  return all;
}

// The keys of one [[mds]] or [[server]] entry.
const std::vector<std::string_view> kDaemonKeys = {"id", "address", "data_dir", "metrics"};
// Keys of the top level that are not sections.
const std::vector<std::string_view> kTopKeys = {"secret_file", "mds", "server"};

const Section* find_section(std::string_view name) {
  for (const auto& s : sections())
    if (s.name == name) return &s;
  return nullptr;
}

// " (did you mean 'X'?)" when `name` looks like a typo of one of `known`,
// or, for a key, when it is a key of another section (`stripe_size` at the
// top level, `rpc_ms` under [client]).
std::string hint(std::string_view name, const std::vector<std::string_view>& known, std::string_view prefix) {
  if (std::string close = closest_name(name, known); !close.empty())
    return fmt::format(" (did you mean '{}{}'?)", prefix, close);
  for (const auto& s : sections())
    for (std::string_view k : s.keys)
      if (k == name && s.name != prefix.substr(0, prefix.size() ? prefix.size() - 1 : 0))
        return fmt::format(" (it belongs in [{}])", s.name);
  return {};
}

Status unknown(const std::filesystem::path& file, std::string_view what, std::string_view full,
               const std::string& suggestion) {
  return Status(Errc::invalid_argument,
                fmt::format("{}: unknown {} '{}'{}", file.string(), what, full, suggestion));
}

Status check_table(const toml::table& table, const std::vector<std::string_view>& known,
                   std::string_view where, const std::filesystem::path& file) {
  const std::string prefix = std::string(where) + ".";
  for (const auto& [key, node] : table) {
    const std::string_view name = key.str();
    bool found = false;
    for (std::string_view k : known) found = found || k == name;
    if (!found) return unknown(file, "key", prefix + std::string(name), hint(name, known, prefix));
  }
  return {};
}

}  // namespace

Status check(const toml::table& root, const std::filesystem::path& file) {
  std::vector<std::string_view> top = kTopKeys;
  for (const auto& s : sections()) top.push_back(s.name);
  for (const auto& [key, node] : root) {
    const std::string_view name = key.str();
    if (name == "mds" || name == "server") {
      const toml::array* entries = node.as_array();
      if (!entries) continue;  // load() says it must be an array of tables
      for (size_t i = 0; i < entries->size(); ++i)
        if (const toml::table* t = (*entries)[i].as_table())
          if (Status s = check_table(*t, kDaemonKeys, fmt::format("{}[{}]", name, i), file); !s.ok()) return s;
      continue;
    }
    if (name == "secret_file") continue;
    const Section* section = find_section(name);
    if (!section) {
      if (node.is_table()) {
        std::string close = closest_name(name, top);
        return unknown(file, "section", fmt::format("[{}]", name),
                       close.empty() ? std::string() : fmt::format(" (did you mean [{}]?)", close));
      }
      return unknown(file, "key", name, hint(name, top, ""));
    }
    const toml::table* table = node.as_table();
    if (!table)
      return Status(Errc::invalid_argument,
                    fmt::format("{}: '{}' must be a section ([{}]), not a value", file.string(), name, name));
    if (Status s = check_table(*table, section->keys, name, file); !s.ok()) return s;
  }
  return {};
}

}  // namespace pvfs::config_keys
