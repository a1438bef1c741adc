#include "utils/ctl/qos_view.h"

#include <time.h>

#include <algorithm>
#include <cctype>
#include <chrono>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "shared/proto/mds.capnp.h"
#include "shared/text_format.h"
#include "utils/common/call_once.h"
#include "utils/ctl/ctl_format.h"

namespace pvfs {

namespace mp = proto::mds;

namespace {

// Asks the delegate: `build` fills the request, `parse` reads the reply.
template <typename T, typename Build, typename Parse>
Result<T> ask_delegate(const Config& config, const Secret& key, std::chrono::milliseconds timeout, const Build& build,
                       const Parse& parse) {
  return call_mds_in_order<T>(
      config, key, timeout, [&](rpc::OutMessage& out) { build(out.init_body<mp::Request>()); },
      [&](rpc::InMessage& in) { return parse(in.body<mp::Reply>()); });
}

Result<QosView> qos_view_of(mp::Reply::Reader body) {
  if (!body.isQos()) return Status(Errc::io, "unexpected reply to a QoS request");
  auto s = body.getQos();
  QosView v;
  v.delegate = s.getDelegate();
  v.policy = s.getPolicy();
  v.period_ms = s.getPeriodMs();
  v.epoch_ms = s.getEpochMs();
  v.version = s.getVersion();
  v.replicas = s.getReplicas();
  for (uint32_t id : s.getServers()) v.servers.push_back(id);
  for (auto j : s.getJobs()) {
    QosJobRow r;
    r.job = j.getJob();
    r.runtime_ms = j.getRuntimeMs();
    r.start_unix_ms = j.getStartUnixMs();
    r.bytes = j.getBytes();
    r.elapsed_ms = j.getElapsedMs();
    r.projected_ms = j.getProjectedMs();
    r.bound_bps = j.getBoundBps();
    r.bound_source = j.getBoundSource();
    r.throughput_bps = j.getThroughputBps();
    r.bytes_done = j.getBytesDone();
    r.window_ms = j.getWindowMs();
    r.dedicated = j.getDedicated();
    r.promoted = j.getPromoted();
    r.loss_ms = j.getLossMs();
    r.cut_ms = j.getCutMs();
    r.behind = j.getBehind();
    r.done_ms = j.getDoneMs();
    v.jobs.push_back(std::move(r));
  }
  for (auto w : s.getWindows()) v.windows.push_back({w.getKind(), w.getJob(), w.getLengthNs()});
  v.plan_start_unix_ns = s.getPlanStartUnixNs();
  return v;
}

Result<QosModelView> model_view_of(mp::Reply::Reader body) {
  if (!body.isQosModel()) return Status(Errc::io, "unexpected reply to a QoS model request");
  auto s = body.getQosModel();
  QosModelView v;
  v.job = s.getJob();
  v.version = s.getVersion();
  v.replicas = s.getReplicas();
  v.has_profile = s.getHasProfile();
  v.profiling = s.getProfiling();
  v.share_pct = s.getSharePct();
  v.start_unix_ms = s.getStartUnixMs();
  v.end_unix_ms = s.getEndUnixMs();
  v.profile_ns = s.getProfileNs();
  v.comp_ns = s.getCompNs();
  v.io_from_job = s.getIoFromJob();
  v.io_from_clients = s.getIoFromClients();
  v.clients = s.getClients();
  v.records = s.getRecords();
  v.dropped = s.getDropped();
  v.profile_bytes = s.getProfileBytes();
  v.has_model = s.getHasModel();
  v.revision = s.getRevision();
  v.format_version = s.getFormatVersion();
  v.depth = s.getDepth();
  v.leaves = s.getLeaves();
  v.nodes = s.getNodes();
  v.cv_error = s.getCvError();
  v.met = s.getMet();
  v.samples = s.getSamples();
  v.profile_samples = s.getProfileSamples();
  v.alpha = s.getAlpha();
  v.required_ns = s.getRequiredNs();
  v.trained_unix_ms = s.getTrainedUnixMs();
  v.model = s.getModel();
  return v;
}

std::string duration_cell(uint64_t ms) {
  if (ms < 10000) return fmt::format("{} ms", ms);
  if (ms < 600000) return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000);
  return fmt::format("{}m{:02}s", ms / 60000, (ms / 1000) % 60);
}

std::string rate_cell(double bps) { return bps > 0 ? ctl::human_bytes(static_cast<uint64_t>(bps)) + "/s" : "-"; }

}  // namespace

Result<std::chrono::milliseconds> parse_qos_duration(std::string_view text) { return parse_duration(text); }

Result<int64_t> parse_qos_start(std::string_view text, int64_t now_unix_ms) {
  if (text == "now") return now_unix_ms;
  if (!text.empty() && text[0] == '+') {
    auto d = parse_qos_duration(text.substr(1));
    if (!d) return d.status();
    return now_unix_ms + d->count();
  }
  if (!text.empty() && text.size() <= 12 &&
      std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return static_cast<int64_t>(std::stoll(std::string(text))) * 1000;
  std::string s(text);
  if (!s.empty() && s.back() == 'Z') s.pop_back();
  struct tm tm = {};
  const char* end = ::strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || *end != '\0')
    return Status(Errc::invalid_argument,
                  fmt::format("\"{}\" is not a start time: say now, +DURATION, seconds since 1970, or "
                              "YYYY-MM-DDTHH:MM:SS (UTC)",
                              text));
  return static_cast<int64_t>(::timegm(&tm)) * 1000;
}

Result<QosView> qos_call(const Config& config, const Secret& key, std::chrono::milliseconds timeout,
                         const QosAction& action) {
  auto build = [&](mp::Request::Builder req) {
    switch (action.kind) {
      case QosAction::Kind::status: req.setQosStatus(); break;
      case QosAction::Kind::clear: req.setQosClear(action.job); break;
      case QosAction::Kind::policy: req.setQosPolicy(action.policy); break;
      case QosAction::Kind::set: {
        auto g = req.initQosSet();
        g.setJob(action.job);
        g.setRuntimeMs(action.runtime_ms);
        g.setStartUnixMs(action.start_unix_ms);
        g.setBytes(action.bytes);
        break;
      }
    }
  };
  return ask_delegate<QosView>(config, key, timeout, build, qos_view_of);
}

Result<QosModelView> qos_model_call(const Config& config, const Secret& key, std::chrono::milliseconds timeout,
                                    const QosModelAction& action) {
  auto build = [&](mp::Request::Builder req) {
    switch (action.kind) {
      case QosModelAction::Kind::show: req.setQosShow(action.job); break;
      case QosModelAction::Kind::train: {
        auto t = req.initQosTrain();
        t.setJob(action.job);
        t.setRuntimeMs(action.runtime_ms);
        break;
      }
      case QosModelAction::Kind::profile:
      case QosModelAction::Kind::profile_end: {
        auto p = req.initQosProfile();
        p.setJob(action.job);
        p.setSharePct(action.share_pct);
        p.setEnd(action.kind == QosModelAction::Kind::profile_end);
        p.setIoTimeNs(action.io_time_ns);
        break;
      }
    }
  };
  return ask_delegate<QosModelView>(config, key, timeout, build, model_view_of);
}

std::string render_qos_model(const QosModelView& v) {
  auto secs = [](int64_t ns) { return fmt::format("{:.2f} s", static_cast<double>(ns) / 1e9); };
  std::string out = fmt::format("job {} (profiles and models version {}, held by {} metadata server(s))\n", v.job,
                                v.version, v.replicas);
  if (!v.has_profile) out += "profile: none\n";
  else if (v.profiling)
    out += fmt::format("profile: running since {} with {}% of each period; {} records, {} so far\n",
                       v.start_unix_ms / 1000, v.share_pct, v.records, ctl::human_bytes(v.profile_bytes));
  else
    out += fmt::format("profile: T_profile {}, T_comp {} (I/O time {}), share {}%, {} records{}, {}\n",
                       secs(v.profile_ns), secs(v.comp_ns),
                       v.io_from_job       ? std::string("from the job")
                       : v.io_from_clients ? fmt::format("timed by {} client{}", v.clients, v.clients == 1 ? "" : "s")
                                           : std::string("of the busiest server"),
                       v.share_pct, v.records,
                       v.dropped ? fmt::format(" ({} more dropped)", v.dropped) : std::string(),
                       ctl::human_bytes(v.profile_bytes));
  if (!v.has_model) return out + "model: none (pvfs-ctl qos train " + v.job + ")\n";
  out += fmt::format("model: revision {}, file format version {}, depth {}, {} leaves ({} nodes)\n", v.revision,
                     v.format_version, v.depth, v.leaves, v.nodes);
  out += fmt::format("  CV error {:.3f} ({} the threshold), training set {} samples ({} from the profile, {} "
                     "synthetic)\n",
                     v.cv_error, v.met ? "under" : "NOT under", v.samples, v.profile_samples,
                     v.samples - v.profile_samples);
  out += fmt::format("  trained for {} (alpha {:.3f}); rescaled to each goal at run time\n", secs(v.required_ns),
                     v.alpha);
  return out;
}

std::string render_qos_model_json(const QosModelView& v) {
  return fmt::format(
      "{{\"job\":{},\"version\":{},\"replicas\":{},\"profile\":{{\"present\":{},\"running\":{},\"share_pct\":{},"
      "\"start_unix_ms\":{},\"end_unix_ms\":{},\"profile_ns\":{},\"comp_ns\":{},\"io_from_job\":{},\"io_from_clients\":{},\"clients\":{},\"records\":{},"
      "\"dropped\":{},\"bytes\":{}}},\"model\":{{\"present\":{},\"revision\":{},\"format_version\":{},\"depth\":{},"
      "\"leaves\":{},\"nodes\":{},\"cv_error\":{},\"met\":{},\"samples\":{},\"profile_samples\":{},\"alpha\":{},"
      "\"required_ns\":{},\"trained_unix_ms\":{}}}}}\n",
      json_string(v.job), v.version, v.replicas, v.has_profile, v.profiling, v.share_pct, v.start_unix_ms,
      v.end_unix_ms, v.profile_ns, v.comp_ns, v.io_from_job, v.io_from_clients, v.clients, v.records, v.dropped, v.profile_bytes, v.has_model,
      v.revision, v.format_version, v.depth, v.leaves, v.nodes, v.cv_error, v.met, v.samples, v.profile_samples,
      v.alpha, v.required_ns, v.trained_unix_ms);
}

std::string render_qos_list(const QosView& v) {
  if (v.jobs.empty()) return "no QoS goals\n";
  std::vector<std::vector<std::string>> rows = {{"job", "runtime", "start", "bytes"}};
  for (const auto& j : v.jobs)
    rows.push_back({j.job, duration_cell(j.runtime_ms),
                    j.start_unix_ms > 0 ? fmt::format("{}", j.start_unix_ms / 1000) : "at first I/O",
                    j.bytes > 0 ? ctl::human_bytes(j.bytes) : "-"});
  return ctl::table(rows, {1, 3});
}

std::string qos_verdict(const QosJobRow& j) {
  if (j.done_ms > 0) return j.done_ms <= j.runtime_ms ? "met" : "MISSED";
  return j.behind ? "BEHIND" : "";
}

std::string render_qos_status(const QosView& v) {
  std::string out = fmt::format("QoS coordinator on mds {}: policy {}, period {} ms, epoch {} ms; goals version {}, "
                                "held by {} member(s); {} storage server(s) reporting{}\n",
                                v.delegate, v.policy, v.period_ms, v.epoch_ms, v.version, v.replicas,
                                v.servers.size(),
                                v.servers.empty() ? std::string() : fmt::format(" ({})", fmt::join(v.servers, ",")));
  if (v.jobs.empty()) return out + "no QoS goals: every job is best effort\n";
  std::vector<std::vector<std::string>> rows = {
      {"job", "goal", "elapsed", "projected", "bound", "source", "last period", "window", "loss", ""}};
  for (const auto& j : v.jobs)
    rows.push_back({j.job, duration_cell(j.runtime_ms), j.start_unix_ms > 0 ? duration_cell(j.elapsed_ms) : "not started",
                    j.projected_ms > 0 ? duration_cell(j.projected_ms) : "?", rate_cell(j.bound_bps), j.bound_source,
                    rate_cell(j.throughput_bps),
                    j.dedicated ? fmt::format("{:.0f} ms{}", j.window_ms, j.promoted ? " (was behind in shared)" : "")
                                : std::string("shared"),
                    fmt::format("{:.0f} ms", j.loss_ms), qos_verdict(j)});
  out += ctl::table(rows, {1, 2, 3, 4, 6, 7, 8});
  if (!v.windows.empty()) {
    std::vector<std::string> cells;
    for (const auto& w : v.windows)
      cells.push_back(fmt::format("{}{} {:.0f} ms", w.kind, w.job.empty() ? "" : " " + w.job,
                                  static_cast<double>(w.length_ns) / 1e6));
    out += fmt::format("plan: {}\n", fmt::join(cells, ", "));
  }
  return out;
}

std::string render_qos_json(const QosView& v) {
  std::string jobs;
  for (size_t i = 0; i < v.jobs.size(); ++i) {
    const auto& j = v.jobs[i];
    jobs += fmt::format(
        "{}{{\"job\":{},\"runtime_ms\":{},\"start_unix_ms\":{},\"bytes\":{},\"elapsed_ms\":{},\"projected_ms\":{},"
        "\"bound_bytes_per_s\":{},\"bound_source\":{},\"throughput_bytes_per_s\":{},\"bytes_done\":{},"
        "\"window_ms\":{},\"dedicated\":{},\"promoted\":{},\"loss_ms\":{},\"cut_ms\":{},\"behind\":{},\"done_ms\":{}}}",
        i ? "," : "", json_string(j.job), j.runtime_ms, j.start_unix_ms, j.bytes, j.elapsed_ms, j.projected_ms,
        j.bound_bps, json_string(j.bound_source), j.throughput_bps, j.bytes_done, j.window_ms,
        j.dedicated ? "true" : "false", j.promoted ? "true" : "false", j.loss_ms, j.cut_ms,
        j.behind ? "true" : "false", j.done_ms);
  }
  std::string windows;
  for (size_t i = 0; i < v.windows.size(); ++i)
    windows += fmt::format("{}{{\"kind\":{},\"job\":{},\"length_ns\":{}}}", i ? "," : "", json_string(v.windows[i].kind),
                           json_string(v.windows[i].job), v.windows[i].length_ns);
  return fmt::format(
      "{{\"delegate\":{},\"policy\":{},\"period_ms\":{},\"epoch_ms\":{},\"version\":{},\"replicas\":{},"
      "\"servers\":[{}],\"jobs\":[{}],\"plan\":{{\"start_unix_ns\":{},\"windows\":[{}]}}}}\n",
      v.delegate, json_string(v.policy), v.period_ms, v.epoch_ms, v.version, v.replicas, fmt::join(v.servers, ","),
      jobs, v.plan_start_unix_ns, windows);
}

}  // namespace pvfs
