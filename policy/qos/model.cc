#include "policy/qos/model.h"

#include <charconv>
#include <cmath>
#include <vector>

namespace pvfs::qos {

uint64_t text_checksum(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string exact_number(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back exactly
  return std::string(buf, r.ptr);
}

namespace {

bool valid_job(std::string_view job) {
  if (job.empty() || job.size() > 256) return false;
  for (unsigned char c : job)
    if (c <= ' ' || c == 0x7f) return false;
  return true;
}

}  // namespace

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= line.size()) {
    size_t j = line.find(' ', i);
    if (j == std::string_view::npos) j = line.size();
    out.push_back(line.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

Result<double> alpha(Nanos required, Nanos profile, Nanos comp) {
  if (comp.count() < 0) return Status(Errc::invalid_argument, "compute time is negative");
  if (profile <= comp) return Status(Errc::invalid_argument, "the profiling run measured no I/O time");
  if (required < profile)
    return Status(Errc::invalid_argument, "the goal is shorter than the job's profiling run: it cannot be met");
  return std::chrono::duration<double>(required - comp).count() / std::chrono::duration<double>(profile - comp).count();
}

Result<double> average_bound(uint64_t bytes, Nanos required, Nanos comp) {
  if (required <= comp) return Status(Errc::invalid_argument, "the goal leaves no time for I/O");
  return static_cast<double>(bytes) / std::chrono::duration<double>(required - comp).count();
}

double Model::bound(double avg_dist_bytes, double avg_size_bytes) const {
  return std::max(0.0, tree.predict({avg_dist_bytes, avg_size_bytes}));
}

std::string serialize(const Model& m) {
  PVFS_CHECK(valid_job(m.job));
  std::string s = "pvfs-qos-model " + std::to_string(Model::kVersion) + "\n";
  s += "job " + m.job + "\n";
  s += "alpha " + exact_number(m.alpha) + "\n";
  s += "profile_ns " + std::to_string(m.profile.count()) + "\n";
  s += "comp_ns " + std::to_string(m.comp.count()) + "\n";
  s += "epoch_ns " + std::to_string(m.epoch.count()) + "\n";
  s += "bytes " + std::to_string(m.bytes) + "\n";
  s += "cv_error " + exact_number(m.cv_error) + "\n";
  s += "nodes " + std::to_string(m.tree.nodes().size()) + "\n";
  for (const auto& n : m.tree.nodes())
    s += std::to_string(n.feature) + " " + exact_number(n.threshold) + " " + std::to_string(n.left) + " " +
         std::to_string(n.right) + " " + exact_number(n.value) + " " + std::to_string(n.samples) + "\n";
  char hex[17];
  auto r = std::to_chars(hex, hex + 16, text_checksum(s), 16);
  s += "checksum " + std::string(16 - static_cast<size_t>(r.ptr - hex), '0') + std::string(hex, r.ptr) + "\n";
  return s;
}

Result<Model> parse_model(std::string_view text) {
  size_t pos = 0;
  int line_no = 0;
  std::string_view line;
  auto next = [&]() {
    if (pos >= text.size()) return false;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) return false;  // every line ends with a newline
    line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    return true;
  };
  auto fail = [&](const std::string& what) {
    return Status(Errc::corrupt, "model file line " + std::to_string(line_no) + ": " + what);
  };

  if (!next()) return Status(Errc::corrupt, "model file is empty or has no complete line");
  {
    auto w = words(line);
    if (w.size() != 2 || w[0] != "pvfs-qos-model") return fail("not a pvfs QoS model (no 'pvfs-qos-model' header)");
    int version = 0;
    if (!read_number(w[1], version)) return fail("unreadable version");
    if (version != Model::kVersion)
      return fail("version " + std::string(w[1]) + " (this build reads version " + std::to_string(Model::kVersion) +
                  ")");
  }
  Model m;
  auto field = [&](std::string_view key) -> Result<std::string_view> {
    if (!next()) return fail("ends before '" + std::string(key) + "'");
    auto w = words(line);
    if (w.size() != 2 || w[0] != key) return fail("expected '" + std::string(key) + " <value>'");
    return w[1];
  };
  int64_t ns = 0;
  auto job = field("job");
  if (!job) return job.status();
  if (!valid_job(*job)) return fail("bad job id");
  m.job = std::string(*job);
  auto a = field("alpha");
  if (!a) return a.status();
  if (!read_number(*a, m.alpha) || !(m.alpha >= 1) || !std::isfinite(m.alpha))
    return fail("alpha must be a number >= 1");
  for (auto [key, dest] : {std::pair<const char*, Nanos*>{"profile_ns", &m.profile}, {"comp_ns", &m.comp},
                           {"epoch_ns", &m.epoch}}) {
    auto v = field(key);
    if (!v) return v.status();
    if (!read_number(*v, ns) || ns < 0) return fail(std::string(key) + " must be a whole number >= 0");
    *dest = Nanos(ns);
  }
  auto b = field("bytes");
  if (!b) return b.status();
  if (!read_number(*b, m.bytes)) return fail("bytes must be a whole number");
  auto cv = field("cv_error");
  if (!cv) return cv.status();
  if (!read_number(*cv, m.cv_error) || !std::isfinite(m.cv_error)) return fail("cv_error must be a number");
  auto count_text = field("nodes");
  if (!count_text) return count_text.status();
  uint64_t count = 0;
  if (!read_number(*count_text, count) || count == 0 || count > 1'000'000) return fail("node count must be 1..1000000");
  std::vector<RegressionTree::Node> nodes;
  nodes.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (!next()) return fail("ends after " + std::to_string(i) + " of " + std::to_string(count) + " nodes");
    auto w = words(line);
    RegressionTree::Node n;
    if (w.size() != 6 || !read_number(w[0], n.feature) || !read_number(w[1], n.threshold) ||
        !read_number(w[2], n.left) || !read_number(w[3], n.right) || !read_number(w[4], n.value) ||
        !read_number(w[5], n.samples))
      return fail("a node is 'feature threshold left right value samples'");
    nodes.push_back(n);
  }
  const size_t body = pos;
  if (!next()) return fail("no checksum line (file truncated?)");
  {
    auto w = words(line);
    uint64_t sum = 0;
    if (w.size() != 2 || w[0] != "checksum" || w[1].size() != 16) return fail("expected 'checksum <16 hex digits>'");
    auto r = std::from_chars(w[1].data(), w[1].data() + 16, sum, 16);
    if (r.ec != std::errc() || r.ptr != w[1].data() + 16) return fail("checksum is not hexadecimal");
    if (sum != text_checksum(text.substr(0, body))) return fail("checksum mismatch: the file was changed or damaged");
  }
  if (pos != text.size()) return fail("text after the checksum");
  auto tree = RegressionTree::from_nodes(std::move(nodes));
  if (!tree) return Status(Errc::corrupt, "model file: " + tree.status().detail());
  m.tree = std::move(*tree);
  return m;
}

}  // namespace pvfs::qos
