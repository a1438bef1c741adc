#include "config/config.h"

#include <arpa/inet.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <chrono>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "config/config_keys.h"
#include "shared/text_format.h"


namespace pvfs {

namespace {

Status key_error(std::string_view key, std::string_view what) {
  return Status(Errc::invalid_argument, fmt::format("config key '{}': {}", key, what));
}

// Reads an optional unsigned integer key into `out` (left alone when absent).
template <typename T>
Status read_uint(const toml::table& t, std::string_view section, std::string_view key, T& out) {
  const toml::node* node = t.get(key);
  std::string full = section.empty() ? std::string(key) : fmt::format("{}.{}", section, key);
  if (!node) return {};
  // value_exact: toml++'s value<int64_t>() would also take `true` as 1 and 2.0 as 2.
  auto v = node->value_exact<int64_t>();
  if (!v || *v < 0 || static_cast<uint64_t>(*v) > std::numeric_limits<T>::max())
    return key_error(full, "must be a non-negative integer in range");
  out = static_cast<T>(*v);
  return {};
}

Status read_double(const toml::table& t, std::string_view section, std::string_view key,
                   double& out) {
  const toml::node* node = t.get(key);
  if (!node) return {};
  auto v = node->value<double>();
  if (!v || *v < 0) return key_error(fmt::format("{}.{}", section, key), "must be a number >= 0");
  out = *v;
  return {};
}

Status read_bool(const toml::table& t, std::string_view section, std::string_view key, bool& out) {
  const toml::node* node = t.get(key);
  if (!node) return {};
  auto v = node->value_exact<bool>();
  if (!v) return key_error(fmt::format("{}.{}", section, key), "must be true or false");
  out = *v;
  return {};
}

// Reads an optional key naming one of a policy's values into `out` (left
// alone when absent), parsed by the policy's own parse function; a wrong
// name is an error that lists the valid ones.
template <typename Enum, size_t N>
Status read_enum(const toml::table& t, std::string_view section, std::string_view key, Enum& out,
                 const std::array<Enum, N>& all, std::string_view (*name)(Enum),
                 std::optional<Enum> (*parse)(std::string_view)) {
  const std::string full = fmt::format("{}.{}", section, key);
  const toml::node* node = t.get(key);
  if (!node) return {};
  auto text = node->value_exact<std::string>();
  if (!text) return key_error(full, fmt::format("must be a string ({})", choices(all, name)));
  auto value = parse(*text);
  if (!value) return key_error(full, fmt::format("must be {}, not '{}'", choices(all, name), *text));
  out = *value;
  return {};
}

// Reads an optional string key; a present key of another type is an error
// rather than being taken as absent (`data_dir = 5` used to be ignored).
Result<std::optional<std::string>> read_string(const toml::table& t, std::string_view key,
                                               std::string_view full) {
  const toml::node* node = t.get(key);
  if (!node) return std::optional<std::string>();
  auto v = node->value_exact<std::string>();
  if (!v) return key_error(full, "must be a string");
  return std::optional<std::string>(std::move(*v));
}

Result<std::vector<DaemonEntry>> read_daemons(const toml::table& root, std::string_view key,
                                              const std::filesystem::path& base) {
  std::vector<DaemonEntry> out;
  const toml::node* node = root.get(key);
  if (!node) return out;
  const toml::array* arr = node->as_array();
  if (!arr) return key_error(key, "must be an array of tables ([[" + std::string(key) + "]])");
  std::set<uint32_t> ids;
  for (size_t i = 0; i < arr->size(); ++i) {
    const toml::table* t = (*arr)[i].as_table();
    std::string where = fmt::format("{}[{}]", key, i);
    if (!t) return key_error(where, "must be a table");
    DaemonEntry e;
    e.id = static_cast<uint32_t>(i);
    if (Status s = read_uint(*t, where, "id", e.id); !s.ok()) return s;
    if (!ids.insert(e.id).second) return key_error(where + ".id", fmt::format("duplicate id {}", e.id));
    auto addr = read_string(*t, "address", where + ".address");
    if (!addr) return addr.status();
    if (!*addr) return key_error(where + ".address", "missing (want \"host:port\")");
    auto ep = parse_endpoint(**addr);
    if (!ep) return key_error(where + ".address", ep.status().detail());
    e.address = *ep;
    auto dir = read_string(*t, "data_dir", where + ".data_dir");
    if (!dir) return dir.status();
    if (*dir) {
      std::filesystem::path p(**dir);
      e.data_dir = p.is_absolute() ? p : base / p;
    }
    auto metrics = read_string(*t, "metrics", where + ".metrics");
    if (!metrics) return metrics.status();
    if (*metrics) {
      auto mep = parse_endpoint(**metrics);
      if (!mep) return key_error(where + ".metrics", mep.status().detail());
      e.metrics = *mep;
    }
    out.push_back(std::move(e));
  }
  return out;
}

bool valid_ip(const std::string& text) {
  in6_addr v6{};
  in_addr v4{};
  return ::inet_pton(AF_INET, text.c_str(), &v4) == 1 || ::inet_pton(AF_INET6, text.c_str(), &v6) == 1;
}

// Shortest text that reads back as exactly `v`, and as a TOML float, not an
// integer (ostream's default 6 digits lost precision: 0.1234567 -> 0.123457).
std::string toml_float(double v) {
  std::string text = fmt::format("{}", v);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::string quoted(std::string_view text) {
  std::ostringstream out;
  out << toml::value<std::string>(std::string(text));
  return out.str();
}

// The inline gate's latency bound in the key's whole microseconds.
uint32_t inline_latency_us(const elevator::InlineOptions& o) {
  return static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::microseconds>(o.max_latency).count());
}

}  // namespace

Result<Config> Config::load(const std::filesystem::path& file) {
  // toml++ would say "FILE:0:0: File could not be opened for reading".
  if (std::FILE* f = std::fopen(file.c_str(), "r")) {
    std::fclose(f);
  } else {
    const int err = errno;
    return Status::from_errno(err, fmt::format("cannot read config {}: {}", file.string(), std::strerror(err)));
  }
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    return Status(Errc::invalid_argument,
                  fmt::format("cannot read config {}: {}", file.string(), std::strerror(EISDIR)));
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& err) {
    const auto& where = err.source().begin;
    return Status(Errc::invalid_argument,
                  fmt::format("{}:{}:{}: {}", file.string(), where.line, where.column,
                              err.description()));
  } catch (const std::exception& err) {
    return Status(Errc::invalid_argument, fmt::format("{}: {}", file.string(), err.what()));
  }
  if (Status s = config_keys::check(root, file); !s.ok()) return s;
  Config c;
  c.path = std::filesystem::absolute(file);
  const auto base = c.path.parent_path();

  auto secret = read_string(root, "secret_file", "secret_file");
  if (!secret) return secret.status();
  if (!*secret) return key_error("secret_file", "missing (the cluster's shared key file)");
  const std::filesystem::path secret_path(**secret);
  c.secret_file = secret_path.is_absolute() ? secret_path : base / secret_path;

  auto mds = read_daemons(root, "mds", base);
  if (!mds) return mds.status();
  c.mds = std::move(*mds);
  if (c.mds.empty()) return key_error("mds", "at least one [[mds]] entry is needed");
  auto servers = read_daemons(root, "server", base);
  if (!servers) return servers.status();
  c.servers = std::move(*servers);

  if (auto* t = root.get_as<toml::table>("layout")) {
    if (Status s = read_uint(*t, "layout", "stripe_size", c.stripe_size); !s.ok()) return s;
    if (Status s = read_uint(*t, "layout", "stripe_count", c.stripe_count); !s.ok()) return s;
    if (c.stripe_size < 4096 || c.stripe_size % 4096 != 0)
      return key_error("layout.stripe_size", "must be a multiple of 4096");
    if (Status s = read_uint(*t, "layout", "full_percent", c.full_percent); !s.ok()) return s;
    if (c.full_percent < 1 || c.full_percent > 100)
      return key_error("layout.full_percent", "must be between 1 and 100");
  }
  if (auto* t = root.get_as<toml::table>("timeouts")) {
    if (Status s = read_uint(*t, "timeouts", "rpc_ms", c.rpc_timeout_ms); !s.ok()) return s;
    if (Status s = read_uint(*t, "timeouts", "busy_limit_ms", c.rpc_busy_limit_ms); !s.ok()) return s;
    if (Status s = read_uint(*t, "timeouts", "connect_ms", c.connect_timeout_ms); !s.ok()) return s;
    if (Status s = read_uint(*t, "timeouts", "heartbeat_interval_ms", c.heartbeat_interval_ms); !s.ok()) return s;
    if (Status s = read_uint(*t, "timeouts", "heartbeat_timeout_ms", c.heartbeat_timeout_ms); !s.ok()) return s;
    if (c.rpc_timeout_ms == 0) return key_error("timeouts.rpc_ms", "must be > 0");
  }
  if (auto* t = root.get_as<toml::table>("mds_tuning")) {
    if (Status s = read_uint(*t, "mds_tuning", "sync_interval_ms", c.mds_sync_interval_ms); !s.ok()) return s;
    if (Status s = read_bool(*t, "mds_tuning", "fileset_per_top_directory", c.fileset_per_top_directory);
        !s.ok())
      return s;
    if (Status s = read_uint(*t, "mds_tuning", "orphan_lease_ms", c.orphan_lease_ms); !s.ok()) return s;
    if (c.orphan_lease_ms < 100 || c.orphan_lease_ms > 86400000)
      return key_error("mds_tuning.orphan_lease_ms", "must be from 100 to 86400000");
    if (Status s = read_uint(*t, "mds_tuning", "open_lease_ms", c.open_lease_ms); !s.ok()) return s;
    if (c.open_lease_ms < 100 || c.open_lease_ms > 3600000)
      return key_error("mds_tuning.open_lease_ms", "must be from 100 to 3600000");
    if (Status s = read_uint(*t, "mds_tuning", "reserve_mb", c.mds_reserve_mb); !s.ok()) return s;
    if (c.mds_reserve_mb > 1048576) return key_error("mds_tuning.reserve_mb", "must be from 0 to 1048576");
    if (Status s = read_uint(*t, "mds_tuning", "dir_lease_ms", c.dir_lease_ms); !s.ok()) return s;
    if (c.dir_lease_ms > 60000) return key_error("mds_tuning.dir_lease_ms", "must be from 0 to 60000");
    if (Status s = read_uint(*t, "mds_tuning", "dir_lease_max_entries", c.dir_lease_max_entries); !s.ok())
      return s;
  }
  if (auto* t = root.get_as<toml::table>("mds_cluster")) {
    const char* sec = "mds_cluster";
    if (Status s = read_enum(*t, sec, "placement", c.mds_placement, placement::kPolicies, placement::policy_name,
                             placement::parse_policy);
        !s.ok())
      return s;
    if (Status s = read_uint(*t, sec, "tune_interval_ms", c.mds_tune_interval_ms); !s.ok()) return s;
    if (c.mds_tune_interval_ms == 0) return key_error("mds_cluster.tune_interval_ms", "must be > 0");
    if (Status s = read_uint(*t, sec, "dead_after_ms", c.mds_dead_after_ms); !s.ok()) return s;
    if (Status s = read_uint(*t, sec, "lease_ms", c.mds_lease_ms); !s.ok()) return s;
    if (Status s = read_double(*t, sec, "threshold", c.anu.threshold); !s.ok()) return s;
    if (!(c.anu.threshold >= 0 && c.anu.threshold < 1))
      return key_error("mds_cluster.threshold", "must be in [0, 1)");
    if (Status s = read_bool(*t, sec, "thresholding", c.anu.thresholding); !s.ok()) return s;
    if (Status s = read_bool(*t, sec, "top_off", c.anu.top_off); !s.ok()) return s;
    if (Status s = read_bool(*t, sec, "divergent", c.anu.divergent); !s.ok()) return s;
    if (Status s = read_bool(*t, sec, "backlog", c.anu.backlog); !s.ok()) return s;
    if (Status s = read_bool(*t, sec, "busy", c.anu.busy); !s.ok()) return s;
    if (Status s = read_bool(*t, sec, "overload_guard", c.anu.overload_guard); !s.ok()) return s;
    if (Status s = read_double(*t, sec, "floor_share", c.anu.floor_share); !s.ok()) return s;
    if (!(c.anu.floor_share >= 0 && c.anu.floor_share <= 1))
      return key_error("mds_cluster.floor_share", "must be in [0, 1]");
  }
  if (c.mds_dead_after_ms <= c.heartbeat_interval_ms)
    return key_error("mds_cluster.dead_after_ms", "must be longer than timeouts.heartbeat_interval_ms");
  if (c.mds_lease() <= c.heartbeat_interval_ms || c.mds_lease() >= c.mds_dead_after_ms)
    return key_error("mds_cluster.lease_ms",
                     "must be longer than timeouts.heartbeat_interval_ms and shorter than "
                     "mds_cluster.dead_after_ms");
  if (auto* t = root.get_as<toml::table>("scheduling")) {
    const char* sec = "scheduling";
    if (Status s = read_uint(*t, sec, "dispatch_min_bytes", c.dispatch_min_bytes); !s.ok()) return s;
    if (Status s = read_uint(*t, sec, "redirect_margin_bytes", c.redirect_margin_bytes); !s.ok()) return s;
    if (Status s = read_double(*t, sec, "redirect_skew_factor", c.redirect_skew_factor); !s.ok()) return s;
    if (!(c.redirect_skew_factor >= 0 && c.redirect_skew_factor <= 1000))
      return key_error("scheduling.redirect_skew_factor", "must be in [0, 1000]");
    if (Status s = read_uint(*t, sec, "probe_timeout_ms", c.probe_timeout_ms); !s.ok()) return s;
    if (Status s = read_uint(*t, sec, "load_ttl_ms", c.load_ttl_ms); !s.ok()) return s;
    if (Status s = read_uint(*t, sec, "maintainer_threads", c.maintainer_threads); !s.ok()) return s;
    if (Status s = read_uint(*t, sec, "maintainer_interval_ms", c.maintainer_interval_ms); !s.ok()) return s;
    if (Status s = read_uint(*t, sec, "fragment_gc_grace_ms", c.fragment_gc_grace_ms); !s.ok()) return s;
    if (c.probe_timeout_ms == 0) return key_error("scheduling.probe_timeout_ms", "must be > 0");
    if (c.maintainer_interval_ms == 0) return key_error("scheduling.maintainer_interval_ms", "must be > 0");
  }
  if (auto* t = root.get_as<toml::table>("elevator")) {
    const char* sec = "elevator";
    auto& e = c.elevator;
    if (Status s = read_enum(*t, sec, "policy", e.policy, elevator::kPolicies, elevator::policy_name,
                             elevator::parse_policy);
        !s.ok())
      return s;
    if (Status s = read_uint(*t, sec, "quantum", e.quantum); !s.ok()) return s;
    if (e.quantum == 0) return key_error("elevator.quantum", "must be > 0");
    if (Status s = read_enum(*t, sec, "quantum_unit", e.quantum_unit, elevator::kQuantumUnits,
                             elevator::quantum_unit_name, elevator::parse_quantum_unit);
        !s.ok())
      return s;
    if (Status s = read_uint(*t, sec, "max_merge_bytes", e.max_merge_bytes); !s.ok()) return s;
    if (e.max_merge_bytes == 0) return key_error("elevator.max_merge_bytes", "must be > 0");
    if (Status s = read_double(*t, sec, "lambda", e.lambda); !s.ok()) return s;
    if (!(e.lambda >= 1.0)) return key_error("elevator.lambda", "must be >= 1");
    if (Status s = read_uint(*t, sec, "queue_depth", c.elevator_queue_depth); !s.ok()) return s;
    if (Status s = read_uint(*t, sec, "urgent_max_service_ms", c.urgent_max_service_ms); !s.ok()) return s;
    if (c.urgent_max_service_ms == 0) return key_error("elevator.urgent_max_service_ms", "must be > 0");
  }
  if (auto* t = root.get_as<toml::table>("qos")) {
    if (Status s = read_enum(*t, "qos", "policy", c.qos_policy, qos::kQosPolicies, qos::qos_policy_name,
                             qos::parse_qos_policy);
        !s.ok())
      return s;
    if (Status s = read_uint(*t, "qos", "period_ms", c.qos_period_ms); !s.ok()) return s;
    if (c.qos_period_ms < 100 || c.qos_period_ms > 60000) return key_error("qos.period_ms", "must be in [100, 60000]");
    if (Status s = read_uint(*t, "qos", "epoch_ms", c.qos_epoch_ms); !s.ok()) return s;
    if (c.qos_epoch_ms < 10 || c.qos_epoch_ms > c.qos_period_ms)
      return key_error("qos.epoch_ms", "must be in [10, period_ms]");
    if (Status s = read_uint(*t, "qos", "min_window_ms", c.qos_min_window_ms); !s.ok()) return s;
    if (c.qos_min_window_ms > c.qos_period_ms / 4) return key_error("qos.min_window_ms", "must be <= period_ms / 4");
    if (Status s = read_double(*t, "qos", "train_max_error", c.qos_train_max_error); !s.ok()) return s;
    if (!(c.qos_train_max_error > 0 && c.qos_train_max_error <= 10))
      return key_error("qos.train_max_error", "must be in (0, 10]");
  }
  if (auto* t = root.get_as<toml::table>("storage")) {
    if (Status s = read_uint(*t, "storage", "inline_max_bytes", c.storage_inline.max_bytes); !s.ok()) return s;
    uint32_t latency_us = inline_latency_us(c.storage_inline);
    if (Status s = read_uint(*t, "storage", "inline_max_latency_us", latency_us); !s.ok()) return s;
    c.storage_inline.max_latency = std::chrono::microseconds(latency_us);
    if (Status s = read_uint(*t, "storage", "reserve_mb", c.storage_reserve_mb); !s.ok()) return s;
    if (c.storage_reserve_mb > 1048576) return key_error("storage.reserve_mb", "must be from 0 to 1048576");
  }
  if (auto* t = root.get_as<toml::table>("emulated_disk")) {
    if (Status s = read_double(*t, "emulated_disk", "seek_ms", c.emulated_seek_ms); !s.ok()) return s;
    if (Status s = read_uint(*t, "emulated_disk", "bandwidth_bytes", c.emulated_bandwidth_bytes); !s.ok()) return s;
  }
  if (auto* t = root.get_as<toml::table>("iosched")) {
    const char* sec = "iosched";
    auto policy = read_string(*t, "policy", "iosched.policy");
    if (!policy) return policy.status();
    if (*policy) c.iosched_policy = **policy;
    if (c.iosched_policy != "none" && c.iosched_policy != "fcfs" && c.iosched_policy != "sjf" &&
        c.iosched_policy != "sa-fcfs" && c.iosched_policy != "sa-sjf")
      return key_error("iosched.policy", "must be none, fcfs, sjf, sa-fcfs or sa-sjf");
    if (Status s = read_uint(*t, sec, "lease_ms", c.iosched_lease_ms); !s.ok()) return s;
    if (c.iosched_lease_ms < 100) return key_error("iosched.lease_ms", "must be at least 100");
    if (Status s = read_double(*t, sec, "max_wait_s", c.iosched_max_wait_s); !s.ok()) return s;
    if (c.iosched_max_wait_s > 1e6) return key_error("iosched.max_wait_s", "must be at most 1000000");
    if (Status s = read_uint(*t, sec, "idle_ms", c.iosched_idle_ms); !s.ok()) return s;
    if (Status s = read_bool(*t, sec, "reads", c.iosched_reads); !s.ok()) return s;
    if (Status s = read_uint(*t, sec, "gather_ms", c.iosched_gather_ms); !s.ok()) return s;
    if (c.iosched_gather_ms > 600000) return key_error("iosched.gather_ms", "must be at most 600000");
  }
  if (auto* t = root.get_as<toml::table>("locks")) {
    if (Status s = read_uint(*t, "locks", "lease_ms", c.lock_lease_ms); !s.ok()) return s;
    if (c.lock_lease_ms < 100 || c.lock_lease_ms > 3600000)
      return key_error("locks.lease_ms", "must be from 100 to 3600000");
  }
  if (auto* t = root.get_as<toml::table>("client")) {
    if (Status s = read_double(*t, "client", "attr_timeout_s", c.attr_timeout_s); !s.ok()) return s;
    if (Status s = read_double(*t, "client", "entry_timeout_s", c.entry_timeout_s); !s.ok()) return s;
    if (Status s = read_uint(*t, "client", "write_behind_bytes", c.write_behind_bytes); !s.ok()) return s;
    if (c.write_behind_bytes > (uint64_t{1} << 30))
      return key_error("client.write_behind_bytes", "must be at most 1073741824 (1 GiB)");
  }
  if (auto* t = root.get_as<toml::table>("network")) {
    if (Status s = read_bool(*t, "network", "local_sockets", c.local_sockets); !s.ok()) return s;
  }
  if (auto* t = root.get_as<toml::table>("security")) {
    if (Status s = read_bool(*t, "security", "encrypt", c.encrypt); !s.ok()) return s;
    if (Status s = read_bool(*t, "security", "root_squash", c.root_squash); !s.ok()) return s;
    if (const toml::node* node = t->get("root_squash_except")) {
      const toml::array* arr = node->as_array();
      if (!arr) return key_error("security.root_squash_except", "must be an array of IP addresses");
      for (const auto& item : *arr) {
        auto v = item.value_exact<std::string>();
        if (!v || !valid_ip(*v))
          return key_error("security.root_squash_except",
                           "must be an array of IP addresses (\"127.0.0.1\", \"::1\")");
        c.root_squash_except.push_back(*v);
      }
    }
  }
  return c;
}

const DaemonEntry* Config::find_mds(uint32_t id) const {
  for (const auto& e : mds)
    if (e.id == id) return &e;
  return nullptr;
}

const DaemonEntry* Config::find_server(uint32_t id) const {
  for (const auto& e : servers)
    if (e.id == id) return &e;
  return nullptr;
}

std::string Config::render() const {
  std::ostringstream out;
  out << "# pvfs cluster configuration; every key is described in pvfs.toml(5).\n"
      << "# Relative paths are relative to this file's folder.\n\n"
      << "# The cluster's shared key: every connection proves it knows it.\n"
      << "secret_file = " << toml::value<std::string>(secret_file.string()) << "\n\n";
  auto daemons = [&](const char* key, const std::vector<DaemonEntry>& list) {
    for (const auto& e : list) {
      out << "[[" << key << "]]\n"
          << "id = " << e.id << "\n"
          << "address = " << toml::value<std::string>(e.address.to_string()) << "\n";
      if (!e.data_dir.empty())
        out << "data_dir = " << toml::value<std::string>(e.data_dir.string()) << "\n";
      if (e.metrics)
        out << "metrics = " << toml::value<std::string>(e.metrics->to_string())
            << "    # Prometheus /metrics, unauthenticated\n";
      out << "\n";
    }
  };
  out << "# Metadata servers.\n";
  daemons("mds", mds);
  out << "# Storage servers.\n";
  daemons("server", servers);
  out << "[layout]\n"
      << "stripe_size = " << stripe_size << "    # bytes per stripe\n"
      << "stripe_count = " << stripe_count << "    # objects per file; 0 = all servers\n"
      << "full_percent = " << full_percent << "    # servers this full get no new files\n\n"
      << "[timeouts]\n"
      << "rpc_ms = " << rpc_timeout_ms << "    # a call fails with ETIMEDOUT after this\n"
      << "busy_limit_ms = " << rpc_busy_limit_ms << "    # ... or after this, if the daemon says it is busy\n"
      << "connect_ms = " << connect_timeout_ms << "\n"
      << "heartbeat_interval_ms = " << heartbeat_interval_ms << "\n"
      << "heartbeat_timeout_ms = " << heartbeat_timeout_ms << "\n\n"
      << "[mds_tuning]\n"
      << "sync_interval_ms = " << mds_sync_interval_ms << "    # LMDB fsync period\n"
      << "fileset_per_top_directory = " << (fileset_per_top_directory ? "true" : "false")
      << "    # mkdir in / makes a new file set\n"
      << "orphan_lease_ms = " << orphan_lease_ms
      << "    # an unlinked file a dead client kept open is deleted after this\n"
      << "open_lease_ms = " << open_lease_ms
      << "    # a file removed while another client has it open lasts until this after its close\n"
      << "reserve_mb = " << mds_reserve_mb << "    # below this free, new names get ENOSPC; removals still work\n"
      << "dir_lease_ms = " << dir_lease_ms
      << "    # clients answer lookups of absent names for this long, until recalled; 0: off\n"
      << "dir_lease_max_entries = " << dir_lease_max_entries << "    # larger directories get no lease\n\n"
      << "# With several [[mds]]: how they share the file sets (ANU placement).\n"
      << "[mds_cluster]\n"
      << "placement = " << quoted(placement::policy_name(mds_placement)) << "    # "
      << choices(placement::kPolicies, placement::policy_name) << "\n"
      << "tune_interval_ms = " << mds_tune_interval_ms << "    # how often the delegate rescales the map\n"
      << "dead_after_ms = " << mds_dead_after_ms << "    # a silent member's file sets move after this\n"
      << (mds_lease_ms ? "lease_ms = " + std::to_string(mds_lease_ms)
                       : std::string("# lease_ms = (2/3 of the way from heartbeat_interval_ms to dead_after_ms)"))
      << "    # a member cut off from the delegate stops serving after this\n"
      << "threshold = " << toml_float(anu.threshold) << "    # tune only outside [(1-k)L, (1+k)L]\n"
      << "thresholding = " << (anu.thresholding ? "true" : "false") << "\n"
      << "top_off = " << (anu.top_off ? "true" : "false") << "    # only shrink the overloaded\n"
      << "divergent = " << (anu.divergent ? "true" : "false")
      << "    # only tune members moving away from the average\n"
      << "backlog = " << (anu.backlog ? "true" : "false")
      << "    # shrink a member whose queue grows, whatever the average\n"
      << "busy = " << (anu.busy ? "true" : "false")
      << "    # tune on each member's busy fraction through a queue model\n"
      << "overload_guard = " << (anu.overload_guard ? "true" : "false")
      << "    # no new map may overload a member by its file sets' requests\n"
      << "floor_share = " << toml_float(anu.floor_share)
      << "    # an idle member below this part of an even share is raised to it\n\n"
      << "[scheduling]\n"
      << "dispatch_min_bytes = " << dispatch_min_bytes << "    # smaller write pieces go home unprobed\n"
      << "redirect_margin_bytes = " << redirect_margin_bytes
      << "    # redirect only to a server lighter than home by more than this\n"
      << "redirect_skew_factor = " << toml_float(redirect_skew_factor)
      << "    # preassign: ... and only when home is more than this x as loaded\n"
      << "probe_timeout_ms = " << probe_timeout_ms << "\n"
      << "load_ttl_ms = " << load_ttl_ms << "    # how long servers trust loads learned of peers\n"
      << "maintainer_threads = " << maintainer_threads << "    # concurrent pull-backs per server\n"
      << "maintainer_interval_ms = " << maintainer_interval_ms << "\n"
      << "fragment_gc_grace_ms = " << fragment_gc_grace_ms << "\n\n"
      << "[elevator]\n"
      << "policy = " << quoted(elevator::policy_name(elevator.policy)) << "    # "
      << choices(elevator::kPolicies, elevator::policy_name) << "\n"
      << "quantum = " << elevator.quantum << "    # served per object per round\n"
      << "quantum_unit = " << quoted(elevator::quantum_unit_name(elevator.quantum_unit)) << "    # "
      << choices(elevator::kQuantumUnits, elevator::quantum_unit_name) << "\n"
      << "max_merge_bytes = " << elevator.max_merge_bytes << "\n"
      << "lambda = " << toml_float(elevator.lambda) << "    # dynamic deadline factor, >= 1\n"
      << "queue_depth = " << elevator_queue_depth << "    # operations on the disk at once; 0 = disk threads\n"
      << "urgent_max_service_ms = " << urgent_max_service_ms << "\n\n"
      << "[qos]\n"
      << "policy = " << quoted(qos::qos_policy_name(qos_policy)) << "    # "
      << choices(qos::kQosPolicies, qos::qos_policy_name) << "\n"
      << "period_ms = " << qos_period_ms << "    # the coordinator plans service windows this often\n"
      << "epoch_ms = " << qos_epoch_ms << "    # locality measured per epoch\n"
      << "min_window_ms = " << qos_min_window_ms << "\n"
      << "train_max_error = " << toml_float(qos_train_max_error)
      << "    # pvfs-ctl qos train grows the tree until its cross-validated error is below this\n\n"
      << "[storage]\n"
      << "inline_max_bytes = " << storage_inline.max_bytes
      << "    # larger disk operations always go to the disk threads; 0 = all do\n"
      << "inline_max_latency_us = " << inline_latency_us(storage_inline)
      << "    # smaller ones run on the network thread while they average below this per 64 KiB\n"
      << "reserve_mb = " << storage_reserve_mb << "    # below this free, data writes get ENOSPC (and go elsewhere)\n\n"
      << "[emulated_disk]\n"
      << "seek_ms = " << toml_float(emulated_seek_ms) << "\n"
      << "bandwidth_bytes = " << emulated_bandwidth_bytes << "    # 0 = a real disk, no emulation\n\n"
      << "# Jobs' I/O steps under the delegate's scheduler; see pvfs.toml(5).\n"
      << "[iosched]\n"
      << "policy = " << toml::value<std::string>(iosched_policy) << "    # none, fcfs, sjf, sa-fcfs or sa-sjf\n"
      << "lease_ms = " << iosched_lease_ms << "    # a silent client loses its token after this\n"
      << "max_wait_s = " << toml_float(iosched_max_wait_s) << "    # starvation guard; 0 = off\n"
      << "idle_ms = " << iosched_idle_ms << "    # transparent steps end after this much write silence; 0 = off\n"
      << "reads = " << (iosched_reads ? "true" : "false") << "    # reads also wait for the token\n"
      << "gather_ms = " << iosched_gather_ms << "    # after an idle spell, the first token waits this long; 0 = off\n\n"
      << "[locks]\n"
      << "lease_ms = " << lock_lease_ms << "    # a silent client loses its fcntl/flock locks after this\n\n"
      << "[client]\n"
      << "attr_timeout_s = " << toml_float(attr_timeout_s) << "\n"
      << "entry_timeout_s = " << toml_float(entry_timeout_s) << "\n"
      << "write_behind_bytes = " << write_behind_bytes
      << "    # write() may return with this much of a file still on its way; 0 = waits\n\n"
      << "[network]\n"
      << "local_sockets = " << (local_sockets ? "true" : "false")
      << "    # peers on one host talk over a Unix-domain socket, not TCP\n\n"
      << "# Every frame is authenticated under per-connection keys; see pvfs.toml(5).\n"
      << "[security]\n"
      << "encrypt = " << (encrypt ? "true" : "false") << "    # also encrypt every frame\n"
      << "root_squash = " << (root_squash ? "true" : "false")
      << "    # uid 0 of clients is nobody (65534) on the MDS\n"
      << "root_squash_except = [";
  for (size_t i = 0; i < root_squash_except.size(); ++i)
    out << (i ? ", " : "") << toml::value<std::string>(root_squash_except[i]);
  out << "]    # client addresses whose root stays root\n";
  return out.str();
}

}  // namespace pvfs
