#include "utils/bench/md_phase.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "shared/text_format.h"

namespace pvfs::bench {

namespace {

// The top of rank's tree: one per rank, or the shared one.
std::string tree_top(const MdPlan& plan, uint32_t rank) {
  return plan.shared_dir ? plan.root + "/shared" : fmt::format("{}/rank.{}", plan.root, rank);
}

uint64_t leaves(const MdPlan& plan) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < plan.depth; ++d) n *= plan.fanout;
  return n;
}

// Leaf `leaf` below `top`: one "d<k>" per level, the most significant first.
std::string leaf_dir(const MdPlan& plan, const std::string& top, uint64_t leaf) {
  std::vector<uint64_t> digits;
  for (uint32_t d = 0; d < plan.depth; ++d) {
    digits.push_back(leaf % plan.fanout);
    leaf /= plan.fanout;
  }
  std::string path = top;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) path += fmt::format("/d{}", *it);
  return path;
}

void subtree(const MdPlan& plan, const std::string& dir, uint32_t level, std::vector<std::string>& out) {
  out.push_back(dir);
  if (level == plan.depth) return;
  for (uint32_t k = 0; k < plan.fanout; ++k) subtree(plan, fmt::format("{}/d{}", dir, k), level + 1, out);
}

std::string io_error(const char* what, const std::string& path) {
  return fmt::format("{} {}: {}", what, path, std::strerror(errno));
}

}  // namespace

const char* md_phase_name(MdPhase phase) {
  switch (phase) {
    case MdPhase::create: return "create";
    case MdPhase::stat: return "stat";
    case MdPhase::read: return "read";
    case MdPhase::remove: return "remove";
  }
  return "?";
}

std::vector<std::string> md_directories(const MdPlan& plan) {
  std::vector<std::string> out{plan.root};
  const uint32_t tops = plan.shared_dir ? 1 : plan.procs;
  for (uint32_t r = 0; r < tops; ++r) subtree(plan, tree_top(plan, r), 0, out);
  return out;
}

std::string md_file(const MdPlan& plan, uint32_t rank, uint32_t i) {
  return fmt::format("{}/f.{}.{}", leaf_dir(plan, tree_top(plan, rank), i % leaves(plan)), rank, i);
}

std::string md_rank_phase(const MdPlan& plan, MdPhase phase, uint32_t rank, std::atomic<uint64_t>& done) {
  std::vector<char> buf(plan.file_bytes, 'm');
  for (uint32_t i = 0; i < plan.files; ++i) {
    const std::string path = md_file(plan, rank, i);
    switch (phase) {
      case MdPhase::create: {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) return io_error("create", path);
        if (!buf.empty() && ::write(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) {
          ::close(fd);
          return io_error("write", path);
        }
        if (::close(fd) != 0) return io_error("close", path);
        break;
      }
      case MdPhase::stat: {
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) return io_error("stat", path);
        if (static_cast<uint64_t>(st.st_size) != plan.file_bytes)
          return fmt::format("stat {}: size {}, {} written", path, st.st_size, plan.file_bytes);
        break;
      }
      case MdPhase::read: {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return io_error("open", path);
        if (!buf.empty() && ::read(fd, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) {
          ::close(fd);
          return io_error("read", path);
        }
        ::close(fd);
        break;
      }
      case MdPhase::remove:
        if (::unlink(path.c_str()) != 0) return io_error("remove", path);
        break;
    }
    done.fetch_add(1, std::memory_order_relaxed);
  }
  return {};
}

std::string md_human_report(const MdPlan& plan, const std::vector<MdStats>& phases) {
  std::string out = fmt::format(
      "pvfs-bench md: {} process(es) x {} files in {}{}, {} bytes each\n", plan.procs, plan.files,
      plan.shared_dir ? "one shared directory" : "a directory per process",
      plan.depth ? fmt::format(" (tree depth {}, fanout {})", plan.depth, plan.fanout) : "", plan.file_bytes);
  out += fmt::format("{:<8} {:>10} {:>10} {:>12}\n", "phase", "files", "seconds", "ops/s");
  for (const auto& p : phases) {
    out += fmt::format("{:<8} {:>10} {:>10.3f} {:>12.1f}", p.name, p.ops, p.slowest_s, p.ops_per_s());
    if (p.failed_ranks) out += fmt::format("  ({} rank(s) failed)", p.failed_ranks);
    out += '\n';
  }
  return out;
}

std::string md_json_report(const MdPlan& plan, const std::vector<MdStats>& phases,
                           const std::vector<std::string>& errors) {
  std::string out = fmt::format(
      "{{\"mode\":\"md\",\"path\":{},\"procs\":{},\"files_per_proc\":{},\"shared_dir\":{},\"depth\":{},"
      "\"fanout\":{},\"file_bytes\":{}",
      json_string(plan.root), plan.procs, plan.files, plan.shared_dir, plan.depth, plan.fanout, plan.file_bytes);
  for (const auto& p : phases)
    out += fmt::format(",{}:{{\"ops\":{},\"slowest_s\":{:.6f},\"ops_per_s\":{:.1f},\"failed_ranks\":{}}}",
                       json_string(p.name), p.ops, p.slowest_s, p.ops_per_s(), p.failed_ranks);
  out += ",\"errors\":[";
  for (size_t i = 0; i < errors.size(); ++i) out += (i ? "," : "") + json_string(errors[i]);
  return out + fmt::format("],\"ok\":{}}}\n", errors.empty());
}

}  // namespace pvfs::bench
