// Parsing of pvfsmount's -o list (see mount_options.h). Table-free on
// purpose: each option is one branch, so the accepted set reads top to bottom.
#include "fs/mount_options.h"

#include <charconv>
#include <cmath>
#include <span>

#include <fmt/format.h>

#include "shared/text_format.h"

namespace pvfs {
namespace {

// mount(8) flags that libfuse turns into kernel mount flags.
constexpr std::string_view kKernelFlags[] = {
    "dev", "nodev", "suid", "nosuid", "exec", "noexec",
    "sync", "async", "dirsync", "noatime", "nodiratime",
};

// mount(8) and fstab flags that mean nothing to a FUSE file system (or are
// the kernel's defaults anyway); helpers must accept them.
constexpr std::string_view kIgnoredFlags[] = {
    "auto", "noauto", "user", "nouser", "users", "_netdev", "defaults", "nofail",
    "relatime", "atime", "diratime",
};

bool contains(std::span<const std::string_view> set, std::string_view word) {
  for (auto s : set)
    if (s == word) return true;
  return false;
}

// [A-Za-z_][A-Za-z0-9_]*, what a shell accepts as a variable name.
bool is_variable_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool digit = c >= '0' && c <= '9';
    if (!letter && !digit && c != '_') return false;
  }
  return true;
}

Status bad_value(std::string_view key, std::string_view value, std::string_view want) {
  return Status(Errc::invalid_argument,
                fmt::format("bad value '{}' for mount option '{}' (want {})", value, key, want));
}

Result<double> parse_seconds(std::string_view key, std::string_view value) {
  double out = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || ptr != value.data() + value.size() || !std::isfinite(out) || out < 0)
    return bad_value(key, value, "seconds >= 0");
  return out;
}

Result<uint64_t> parse_uint(std::string_view key, std::string_view value, uint64_t min,
                            uint64_t max) {
  uint64_t out = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || ptr != value.data() + value.size() || out < min || out > max)
    return bad_value(key, value, fmt::format("an integer in {}..{}", min, max));
  return out;
}

// Applies one "key" or "key=value" item to `o`.
Status apply(MountOptions& o, std::string_view item) {
  auto eq = item.find('=');
  std::string_view key = item.substr(0, eq);
  bool has_value = eq != std::string_view::npos;
  std::string_view value = has_value ? item.substr(eq + 1) : std::string_view{};

  auto flag = [&](bool& field, bool to) -> Status {
    if (has_value)
      return Status(Errc::invalid_argument, fmt::format("mount option '{}' takes no value", key));
    field = to;
    return {};
  };
  auto need_value = [&](std::string_view form) -> Status {
    if (!has_value || value.empty())
      return Status(Errc::invalid_argument,
                    fmt::format("mount option '{}' needs a value ({}={})", key, key, form));
    return {};
  };

  // key=N: an integer in [min, max], handed to `store`.
  auto integer = [&](std::string_view form, uint64_t min, uint64_t max, auto store) -> Status {
    if (Status s = need_value(form); !s.ok()) return s;
    auto n = parse_uint(key, value, min, max);
    if (!n) return n.status();
    store(*n);
    return {};
  };

  if (key == "attr_timeout" || key == "entry_timeout") {
    if (Status s = need_value("SECONDS"); !s.ok()) return s;
    auto seconds = parse_seconds(key, value);
    if (!seconds) return seconds.status();
    (key == "attr_timeout" ? o.attr_timeout_s : o.entry_timeout_s) = *seconds;
    return {};
  }
  if (key == "writeback_cache") return flag(o.writeback_cache, true);
  if (key == "no_writeback_cache") return flag(o.writeback_cache, false);
  if (key == "direct_io") return flag(o.direct_io, true);
  if (key == "allow_other") return flag(o.allow_other, true);
  if (key == "default_permissions") return flag(o.default_permissions, true);
  if (key == "no_default_permissions") return flag(o.default_permissions, false);
  if (key == "security_label") return flag(o.security_label, true);
  if (key == "no_security_label") return flag(o.security_label, false);
  if (key == "ro") return flag(o.read_only, true);
  if (key == "rw") return flag(o.read_only, false);
  if (key == "jobid_var") {
    if (Status s = need_value("NAME"); !s.ok()) return s;
    if (!is_variable_name(value)) return bad_value(key, value, "an environment variable name");
    o.jobid_var = std::string(value);
    return {};
  }
  if (key == "dispatch") {
    if (Status s = need_value("POLICY"); !s.ok()) return s;
    auto policy = sched::parse_policy(value);
    if (!policy) return bad_value(key, value, "fixed, random, two-choice, collab or preassign");
    o.dispatch = *policy;
    return {};
  }
  if (key == "locks") {
    if (Status s = need_value("WHERE"); !s.ok()) return s;
    if (value == "cluster") o.cluster_locks = true;
    else if (value == "local") o.cluster_locks = false;
    else return bad_value(key, value, "cluster or local");
    return {};
  }
  if (key == "log") {
    if (Status s = need_value("FILE"); !s.ok()) return s;
    o.log_file = std::string(value);
    return {};
  }
  if (key == "secret") {
    if (Status s = need_value("FILE"); !s.ok()) return s;
    o.secret_file = std::string(value);
    return {};
  }
  if (key == "max_threads")
    return integer("N", 1, MountOptions::kMaxMaxThreads, [&](uint64_t n) { o.max_threads = static_cast<unsigned>(n); });
  if (key == "max_background")
    return integer("N", 1, MountOptions::kMaxMaxBackground,
                   [&](uint64_t n) { o.max_background = static_cast<unsigned>(n); });
  if (key == "fsname") {
    if (Status s = need_value("NAME"); !s.ok()) return s;
    o.fsname = std::string(value);
    return {};
  }
  if (key == "write_behind") {
    if (Status s = need_value("SIZE"); !s.ok()) return s;
    auto bytes = parse_size(value);
    if (!bytes || *bytes > MountOptions::kMaxWriteBehind)
      return bad_value(key, value, "a size up to 1G, such as 0, 512K or 8M");
    o.write_behind = *bytes;
    return {};
  }
  if (key == "timeout")
    return integer("MS", 1, UINT32_MAX, [&](uint64_t ms) { o.rpc_timeout_ms = static_cast<uint32_t>(ms); });
  if (contains(kKernelFlags, key)) {
    bool ignored = false;
    if (Status s = flag(ignored, true); !s.ok()) return s;
    o.kernel_flags.emplace_back(key);
    return {};
  }
  // mount(8) may hand a helper "user=NAME" for user mounts; it is for mtab.
  if (contains(kIgnoredFlags, key) && (!has_value || key == "user")) return {};
  // fstab options for other programs: x-systemd.automount, comment=...
  if (key.starts_with("x-") || key == "comment") return {};
  return Status(Errc::invalid_argument, fmt::format("unknown mount option '{}'", item));
}

// libfuse splits -o lists at commas; a backslash escapes the next character.
std::string escape_option_value(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == ',' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

Result<MountOptions> parse_mount_options(std::string_view list) {
  MountOptions o;
  while (!list.empty()) {
    auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (item.empty()) continue;
    if (Status s = apply(o, item); !s.ok()) return s;
  }
  return o;
}

std::string MountOptions::fuse_option_list(std::string_view default_fsname) const {
  std::string out = "subtype=pvfs,fsname=";
  out += escape_option_value(fsname.empty() ? default_fsname : std::string_view(fsname));
  out += read_only ? ",ro" : ",rw";
  if (allow_other) out += ",allow_other";
  if (default_permissions) out += ",default_permissions";
  for (const auto& f : kernel_flags) out += "," + f;
  return out;
}

}  // namespace pvfs
