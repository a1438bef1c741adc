// Job ids from /proc (see job_id.h): the pure choice from an environment
// block, and the cache that reads /proc at most once per process.
#include "fs/job_id.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "shared/text_format.h"

namespace pvfs {
namespace {

// Environment blocks can be large; job variables are normally near the top,
// and a truncated block only loses variables past the cut.
constexpr size_t kMaxEnvironBytes = size_t{1} << 20;

// The value of `name` in a NUL-separated environment block, or "" if unset.
std::string_view find_variable(std::string_view block, std::string_view name) {
  while (!block.empty()) {
    auto end = block.find('\0');
    std::string_view item = block.substr(0, end);
    block = end == std::string_view::npos ? std::string_view{} : block.substr(end + 1);
    if (item.size() > name.size() && item[name.size()] == '=' && item.starts_with(name))
      return item.substr(name.size() + 1);
  }
  return {};
}

std::string sanitize(std::string_view id) {
  std::string out(id.substr(0, kMaxJobIdBytes));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '_';
  return out;
}

// Whole contents of a small /proc file, or nullopt if it cannot be read.
std::optional<std::string> read_proc_file(const std::filesystem::path& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char chunk[4096];
  while (out.size() < max_bytes) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  if (out.size() > max_bytes) out.resize(max_bytes);
  return out;
}

}  // namespace

std::string pick_job_id(std::string_view environ_block, std::string_view comm, uint32_t uid,
                        std::string_view jobid_var) {
  for (std::string_view name : {std::string_view("PVFS_JOBID"), std::string_view("SLURM_JOB_ID"),
                                jobid_var}) {
    if (name.empty()) continue;
    if (auto value = find_variable(environ_block, name); !value.empty()) return sanitize(value);
  }
  while (!comm.empty() && (comm.back() == '\n' || comm.back() == '\0')) comm.remove_suffix(1);
  if (comm.empty()) comm = "unknown";
  return sanitize(std::string(comm) + "." + std::to_string(uid));
}

std::optional<uint64_t> pick_iostep_bytes(std::string_view environ_block) {
  std::string_view text = find_variable(environ_block, "PVFS_IOSTEP_BYTES");
  if (text.empty()) return std::nullopt;
  uint64_t unit = 1;
  switch (text.back()) {
    case 'k': case 'K': unit = uint64_t{1} << 10; break;
    case 'm': case 'M': unit = uint64_t{1} << 20; break;
    case 'g': case 'G': unit = uint64_t{1} << 30; break;
    case 't': case 'T': unit = uint64_t{1} << 40; break;
    default: break;
  }
  if (unit != 1) text.remove_suffix(1);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || value == 0) return std::nullopt;
  if (value > UINT64_MAX / unit) return std::nullopt;
  return value * unit;
}

std::optional<uint64_t> parse_start_time(std::string_view proc_stat) {
  // Field 2 is "(comm)" and comm may contain anything, so count fields from
  // the last ')': field 3 follows it, and start time is field 22.
  auto close = proc_stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = proc_stat.substr(close + 1);
  int field = 2;
  while (!rest.empty()) {
    auto begin = rest.find_first_not_of(' ');
    if (begin == std::string_view::npos) break;
    rest = rest.substr(begin);
    auto end = rest.find(' ');
    std::string_view word = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
    if (++field == 22) {
      while (!word.empty() && word.back() == '\n') word.remove_suffix(1);
      uint64_t ticks = 0;
      auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), ticks);
      if (ec != std::errc() || ptr != word.data() + word.size() || word.empty())
        return std::nullopt;
      return ticks;
    }
  }
  return std::nullopt;
}

std::optional<ThreadStatus> parse_thread_status(std::string_view status) {
  std::optional<ThreadStatus> out;
  std::vector<uint32_t> groups;
  while (!status.empty()) {
    const auto end = status.find('\n');
    std::string_view line = status.substr(0, end);
    status = end == std::string_view::npos ? std::string_view{} : status.substr(end + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    std::string_view rest = line.substr(colon + 1);
    if (key != "Tgid" && key != "Groups") continue;
    std::vector<uint32_t> numbers;
    bool bad = false;
    while (!rest.empty()) {
      const auto begin = rest.find_first_not_of(" \t");
      if (begin == std::string_view::npos) break;
      rest = rest.substr(begin);
      uint32_t n = 0;
      auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
      if (ec != std::errc()) {
        bad = true;
        break;
      }
      numbers.push_back(n);
      rest = rest.substr(static_cast<size_t>(ptr - rest.data()));
    }
    if (bad) continue;
    if (key == "Tgid") {
      if (numbers.size() != 1 || numbers[0] == 0) return std::nullopt;
      out.emplace();
      out->tgid = numbers[0];
    } else {
      groups = std::move(numbers);
    }
  }
  if (out) out->groups = std::move(groups);
  return out;
}

std::optional<ThreadStatus> read_thread_status(const std::filesystem::path& proc_root, uint32_t tid) {
  auto text = read_proc_file(proc_root / std::to_string(tid) / "status", 64 * 1024);
  if (!text) return std::nullopt;
  return parse_thread_status(*text);
}

JobIdCache::JobIdCache(std::string jobid_var, size_t max_entries, std::filesystem::path proc_root)
    : jobid_var_(std::move(jobid_var)),
      max_entries_(max_entries == 0 ? 1 : max_entries),
      proc_root_(std::move(proc_root)) {}

JobInfo JobIdCache::job_info(uint32_t pid, uint32_t uid) {
  if (pid == 0) return {};
  const auto dir = proc_root_ / std::to_string(pid);
  std::optional<uint64_t> start;
  if (auto stat = read_proc_file(dir / "stat", 4096)) start = parse_start_time(*stat);
  if (!start) return read_job_info(pid, uid);

  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(pid);
    if (it != entries_.end() && it->second.start_time == *start && it->second.uid == uid)
      return it->second.job;
  }
  JobInfo id = read_job_info(pid, uid);

  std::lock_guard lock(mutex_);
  auto [it, inserted] = entries_.insert_or_assign(pid, Entry{*start, uid, id});
  if (inserted) {
    order_.push_back(pid);
    if (order_.size() > max_entries_) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
  }
  return id;
}

std::optional<uint64_t> pick_qos_runtime(std::string_view environ_block) {
  const std::string_view text = find_variable(environ_block, "PVFS_QOS_RUNTIME");
  if (text.empty()) return std::nullopt;
  auto d = parse_duration(text);
  if (!d) return std::nullopt;
  return static_cast<uint64_t>(d->count());
}

size_t JobIdCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

JobInfo JobIdCache::read_job_info(uint32_t pid, uint32_t uid) const {
  const auto dir = proc_root_ / std::to_string(pid);
  auto environ_block = read_proc_file(dir / "environ", kMaxEnvironBytes);
  auto comm = read_proc_file(dir / "comm", 256);
  JobInfo info;
  info.id = pick_job_id(environ_block.value_or(""), comm.value_or(""), uid, jobid_var_);
  info.iostep_bytes = pick_iostep_bytes(environ_block.value_or("")).value_or(0);
  info.qos_runtime_ms = pick_qos_runtime(environ_block.value_or("")).value_or(0);
  return info;
}

}  // namespace pvfs
