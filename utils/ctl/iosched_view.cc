#include "utils/ctl/iosched_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "shared/proto/mds.capnp.h"
#include "shared/text_format.h"
#include "utils/common/call_once.h"
#include "utils/ctl/ctl_format.h"

namespace pvfs {

namespace mp = proto::mds;

namespace {

IoStepRow row_of(mp::Reply::IoStepState::Reader s) {
  IoStepRow r;
  r.job = s.getJob();
  r.bytes = s.getBytes();
  r.source = s.getSource();
  for (uint32_t id : s.getServers()) r.servers.push_back(id);
  r.wait_ms = s.getWaitMs();
  r.running_ms = s.getRunningMs();
  r.bytes_written = s.getBytesWritten();
  r.holders = s.getHolders();
  r.starved = s.getStarved();
  return r;
}

Result<IoschedView> iosched_view_of(mp::Reply::Reader body) {
  if (!body.isIosched()) return Status(Errc::io, "unexpected reply to ioschedStatus");
  auto s = body.getIosched();
  IoschedView v;
  v.delegate = s.getDelegate();
  v.policy = s.getPolicy();
  v.lease_ms = s.getLeaseMs();
  v.max_wait_s = s.getMaxWaitS();
  v.grace_ms = s.getGraceMs();
  v.gather_ms = s.getGatherMs();
  for (auto a : s.getActive()) v.active.push_back(row_of(a));
  for (auto p : s.getPending()) v.pending.push_back(row_of(p));
  for (auto j : s.getJobs())
    v.jobs.push_back({j.getJob(), j.getSteps(), j.getWaitMs(), j.getIoMs(), j.getBytesWritten()});
  return v;
}

std::string servers_cell(const std::vector<uint32_t>& servers) {
  return servers.empty() ? "all" : fmt::format("{}", fmt::join(servers, ","));
}

std::string size_cell(const IoStepRow& r) {
  if (r.source == "unknown") return "?";
  return ctl::human_bytes(r.bytes) + (r.source == "predicted" ? " (pred.)" : "");
}

std::string ms_cell(uint64_t ms) {
  return ms < 10000 ? fmt::format("{} ms", ms) : fmt::format("{:.1f} s", static_cast<double>(ms) / 1000);
}

}  // namespace

Result<IoschedView> iosched_status(const Config& config, const Secret& key, std::chrono::milliseconds timeout,
                                   const std::string& policy) {
  return call_mds_in_order<IoschedView>(
      config, key, timeout,
      [&](rpc::OutMessage& out) {
        auto req = out.init_body<mp::Request>();
        if (policy.empty()) req.setIoschedStatus();
        else req.setIoschedPolicy(policy);
      },
      [](rpc::InMessage& in) { return iosched_view_of(in.body<mp::Reply>()); });
}

std::string render_iosched(const IoschedView& v) {
  std::string out = fmt::format("I/O scheduler on mds {}: policy {}, lease {} ms, starvation guard {}, gathering {}\n",
                                v.delegate, v.policy, v.lease_ms,
                                v.max_wait_s > 0 ? fmt::format("{} s", v.max_wait_s) : std::string("off"),
                                v.gather_ms > 0 ? fmt::format("{} ms", v.gather_ms) : std::string("off"));
  if (v.grace_ms > 0)
    out += fmt::format("just took over: new tokens wait {} ms more for clients to re-register\n", v.grace_ms);
  out += "\nholding tokens:\n";
  if (v.active.empty()) {
    out += "  (none)\n";
  } else {
    std::vector<std::vector<std::string>> rows = {
        {"job", "size", "servers", "waited", "running", "written", "clients"}};
    for (const auto& r : v.active)
      rows.push_back({r.job, size_cell(r), servers_cell(r.servers), ms_cell(r.wait_ms), ms_cell(r.running_ms),
                      ctl::human_bytes(r.bytes_written), std::to_string(r.holders)});
    out += ctl::table(rows, {3, 4, 5, 6});
  }
  out += "\nwaiting, in the order they will be served:\n";
  if (v.pending.empty()) {
    out += "  (none)\n";
  } else {
    std::vector<std::vector<std::string>> rows = {{"job", "size", "servers", "waiting", "clients", ""}};
    for (const auto& r : v.pending)
      rows.push_back({r.job, size_cell(r), servers_cell(r.servers), ms_cell(r.wait_ms), std::to_string(r.holders),
                      r.starved ? "starved: next" : ""});
    out += ctl::table(rows, {3, 4});
  }
  if (!v.jobs.empty()) {
    out += "\nper job (finished steps, and the current one so far):\n";
    std::vector<std::vector<std::string>> rows = {{"job", "steps", "token wait", "I/O time", "written"}};
    for (const auto& j : v.jobs)
      rows.push_back({j.job, std::to_string(j.steps), ms_cell(j.wait_ms), ms_cell(j.io_ms),
                      ctl::human_bytes(j.bytes_written)});
    out += ctl::table(rows, {1, 2, 3, 4});
  }
  return out;
}

std::string render_iosched_json(const IoschedView& v) {
  const auto steps = [](const std::vector<IoStepRow>& rows) {
    std::string out = "[";
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      out += fmt::format(
          "{}{{\"job\":{},\"bytes\":{},\"size_source\":{},\"servers\":[{}],\"wait_ms\":{},\"running_ms\":{},"
          "\"bytes_written\":{},\"clients\":{},\"starved\":{}}}",
          i ? "," : "", json_string(r.job), r.bytes, json_string(r.source), fmt::join(r.servers, ","), r.wait_ms,
          r.running_ms, r.bytes_written, r.holders, r.starved ? "true" : "false");
    }
    return out + "]";
  };
  std::string jobs = "[";
  for (size_t i = 0; i < v.jobs.size(); ++i) {
    const auto& j = v.jobs[i];
    jobs += fmt::format("{}{{\"job\":{},\"steps\":{},\"token_wait_ms\":{},\"io_ms\":{},\"bytes_written\":{}}}",
                        i ? "," : "", json_string(j.job), j.steps, j.wait_ms, j.io_ms, j.bytes_written);
  }
  jobs += "]";
  return fmt::format(
      "{{\"delegate\":{},\"policy\":{},\"lease_ms\":{},\"max_wait_s\":{},\"gather_ms\":{},\"grace_ms\":{},\"active\":{},"
      "\"pending\":{},\"jobs\":{}}}\n",
      v.delegate, json_string(v.policy), v.lease_ms, v.max_wait_s, v.gather_ms, v.grace_ms, steps(v.active),
      steps(v.pending),
      jobs);
}

}  // namespace pvfs
