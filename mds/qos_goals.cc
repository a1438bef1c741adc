#include "mds/qos_goals.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "shared/request_limits.h"

namespace pvfs::mds {

namespace {

constexpr std::string_view kGoalsMagic = "pvfs-qos-goals 2";
constexpr std::string_view kGoalsMagicV1 = "pvfs-qos-goals 1";  // goals without ids

uint64_t fnv1a(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

Status corrupt(int line, std::string_view what) {
  return Status(Errc::corrupt, fmt::format("QoS goals, line {}: {}", line, what));
}

Status sync_path(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Status(Errc::io, fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return Status(Errc::io, fmt::format("cannot sync {}: {}", path.string(), std::strerror(err)));
  return {};
}

}  // namespace

Status check_goal_job(std::string_view job) {
  if (job.empty()) return Status(Errc::invalid_argument, "a QoS goal needs a job id");
  if (job.size() > kMaxJobIdBytes)
    return Status(Errc::invalid_argument, fmt::format("job id longer than {} bytes", kMaxJobIdBytes));
  for (unsigned char c : job)
    if (c <= ' ' || c == 0x7f)
      return Status(Errc::invalid_argument, "a job id with a goal has no whitespace or control characters");
  return {};
}

std::string serialize(const QosGoals& goals) {
  std::string out = fmt::format("{}\nversion {}\npolicy {}\n", kGoalsMagic, goals.version,
                                goals.policy.empty() ? "-" : goals.policy);
  for (const auto& [job, g] : goals.goals)
    out += fmt::format("goal {} {} {} {} {}\n", job, g.runtime_ms, g.start_unix_ms, g.bytes, g.id);
  out += fmt::format("checksum {:016x}\n", fnv1a(out));
  return out;
}

Result<QosGoals> parse_goals(std::string_view text) {
  const size_t at = text.rfind("checksum ");
  if (at == std::string_view::npos || (at > 0 && text[at - 1] != '\n'))
    return Status(Errc::corrupt, "QoS goals: no checksum line (a truncated file?)");
  {
    std::istringstream tail{std::string(text.substr(at + 9))};
    std::string hex, extra;
    tail >> hex;
    if (tail >> extra) return Status(Errc::corrupt, "QoS goals: text after the checksum line");
    if (hex.size() != 16 || hex != fmt::format("{:016x}", fnv1a(text.substr(0, at))))
      return Status(Errc::corrupt, "QoS goals: checksum mismatch (a truncated or edited file?)");
  }
  std::istringstream in{std::string(text.substr(0, at))};
  std::string line;
  int n = 0;
  QosGoals out;
  if (!std::getline(in, line) || (line != kGoalsMagic && line != kGoalsMagicV1))
    return corrupt(1, fmt::format("expected \"{}\"", kGoalsMagic));
  const bool with_ids = line == kGoalsMagic;
  ++n;
  bool have_version = false, have_policy = false;
  while (std::getline(in, line)) {
    ++n;
    std::istringstream f(line);
    std::string key;
    f >> key;
    if (key == "version") {
      if (!(f >> out.version)) return corrupt(n, "bad version");
      have_version = true;
    } else if (key == "policy") {
      if (!(f >> out.policy)) return corrupt(n, "bad policy");
      if (out.policy == "-") out.policy.clear();
      have_policy = true;
    } else if (key == "goal") {
      QosGoal g;
      if (!(f >> g.job >> g.runtime_ms >> g.start_unix_ms >> g.bytes) || (with_ids && !(f >> g.id)))
        return corrupt(n, "bad goal");
      if (!check_goal_job(g.job).ok() || g.runtime_ms == 0) return corrupt(n, "bad goal");
      if (!out.goals.emplace(g.job, g).second) return corrupt(n, "a job's goal twice");
    } else {
      return corrupt(n, fmt::format("unknown field \"{}\"", key));
    }
    std::string extra;
    if (f >> extra) return corrupt(n, "trailing text");
  }
  if (!have_version || !have_policy) return corrupt(n, "missing version or policy");
  return out;
}

Status save_goals(const std::filesystem::path& path, const QosGoals& goals) { return write_durably(path, serialize(goals)); }

Status write_durably(const std::filesystem::path& path, std::string_view text) {
  const auto tmp = std::filesystem::path(path.string() + ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc | std::ios::binary);
    out << text;
    out.flush();
    if (!out) return Status(Errc::io, "cannot write " + tmp.string());
  }
  if (Status st = sync_path(tmp, O_RDONLY); !st.ok()) return st;
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status(Errc::io, "cannot rename " + tmp.string() + ": " + ec.message());
  return sync_path(path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path(), O_RDONLY | O_DIRECTORY);
}

Result<std::optional<std::string>> read_if_exists(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::optional<std::string>{};
    return Status(Errc::io, "cannot read " + path.string());
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return std::optional<std::string>(buf.str());
}

Result<QosGoals> load_goals(const std::filesystem::path& path) {
  auto text = read_if_exists(path);
  if (!text) return text.status();
  if (!*text) return QosGoals{};
  auto goals = parse_goals(**text);
  if (!goals) return Status(goals.code(), fmt::format("{}: {}", path.string(), goals.status().detail()));
  return goals;
}

}  // namespace pvfs::mds
