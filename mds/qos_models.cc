#include "mds/qos_models.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "mds/qos_goals.h"

namespace pvfs::mds {

namespace {

constexpr std::string_view kModelsMagic = "pvfs-qos-models 1";

using qos::exact_number;
using qos::text_checksum;
using qos::read_number;
using qos::words;

Status corrupt(size_t line, std::string_view what) {
  return Status(Errc::corrupt, fmt::format("QoS models, line {}: {}", line, what));
}

}  // namespace

std::string serialize(const QosModels& models) {
  std::string out = fmt::format("{}\nversion {}\n", kModelsMagic, models.version);
  for (const auto& [job, p] : models.profiles) {
    out += fmt::format("profile {} {} {} {} {} {} {} {} {} {}\n", job, p.share_pct, p.start_unix_ms, p.end_unix_ms,
                       p.io.count(), static_cast<int>(p.io_source), p.bytes, p.dropped, p.epochs.size(),
                       p.clients.size());
    for (const auto& e : p.epochs)
      out += fmt::format("e {} {} {} {} {} {} {}\n", e.server, e.epoch, e.requests, exact_number(e.avg_dist_bytes),
                         exact_number(e.avg_size_bytes), e.bytes, e.service.count());
    for (const auto& [client, span] : p.clients)
      out += fmt::format("c {:016x} {} {}\n", client, span.first_ns, span.last_ns);
  }
  for (const auto& [job, m] : models.models) {
    const std::string text = qos::serialize(m.model);
    const auto lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    out += fmt::format("model {} {} {} {} {} {} {} {}\n", job, m.revision, m.samples, m.profile_samples, m.required_ns,
                       m.trained_unix_ms, m.met ? 1 : 0, lines);
    out += text;
  }
  out += fmt::format("checksum {:016x}\n", text_checksum(out));
  return out;
}

Result<QosModels> parse_models(std::string_view text) {
  const size_t at = text.rfind("checksum ");
  if (at == std::string_view::npos || (at > 0 && text[at - 1] != '\n'))
    return Status(Errc::corrupt, "QoS models: no checksum line (a truncated file?)");
  {
    std::string_view tail = text.substr(at + 9);
    if (tail.size() != 17 || tail.back() != '\n') return Status(Errc::corrupt, "QoS models: a damaged checksum line");
    if (tail.substr(0, 16) != fmt::format("{:016x}", text_checksum(text.substr(0, at))))
      return Status(Errc::corrupt, "QoS models: checksum mismatch (a truncated or edited file?)");
  }
  std::vector<std::string_view> lines;
  for (size_t i = 0; i < at;) {
    const size_t j = text.find('\n', i);
    lines.push_back(text.substr(i, j - i));
    i = j + 1;
  }
  if (lines.empty() || lines[0] != kModelsMagic) return corrupt(1, fmt::format("expected \"{}\"", kModelsMagic));
  QosModels out;
  if (lines.size() < 2) return corrupt(2, "no version");
  {
    auto w = words(lines[1]);
    if (w.size() != 2 || w[0] != "version" || !read_number(w[1], out.version)) return corrupt(2, "bad version");
  }
  size_t n = 2;
  while (n < lines.size()) {
    const size_t line_no = n + 1;
    auto w = words(lines[n++]);
    if (w.empty()) return corrupt(line_no, "an empty line");
    if (w[0] == "profile") {
      qos::Profile p;
      int64_t io = 0;
      int source = 0;
      size_t count = 0, clients = 0;
      // Files from before clients timed a job's I/O have no client count.
      if ((w.size() != 10 && w.size() != 11) || !read_number(w[2], p.share_pct) ||
          !read_number(w[3], p.start_unix_ms) || !read_number(w[4], p.end_unix_ms) || !read_number(w[5], io) ||
          !read_number(w[6], source) || !read_number(w[7], p.bytes) || !read_number(w[8], p.dropped) ||
          !read_number(w[9], count) || (w.size() == 11 && !read_number(w[10], clients)) ||
          !check_goal_job(w[1]).ok() || p.share_pct == 0 || p.share_pct > 100 || io < 0 || source < 0 ||
          source > 2 || count > qos::kMaxProfileEpochs || clients > qos::kMaxProfileClients ||
          n + count + clients > lines.size())
        return corrupt(line_no, "bad profile");
      p.job = std::string(w[1]);
      p.io = qos::Nanos(io);
      p.io_source = static_cast<qos::IoSource>(source);
      for (size_t i = 0; i < count; ++i) {
        auto r = words(lines[n++]);
        qos::ProfileEpoch e;
        int64_t service = 0;
        if (r.size() != 8 || r[0] != "e" || !read_number(r[1], e.server) || !read_number(r[2], e.epoch) ||
            !read_number(r[3], e.requests) || !read_number(r[4], e.avg_dist_bytes) ||
            !read_number(r[5], e.avg_size_bytes) || !read_number(r[6], e.bytes) || !read_number(r[7], service) ||
            service < 0 || !std::isfinite(e.avg_dist_bytes) || !std::isfinite(e.avg_size_bytes))
          return corrupt(n, "bad profile record");
        e.service = qos::Nanos(service);
        p.epochs.push_back(e);
      }
      for (size_t i = 0; i < clients; ++i) {
        auto r = words(lines[n++]);
        uint64_t client = 0;
        qos::ClientSpan span;
        if (r.size() != 4 || r[0] != "c" || r[1].size() != 16 ||
            std::from_chars(r[1].data(), r[1].data() + 16, client, 16).ptr != r[1].data() + 16 ||
            !read_number(r[2], span.first_ns) || !read_number(r[3], span.last_ns) || span.last_ns < span.first_ns ||
            !p.clients.emplace(client, span).second)
          return corrupt(n, "bad profile client");
      }
      if (!out.profiles.emplace(p.job, std::move(p)).second) return corrupt(line_no, "a job's profile twice");
    } else if (w[0] == "model") {
      QosModelEntry m;
      int met = 0;
      size_t count = 0;
      if (w.size() != 9 || !check_goal_job(w[1]).ok() || !read_number(w[2], m.revision) ||
          !read_number(w[3], m.samples) || !read_number(w[4], m.profile_samples) ||
          !read_number(w[5], m.required_ns) || !read_number(w[6], m.trained_unix_ms) || !read_number(w[7], met) ||
          !read_number(w[8], count) || n + count > lines.size())
        return corrupt(line_no, "bad model header");
      m.met = met != 0;
      std::string body;
      for (size_t i = 0; i < count; ++i) (body += lines[n++]) += '\n';
      auto model = qos::parse_model(body);
      if (!model) return Status(Errc::corrupt, fmt::format("QoS models: the model of job {} (from line {}): {}", w[1],
                                                           line_no + 1, model.status().detail()));
      if (model->job != w[1]) return corrupt(line_no, "the model file names another job");
      m.model = std::move(*model);
      const std::string job(w[1]);
      if (!out.models.emplace(job, std::move(m)).second) return corrupt(line_no, "a job's model twice");
    } else {
      return corrupt(line_no, fmt::format("unknown record \"{}\"", w[0]));
    }
  }
  return out;
}

Status save_models(const std::filesystem::path& path, const QosModels& models) {
  return write_durably(path, serialize(models));
}

Result<QosModels> load_models(const std::filesystem::path& path) {
  auto text = read_if_exists(path);
  if (!text) return text.status();
  if (!*text) return QosModels{};
  auto models = parse_models(**text);
  if (!models) return Status(models.code(), fmt::format("{}: {}", path.string(), models.status().detail()));
  return models;
}

}  // namespace pvfs::mds
