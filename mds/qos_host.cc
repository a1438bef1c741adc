#include "mds/qos_host.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "shared/log.h"
#include "shared/request_limits.h"
#include "shared/rpc/convert.h"

namespace pvfs::mds {

namespace mp = proto::mds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

namespace {

using rpc::text;

// Best effort's name in the planner, which needs one: requests without a job id.
constexpr std::string_view kNoJob = "(no-job)";

std::string_view kind_name(qos::WindowKind k) {
  switch (k) {
    case qos::WindowKind::dedicated: return "dedicated";
    case qos::WindowKind::shared: return "shared";
    case qos::WindowKind::best_effort: return "best-effort";
  }
  return "dedicated";
}

double seconds(nanoseconds d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

QosHost::QosHost(asio::io_context& io, const Config& config, MdsCluster& cluster)
    : io_(io), config_(config), cluster_(cluster), timer_(io) {}

void QosHost::start() { asio::co_spawn(io_, tick_loop(), asio::detached); }

void QosHost::stop() {
  stopped_ = true;
  timer_.cancel();
}

int64_t QosHost::unix_ns() const {
  return std::chrono::duration_cast<nanoseconds>(cluster_.clock().wall().time_since_epoch()).count();
}

qos::QosPolicy QosHost::policy() const {
  const std::string& shared = cluster_.qos().policy;
  if (!shared.empty())
    if (auto p = qos::parse_qos_policy(shared)) return *p;
  return config_.qos_policy;
}

bool QosHost::hosting() {
  const bool acting = cluster_.acting_delegate();
  if (acting && !hosting_) {
    hosting_ = true;
    spdlog::info("QoS coordinator: hosted here (policy {}, {} goals)", qos::qos_policy_name(policy()),
                 cluster_.qos().goals.size());
  } else if (!acting && hosting_) {
    spdlog::info("QoS coordinator: no longer the delegate");
    hosting_ = false;
    planner_.reset();
    period_.clear();
    runs_.clear();
    servers_.clear();
    counted_.clear();
    pending_records_.clear();
    plan_ = {};
    plan_start_ = 0;
  }
  return hosting_;
}

Status QosHost::not_delegate() const {
  if (cluster_.delegate() == cluster_.self())
    return Status(Errc::unavailable, fmt::format("mds {} is the delegate but holds no cluster lease (it is still "
                                                 "joining, or too few members answer its heartbeats): retry",
                                                 cluster_.self().value));
  return Status(Errc::unavailable, fmt::format("mds {} is not the delegate: mds {} hosts the QoS coordinator",
                                               cluster_.self().value, cluster_.delegate().value));
}

void QosHost::reset_planner() {
  qos::PlannerOptions o;
  o.period = milliseconds(config_.qos_period_ms);
  o.min_window = milliseconds(config_.qos_min_window_ms);
  // The baseline reserves a window per job and forgets shortages (§4.3).
  o.share_by_locality = policy() == qos::QosPolicy::ushape;
  o.track_loss = policy() == qos::QosPolicy::ushape;
  planner_.emplace(o);
  planner_policy_ = policy();
}

asio::awaitable<void> QosHost::tick_loop() {
  const int64_t period = int64_t{config_.qos_period_ms} * 1'000'000;
  while (!stopped_) {
    const int64_t now = unix_ns();
    int64_t next = now - now % period + period / 2;
    if (next <= now) next += period;
    timer_.expires_after(nanoseconds(next - now));
    asio::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (stopped_) break;
    if (!hosting()) continue;
    const int64_t start = next - period / 2 + period;
    plan_next(start);
    co_await flush_profiles();
    if (stopped_ || !hosting()) continue;
    // Goals whose clock started this period: every member learns the start.
    QosGoals next_goals = cluster_.qos();
    bool started = false;
    for (auto& [job, g] : next_goals.goals)
      if (g.start_unix_ms == 0 && runs_.contains(job) && runs_.at(job).bytes_done > 0) {
        g.start_unix_ms = (unix_ns() - period) / 1'000'000;
        started = true;
        spdlog::info("QoS: job {}'s goal of {} ms started with its first I/O", job, g.runtime_ms);
      }
    if (started) {
      Status st = co_await share(std::move(next_goals));
      if (!st.ok()) spdlog::error("QoS: saving the goals' start times: {}", st.to_string());
    }
  }
}

void QosHost::plan_next(int64_t start_unix_ns) {
  const qos::QosPolicy p = policy();
  const QosGoals& goals = cluster_.qos();
  const int64_t now_ns = unix_ns();
  const double period_s = config_.qos_period_ms / 1000.0;
  std::erase_if(runs_, [&](const auto& kv) { return !goals.goals.contains(kv.first); });
  std::erase_if(servers_, [&](const auto& kv) { return now_ns - kv.second > 3 * int64_t{config_.qos_period_ms} * 1'000'000; });
  std::vector<qos::JobReport> reports;
  for (const auto& [job, g] : goals.goals) {
    Run& run = runs_[job];
    const Measured m = period_.contains(job) ? period_.at(job) : Measured{};
    uint64_t served = 0;
    for (const auto& [server, bytes] : run.served) served += bytes;
    run.bytes_done = std::max(run.bytes_done + m.bytes, served);
    run.throughput = static_cast<double>(m.bytes) / period_s;
    if (run.finish_goal != g) {
      run.finish = {};
      run.finish_goal = g;
    }
    if (g.start_unix_ms > 0) {
      const bool was_done = run.finish.done_ms() > 0;
      run.finish.period(g.bytes, run.bytes_done, m.bytes > 0,
                        static_cast<uint64_t>(std::max<int64_t>(now_ns / 1'000'000 - g.start_unix_ms, 0)));
      if (!was_done && run.finish.done_ms() > 0)
        spdlog::info("QoS: job {} is done: {} of its {} bytes counted, {} ms after its start (goal {} ms)", job,
                     run.bytes_done, g.bytes, run.finish.done_ms(), g.runtime_ms);
    }
    if (p == qos::QosPolicy::ushape && model_bound(job, g, m, run)) {
      // run.bound and run.source are the model's.
    } else if (g.bytes > 0) {
      run.bound = static_cast<double>(g.bytes) / (static_cast<double>(g.runtime_ms) / 1000.0);
      run.model_bound = false;
      if (p != qos::QosPolicy::ushape) run.source = "average";  // else model_bound() said why not the model
    } else {
      run.model_bound = false;
      run.bound = 0;
      run.source = "none (no model and no --bytes)";
    }
    if (p == qos::QosPolicy::off) run.source = "off";
    qos::JobReport r;
    r.job = job;
    r.goal = true;
    r.bound = run.bound;
    r.bytes = m.bytes;
    r.window_bytes = m.window_bytes;
    r.active = m.requests > 0 || m.queued;
    const int64_t start_ms = g.start_unix_ms > 0 ? g.start_unix_ms : now_ns / 1'000'000;
    r.left = milliseconds(start_ms + static_cast<int64_t>(g.runtime_ms) - now_ns / 1'000'000);
    r.seek_cost = m.seek;
    r.idle_cost = m.idle;
    reports.push_back(std::move(r));
  }
  // Best effort: one report per name the planner sees (requests without
  // a job id count under kNoJob, merged with a job that calls itself so).
  std::map<std::string, bool, std::less<>> best_effort;
  for (const auto& [job, m] : period_) {
    const std::string name = job.empty() ? std::string(kNoJob) : job;
    if (goals.goals.contains(name)) continue;
    best_effort[name] = best_effort[name] || m.requests > 0 || m.queued;
  }
  for (const auto& [name, active] : best_effort) {
    qos::JobReport r;
    r.job = name;
    r.active = active;
    reports.push_back(std::move(r));
  }
  period_.clear();
  if (p == qos::QosPolicy::off) {
    planner_.reset();
    plan_ = {};
    plan_start_ = 0;
    return;
  }
  if (!planner_ || planner_policy_ != p) reset_planner();
  plan_ = planner_->plan(reports);
  plan_start_ = start_unix_ns;
  if (spdlog::should_log(spdlog::level::debug)) log_period(reports);
  for (const auto& [job, prof] : cluster_.qos_models().profiles)
    if (!prof.ended()) plan_profile(prof);
}

void QosHost::log_period(const std::vector<qos::JobReport>& reports) const {
  std::string line;
  for (const qos::JobReport& r : reports) {
    if (!r.active) continue;
    if (r.goal)
      line += fmt::format("{}: bound {:.2f} MB/s, got {:.2f} MB ({:.2f} in its window), {} ms left; ", r.job,
                          r.bound / 1e6, static_cast<double>(r.bytes) / 1e6,
                          static_cast<double>(r.window_bytes) / 1e6, duration_cast<milliseconds>(r.left).count());
    else
      line += fmt::format("{}: best effort; ", r.job);
  }
  line += "plan:";
  for (const qos::Window& w : plan_.windows)
    line += fmt::format(" {}{}{} {} ms", kind_name(w.kind), w.job.empty() ? "" : " ", w.job,
                        duration_cast<milliseconds>(w.length).count());
  spdlog::debug("QoS period: {}", line);
}

Status QosHost::report(mp::Request::QosReport::Reader req, mp::Reply::Builder reply) {
  if (!hosting()) return not_delegate();
  if (req.getJobs().size() > kMaxReportJobs)
    return Status(Errc::invalid_argument, fmt::format("a QoS report of more than {} jobs", kMaxReportJobs));
  // A report the server sent again, because its answer was lost, counts
  // once; so does one delayed past its successor.
  uint64_t& counted = counted_[req.getServer()];
  const bool again = req.getSeq() != 0 && req.getSeq() <= counted;
  if (req.getPeriodMs() > 0 && !again) {
    counted = std::max(counted, req.getSeq());
    servers_[req.getServer()] = unix_ns();
    for (auto j : req.getJobs()) {
      const std::string_view job = text(j.getJob());
      if (job.size() > kMaxJobIdBytes) continue;
      // Bytes counted for an earlier goal of the job are not this one's.
      if (auto goal = cluster_.qos().goals.find(job);
          j.getGoalBytes() > 0 && goal != cluster_.qos().goals.end() && j.getGoalId() == goal->second.id)
        runs_[std::string(job)].served[req.getServer()] = j.getGoalBytes();
      Measured& m = period_[std::string(job)];
      m.bytes += j.getBytes();
      m.window_bytes += std::min(j.getWindowBytes(), j.getBytes());
      m.requests += j.getRequests();
      m.queued = m.queued || j.getQueued();
      if (j.getRequests() > 0) {
        const auto mod = cluster_.qos_models().models.find(job);
        if (mod != cluster_.qos_models().models.end()) {
          // The tree on each epoch's locality (the server sends the epochs
          // of a job with a goal under ushape), averaged over the epochs;
          // else on the period's average locality.
          const qos::Model& model = mod->second.model;
          double sum = 0;
          unsigned n = 0;
          if (j.hasEpochs())
            for (auto e : j.getEpochs())
              if (e.getRequests() > 0 && std::isfinite(e.getAvgDistBytes()) && std::isfinite(e.getAvgSizeBytes()))
                sum += model.bound(e.getAvgDistBytes(), e.getAvgSizeBytes()), ++n;
          m.model_bound += n > 0 ? sum / n : model.bound(j.getAvgDistBytes(), j.getAvgSizeBytes());
          ++m.model_servers;
        }
      }
      if ((j.hasEpochs() && j.getEpochs().size() > 0) || (j.hasClientSpans() && j.getClientSpans().size() > 0)) {
        const auto prof = cluster_.qos_models().profiles.find(job);
        if (prof != cluster_.qos_models().profiles.end() && collecting(prof->second)) {
          PendingProfile& pending = pending_records_[std::string(job)];
          for (auto c : j.getClientSpans())
            if (c.getClient() != 0) qos::join_span(pending.clients, c.getClient(), {c.getFirstNs(), c.getLastNs()});
          auto& records = pending.records;
          for (auto e : j.getEpochs()) {
            if (records.size() >= qos::kMaxProfileEpochs || e.getRequests() == 0) break;
            qos::ProfileEpoch r;
            r.server = req.getServer();
            r.epoch = e.getEpoch();
            r.requests = e.getRequests();
            r.avg_dist_bytes = std::isfinite(e.getAvgDistBytes()) ? std::max(0.0, e.getAvgDistBytes()) : 0.0;
            r.avg_size_bytes = std::isfinite(e.getAvgSizeBytes()) ? std::max(0.0, e.getAvgSizeBytes()) : 0.0;
            r.bytes = e.getBytes();
            r.service = nanoseconds(static_cast<int64_t>(std::min<uint64_t>(e.getServiceNs(), 60'000'000'000)));
            records.push_back(r);
          }
        }
      }
      m.seek = std::max(m.seek, nanoseconds(static_cast<int64_t>(std::min<uint64_t>(j.getSeekCostNs(), 60'000'000'000))));
      if (j.getIdleCostNs() > 0) {
        const auto idle = nanoseconds(static_cast<int64_t>(std::min<uint64_t>(j.getIdleCostNs(), 60'000'000'000)));
        m.idle = (m.idle * m.idle_n + idle) / (m.idle_n + 1);
        ++m.idle_n;
      }
    }
  }
  told_[req.getServer()] = {unix_ns(), cluster_.qos().version};
  auto out = reply.initQosPlan();
  out.setPolicy(std::string(qos::qos_policy_name(policy())));
  out.setPeriodMs(config_.qos_period_ms);
  out.setStartUnixNs(plan_start_);
  // A plan repeats for two periods: a server that misses one fetch keeps
  // its windows; one that hears nothing for longer opens to everyone.
  out.setRepeat(2);
  auto windows = out.initWindows(static_cast<unsigned>(plan_.windows.size()));
  for (size_t i = 0; i < plan_.windows.size(); ++i) {
    auto w = windows[static_cast<unsigned>(i)];
    w.setKind(std::string(kind_name(plan_.windows[i].kind)));
    w.setJob(plan_.windows[i].job);
    w.setLengthNs(plan_.windows[i].length.count());
  }
  auto shared = out.initSharedMembers(static_cast<unsigned>(plan_.shared_members.size()));
  for (size_t i = 0; i < plan_.shared_members.size(); ++i) shared.set(static_cast<unsigned>(i), plan_.shared_members[i]);
  const auto& goals = cluster_.qos().goals;
  auto names = out.initGoals(static_cast<unsigned>(goals.size()));
  auto ids = out.initGoalIds(static_cast<unsigned>(goals.size()));
  unsigned i = 0;
  for (const auto& [job, g] : goals) {
    ids.set(i, g.id);
    names.set(i++, job);
  }
  std::vector<std::string> profiling;
  for (const auto& [job, prof] : cluster_.qos_models().profiles)
    if (collecting(prof)) profiling.push_back(job);
  auto pl = out.initProfiling(static_cast<unsigned>(profiling.size()));
  for (size_t k = 0; k < profiling.size(); ++k) pl.set(static_cast<unsigned>(k), profiling[k]);
  return {};
}

asio::awaitable<void> QosHost::told_or_warn(uint64_t version) {
  if (const size_t untold = co_await servers_told(version); untold > 0)
    spdlog::warn("QoS: {} storage server(s) did not ask for the plan within a period and a half of goals "
                 "version {}; they measure by the old goals until they do",
                 untold, version);
}

asio::awaitable<size_t> QosHost::servers_told(uint64_t version) {
  const int64_t period_ns = int64_t{config_.qos_period_ms} * 1'000'000;
  const int64_t give_up = unix_ns() + period_ns * 3 / 2;
  asio::steady_timer wait(io_);
  for (;;) {
    const int64_t now = unix_ns();
    size_t untold = 0;
    for (const auto& [server, t] : told_)
      if (now - t.at_ns < 2 * period_ns && t.version < version) ++untold;
    if (untold == 0 || now >= give_up || !hosting_) co_return untold;
    wait.expires_after(milliseconds(20));
    asio::error_code ec;
    co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

asio::awaitable<Status> QosHost::share(QosGoals next) {
  if (Status st = cluster_.share_qos(std::move(next)); !st.ok()) co_return st;
  replicas_ = co_await cluster_.replicate_qos();
  co_return Status{};
}

asio::awaitable<Status> QosHost::set_goal(mp::Request::QosGoal::Reader req, mp::Reply::Builder reply) {
  if (!hosting()) co_return not_delegate();
  const std::string job(text(req.getJob()));
  if (Status st = check_goal_job(job); !st.ok()) co_return st;
  if (req.getRuntimeMs() == 0) co_return Status(Errc::invalid_argument, "a QoS goal needs a runtime > 0");
  if (req.getRuntimeMs() > uint64_t{366} * 24 * 3600 * 1000)
    co_return Status(Errc::invalid_argument, "a QoS goal's runtime is at most a year");
  if (req.getStartUnixMs() < 0) co_return Status(Errc::invalid_argument, "a QoS goal's start is after 1970");
  // Refused rather than accepted as best effort: a user learns it now, not
  // at the deadline (docs/qos.md).
  if (auto prof = cluster_.qos_models().profiles.find(job); prof != cluster_.qos_models().profiles.end())
    if (prof->second.ended() && milliseconds(req.getRuntimeMs()) < prof->second.total())
      co_return Status(Errc::invalid_argument,
                       fmt::format("a goal of {} ms for job {} cannot be met: its profiling run took {} ms with "
                                   "the system to itself",
                                   req.getRuntimeMs(), job,
                                   std::chrono::duration_cast<milliseconds>(prof->second.total()).count()));
  QosGoals next = cluster_.qos();
  if (req.getFromEnv() && next.goals.contains(job)) {
    fill(reply.initQos());
    co_return Status{};
  }
  QosGoal g;
  g.job = job;
  g.runtime_ms = req.getRuntimeMs();
  g.start_unix_ms = req.getStartUnixMs();
  g.bytes = req.getBytes();
  // The version share() gives this change: unique to this goal, so the
  // servers tell it from the job's last one (nothing awaits in between).
  g.id = next.version + 1;
  next.goals[job] = g;
  runs_.erase(job);
  spdlog::info("QoS: job {} has a goal of {} ms{}", job, g.runtime_ms, req.getFromEnv() ? " (from its environment)" : "");
  if (Status st = co_await share(std::move(next)); !st.ok()) co_return st;
  // A goal from the job's environment comes with its first I/O, already
  // under way: waiting would only delay it.
  if (!req.getFromEnv()) co_await told_or_warn(cluster_.qos().version);
  if (!hosting()) co_return not_delegate();
  fill(reply.initQos());
  co_return Status{};
}

asio::awaitable<Status> QosHost::clear_goal(std::string_view job, mp::Reply::Builder reply) {
  if (!hosting()) co_return not_delegate();
  QosGoals next = cluster_.qos();
  auto it = next.goals.find(job);
  if (it != next.goals.end()) next.goals.erase(it);
  else
    co_return Status(Errc::not_found, fmt::format("job {} has no QoS goal (pvfs-ctl qos list shows those that do)", job));
  spdlog::info("QoS: job {}'s goal cleared", job);
  if (Status st = co_await share(std::move(next)); !st.ok()) co_return st;
  if (!hosting()) co_return not_delegate();
  fill(reply.initQos());
  co_return Status{};
}

asio::awaitable<Status> QosHost::set_policy(std::string_view name, mp::Reply::Builder reply) {
  if (!hosting()) co_return not_delegate();
  const auto p = qos::parse_qos_policy(name);
  if (!p) co_return Status(Errc::invalid_argument, fmt::format("unknown QoS policy \"{}\": off, average or ushape", name));
  if (*p != policy()) {
    spdlog::info("QoS: policy {} (was {})", qos::qos_policy_name(*p), qos::qos_policy_name(policy()));
    QosGoals next = cluster_.qos();
    next.policy = std::string(qos::qos_policy_name(*p));
    if (Status st = co_await share(std::move(next)); !st.ok()) co_return st;
    co_await told_or_warn(cluster_.qos().version);
    if (!hosting()) co_return not_delegate();
  }
  fill(reply.initQos());
  co_return Status{};
}

Status QosHost::status(mp::Reply::Builder reply) {
  if (!hosting()) return not_delegate();
  fill(reply.initQos());
  return {};
}

QosHost::Progress QosHost::progress(const std::string& job, const QosGoal& g, int64_t now_ms) const {
  Progress p;
  p.elapsed_ms = g.start_unix_ms > 0 && now_ms > g.start_unix_ms ? static_cast<uint64_t>(now_ms - g.start_unix_ms) : 0;
  const auto run = runs_.find(job);
  if (run != runs_.end() && run->second.finish.done_ms() > 0) {
    p.done_ms = p.elapsed_ms = p.projected_ms = run->second.finish.done_ms();
    return p;
  }
  if (run != runs_.end() && g.bytes > 0 && run->second.bytes_done > 0 && p.elapsed_ms > 0)
    p.projected_ms = static_cast<uint64_t>(static_cast<double>(p.elapsed_ms) * static_cast<double>(g.bytes) /
                                           static_cast<double>(std::min(run->second.bytes_done, g.bytes)));
  p.behind = p.elapsed_ms > g.runtime_ms || p.projected_ms > g.runtime_ms;
  return p;
}

void QosHost::fill(mp::Reply::QosState::Builder out) const {
  const QosGoals& goals = cluster_.qos();
  out.setDelegate(cluster_.self().value);
  out.setPolicy(std::string(qos::qos_policy_name(policy())));
  out.setPeriodMs(config_.qos_period_ms);
  out.setEpochMs(config_.qos_epoch_ms);
  out.setVersion(goals.version);
  out.setReplicas(std::max<uint32_t>(replicas_, 1));
  auto servers = out.initServers(static_cast<unsigned>(servers_.size()));
  unsigned si = 0;
  for (const auto& [id, at] : servers_) servers.set(si++, id);
  const int64_t now_ms = unix_ns() / 1'000'000;
  auto jobs = out.initJobs(static_cast<unsigned>(goals.goals.size()));
  unsigned i = 0;
  for (const auto& [job, g] : goals.goals) {
    auto j = jobs[i++];
    j.setJob(job);
    j.setRuntimeMs(g.runtime_ms);
    j.setStartUnixMs(g.start_unix_ms);
    j.setBytes(g.bytes);
    const Progress p = progress(job, g, now_ms);
    j.setElapsedMs(p.elapsed_ms);
    j.setProjectedMs(p.projected_ms);
    j.setDoneMs(p.done_ms);
    const auto run = runs_.find(job);
    if (run != runs_.end()) {
      j.setBoundBps(run->second.bound);
      j.setBoundSource(run->second.source);
      j.setThroughputBps(run->second.throughput);
      j.setBytesDone(run->second.bytes_done);
    } else {
      j.setBoundSource(g.bytes > 0 ? "average" : "none (no model and no --bytes)");
    }
    if (planner_)
      if (const qos::JobPlan* jp = planner_->job(job)) {
        j.setDedicated(jp->dedicated);
        j.setPromoted(jp->promoted);
        j.setWindowMs(seconds(jp->window) * 1000);
        j.setLossMs(seconds(jp->loss) * 1000);
        j.setCutMs(seconds(jp->cut) * 1000);
      }
    j.setBehind(p.behind);
  }
  auto windows = out.initWindows(static_cast<unsigned>(plan_.windows.size()));
  for (size_t w = 0; w < plan_.windows.size(); ++w) {
    auto o = windows[static_cast<unsigned>(w)];
    o.setKind(std::string(kind_name(plan_.windows[w].kind)));
    o.setJob(plan_.windows[w].job);
    o.setLengthNs(plan_.windows[w].length.count());
  }
  out.setPlanStartUnixNs(plan_start_);
}

void QosHost::add_metrics(metrics::Families& out) const {
  if (!hosting_) return;
  const QosGoals& goals = cluster_.qos();
  const int64_t now_ms = unix_ns() / 1'000'000;
  auto family = [](const char* name, const char* help) { return metrics::make_family(name, help, metrics::Type::gauge); };
  auto required = family("pvfs_mds_qos_required_seconds", "Each QoS goal's required execution time");
  auto elapsed = family("pvfs_mds_qos_elapsed_seconds", "Time since each goal's job started (0: not yet)");
  auto projected = family("pvfs_mds_qos_projected_seconds", "Each goal's projected execution time (absent: unknown)");
  auto bound = family("pvfs_mds_qos_bound_bytes_per_second", "Each goal's throughput bound B_required, all servers");
  auto achieved = family("pvfs_mds_qos_throughput_bytes_per_second", "Throughput each goal's job got in the last period");
  auto window = family("pvfs_mds_qos_window_seconds", "Each goal's dedicated window per period (0: shared)");
  auto loss = family("pvfs_mds_qos_loss_seconds", "T_loss recorded for each goal and not yet made up");
  auto behind = family("pvfs_mds_qos_behind", "1 when a goal's job is projected past its goal or its time is up");
  auto done = family("pvfs_mds_qos_done_seconds",
                     "When each goal's job served its declared bytes, since its start (absent: not done)");
  for (const auto& [job, g] : goals.goals) {
    const std::vector<metrics::Label> l{{"job", job}};
    required.samples.push_back({l, static_cast<double>(g.runtime_ms) / 1000.0, {}});
    const Progress p = progress(job, g, now_ms);
    elapsed.samples.push_back({l, static_cast<double>(p.elapsed_ms) / 1000.0, {}});
    if (p.projected_ms > 0) projected.samples.push_back({l, static_cast<double>(p.projected_ms) / 1000.0, {}});
    if (p.done_ms > 0) done.samples.push_back({l, static_cast<double>(p.done_ms) / 1000.0, {}});
    if (auto run = runs_.find(job); run != runs_.end()) {
      bound.samples.push_back({l, run->second.bound, {}});
      achieved.samples.push_back({l, run->second.throughput, {}});
    }
    if (planner_)
      if (const qos::JobPlan* jp = planner_->job(job)) {
        window.samples.push_back({l, seconds(jp->window), {}});
        loss.samples.push_back({l, seconds(jp->loss), {}});
      }
    behind.samples.push_back({l, p.behind ? 1.0 : 0.0, {}});
  }
  for (auto* f : {&required, &elapsed, &projected, &done, &bound, &achieved, &window, &loss, &behind})
    out.push_back(std::move(*f));
}

}  // namespace pvfs::mds
