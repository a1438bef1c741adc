#include "mds/iosched_host.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "shared/log.h"
#include "shared/request_limits.h"
#include "shared/rpc/convert.h"

namespace pvfs::mds {

namespace mp = proto::mds;
using std::chrono::milliseconds;

namespace {

constexpr unsigned kMaxClaims = 1024;  // per message: a client is in few steps at once
constexpr unsigned kMaxServers = 65536;

using rpc::text;

Status check_job(std::string_view job) {
  if (job.empty()) return Status(Errc::invalid_argument, "an I/O step needs a job id");
  if (job.size() > kMaxJobIdBytes)
    return Status(Errc::invalid_argument, fmt::format("job id longer than {} bytes", kMaxJobIdBytes));
  return {};
}

uint64_t ms(iosched::Nanos d) {
  return d.count() <= 0 ? 0 : static_cast<uint64_t>(std::chrono::duration_cast<milliseconds>(d).count());
}

iosched::Options options_of(const Config& config, iosched::Policy policy) {
  iosched::Options o;
  o.policy = policy;
  o.lease = milliseconds(config.iosched_lease_ms);
  o.max_wait = iosched::Nanos(static_cast<int64_t>(config.iosched_max_wait_s * 1e9));
  o.gather = milliseconds(config.iosched_gather_ms);
  return o;
}

}  // namespace

IoschedHost::IoschedHost(asio::io_context& io, const Config& config, MdsCluster& cluster)
    : io_(io),
      config_(config),
      cluster_(cluster),
      policy_(iosched::parse_policy(config.iosched_policy).value_or(iosched::Policy::none)),
      timer_(io) {}

void IoschedHost::start() { asio::co_spawn(io_, tick_loop(), asio::detached); }

void IoschedHost::stop() {
  stopped_ = true;
  timer_.cancel();
}

iosched::Nanos IoschedHost::now() const {
  return std::chrono::duration_cast<iosched::Nanos>(cluster_.clock().now().time_since_epoch());
}

// Under none every step runs at once, so a token the old delegate gave
// excludes nobody: nothing to wait for.
bool IoschedHost::in_grace() const {
  return policy_ != iosched::Policy::none && cluster_.clock().now() < grace_until_;
}

bool IoschedHost::hosting() {
  const auto t = cluster_.clock().now();
  const milliseconds lease(config_.iosched_lease_ms);
  if (cluster_.acting_delegate()) {
    if (!scheduler_) {
      // A policy switched at run time outlives the delegate that took it.
      const auto& shared = cluster_.iosched_setting();
      if (!shared.policy.empty())
        if (auto switched = iosched::parse_policy(shared.policy)) policy_ = *switched;
      scheduler_.emplace(options_of(config_, policy_));
      grace_until_ = t + lease;
      spdlog::info("I/O scheduler: hosted here (policy {}); new tokens wait {} ms for clients to re-register",
                   iosched::policy_name(policy_), config_.iosched_lease_ms);
    } else if (lapsed_) {
      // Back from a lapse of this member's cluster lease (heartbeat answers
      // late on a loaded machine) without another member becoming the
      // delegate in its view. It granted and confirmed nothing meanwhile.
      // Shorter than an I/O lease: no other member can have granted since
      // (a new delegate first waits dead_after, then an I/O lease), so the
      // queues go on as they were; longer: the grace of a new delegate.
      const auto away = t - last_acting_;
      if (away >= lease) grace_until_ = t + lease;
      spdlog::info("I/O scheduler: the cluster lease is back after {} ms; {} steps kept{}",
                   std::chrono::duration_cast<milliseconds>(away).count(), scheduler_->step_count(),
                   away >= lease ? fmt::format(", new tokens wait {} ms", lease.count()) : std::string());
    }
    lapsed_ = false;
    last_acting_ = t;
    return true;
  }
  if (scheduler_ && cluster_.delegate() == cluster_.self()) {
    if (!lapsed_)
      spdlog::warn("I/O scheduler: this member's cluster lease lapsed; no tokens are given or confirmed until it "
                   "is back ({} steps kept)",
                   scheduler_->step_count());
    lapsed_ = true;
    return false;
  }
  if (scheduler_) {
    spdlog::info("I/O scheduler: no longer the delegate; {} steps left to the next one", scheduler_->step_count());
    scheduler_.reset();
    lapsed_ = false;
    policy_ = iosched::parse_policy(config_.iosched_policy).value_or(iosched::Policy::none);
  }
  return false;
}

asio::awaitable<void> IoschedHost::tick_loop() {
  const milliseconds period(std::clamp<uint32_t>(config_.iosched_lease_ms / 10, 20, 100));
  while (!stopped_) {
    timer_.expires_after(period);
    asio::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (stopped_) break;
    if (!hosting()) continue;
    const auto t = now();
    for (const auto& gone : scheduler_->expire(t))
      spdlog::info("I/O scheduler: job {}'s step ended when its last client's lease lapsed{}", gone.step.job,
                   gone.step.granted ? "" : " (before it got a token)");
    if (!in_grace()) scheduler_->schedule(t);
  }
}

Status IoschedHost::not_delegate() const {
  if (cluster_.delegate() == cluster_.self())
    return Status(Errc::unavailable, fmt::format("mds {} is the delegate but holds no cluster lease (it is still "
                                                 "joining, or too few members answer its heartbeats): retry",
                                                 cluster_.self().value));
  return Status(Errc::unavailable, fmt::format("mds {} is not the delegate: mds {} hosts the I/O scheduler",
                                               cluster_.self().value, cluster_.delegate().value));
}

Status IoschedHost::io_step(mp::Request::IoStep::Reader req, mp::Reply::Builder reply) {
  if (!hosting()) return not_delegate();
  return step(req, reply.initIoStep());
}

Status IoschedHost::status(mp::Reply::Builder reply) {
  if (!hosting()) return not_delegate();
  fill(reply.initIosched());
  return {};
}

Status IoschedHost::set_policy(std::string_view name, mp::Reply::Builder reply) {
  if (!hosting()) return not_delegate();
  const auto policy = iosched::parse_policy(name);
  if (!policy)
    return Status(Errc::invalid_argument,
                  fmt::format("unknown I/O scheduling policy \"{}\": none, fcfs, sjf, sa-fcfs or sa-sjf", name));
  if (*policy != policy_)
    spdlog::info("I/O scheduler: policy {} (was {})", iosched::policy_name(*policy), iosched::policy_name(policy_));
  policy_ = *policy;
  cluster_.share_iosched_policy(std::string(iosched::policy_name(*policy)));
  scheduler_->set_policy(*policy);
  if (!in_grace()) scheduler_->schedule(now());
  fill(reply.initIosched());
  return {};
}

Status IoschedHost::step(mp::Request::IoStep::Reader req, mp::Reply::IoStepReply::Builder out) {
  const iosched::ClientKey client = req.getClient();
  if (client == 0) return Status(Errc::invalid_argument, "ioStep: client key 0 is reserved");
  if (req.getClaims().size() > kMaxClaims || req.getEnds().size() > kMaxClaims)
    return Status(Errc::invalid_argument, fmt::format("ioStep: more than {} claims or ends", kMaxClaims));
  const auto t = now();
  // Check everything first, so a bad message changes nothing.
  for (auto claim : req.getClaims()) {
    if (Status st = check_job(text(claim.getJob())); !st.ok()) return st;
    if (claim.getServers().size() > kMaxServers)
      return Status(Errc::invalid_argument, "ioStep: a claim names more servers than a cluster can have");
  }
  for (auto end : req.getEnds()) {
    const std::string_view job = text(end.getJob());
    if (Status st = check_job(job); !st.ok()) return st;
    const auto mine = scheduler_->step_of(job, t);
    if (!mine) return Status(Errc::not_found, fmt::format("job {} has no I/O step to end", job));
    if (std::find(mine->holders.begin(), mine->holders.end(), client) == mine->holders.end())
      return Status(Errc::not_found, fmt::format("job {}'s I/O step does not include this client", job));
  }

  std::vector<std::string> ended;
  for (auto end : req.getEnds()) {
    auto done = scheduler_->end(text(end.getJob()), client, end.getBytesWritten(), t);
    if (done.ok() && done->has_value()) ended.emplace_back(text(end.getJob()));
  }
  for (auto claim : req.getClaims()) {
    iosched::BeginRequest begin;
    begin.job = std::string(text(claim.getJob()));
    begin.client = client;
    if (claim.getDeclaredBytes() > 0) begin.declared_bytes = claim.getDeclaredBytes();
    for (uint32_t s : claim.getServers()) begin.servers.push_back(ServerId(s));
    begin.holds_token = claim.getHoldsToken();
    auto admitted = scheduler_->begin(begin, t);
    if (!admitted.ok()) return admitted.status();  // again: the scheduler is full
    scheduler_->report_written(begin.job, client, claim.getBytesWritten());
  }
  if (!in_grace()) scheduler_->schedule(t);

  std::vector<std::string> granted;
  for (auto claim : req.getClaims())
    if (scheduler_->granted(text(claim.getJob())) == true) granted.emplace_back(text(claim.getJob()));
  auto g = out.initGranted(static_cast<unsigned>(granted.size()));
  for (size_t i = 0; i < granted.size(); ++i) g.set(static_cast<unsigned>(i), granted[i]);
  auto e = out.initEnded(static_cast<unsigned>(ended.size()));
  for (size_t i = 0; i < ended.size(); ++i) e.set(static_cast<unsigned>(i), ended[i]);
  out.setLeaseMs(config_.iosched_lease_ms);
  return {};
}

void IoschedHost::fill(mp::Reply::IoschedState::Builder out) const {
  const auto t = now();
  const iosched::Snapshot snap = scheduler_->snapshot(t);
  out.setDelegate(cluster_.self().value);
  out.setPolicy(std::string(iosched::policy_name(snap.policy)));
  out.setLeaseMs(config_.iosched_lease_ms);
  out.setMaxWaitS(config_.iosched_max_wait_s);
  out.setGatherMs(config_.iosched_gather_ms);
  // Rounded up: 0 only once tokens are given, so a client that waits for 0
  // is never answered by a grace that has half a millisecond left.
  const auto grace = grace_until_ - cluster_.clock().now();
  out.setGraceMs(in_grace() && grace.count() > 0 ? static_cast<uint32_t>(std::chrono::ceil<milliseconds>(grace).count())
                                                 : 0);
  const auto put = [&](const std::vector<iosched::StepView>& steps, auto list) {
    for (size_t i = 0; i < steps.size(); ++i) {
      const auto& s = steps[i];
      auto o = list[static_cast<unsigned>(i)];
      o.setJob(s.job);
      o.setBytes(s.bytes);
      o.setSource(std::string(iosched::size_source_name(s.source)));
      auto servers = o.initServers(static_cast<unsigned>(s.servers.size()));
      for (size_t k = 0; k < s.servers.size(); ++k) servers.set(static_cast<unsigned>(k), s.servers[k].value);
      o.setWaitMs(ms((s.granted ? *s.granted : t) - s.arrived));
      o.setRunningMs(s.granted ? ms(t - *s.granted) : 0);
      o.setBytesWritten(s.bytes_written);
      o.setHolders(static_cast<uint32_t>(s.holders.size()));
      o.setStarved(s.starved);
    }
  };
  put(snap.active, out.initActive(static_cast<unsigned>(snap.active.size())));
  put(snap.pending, out.initPending(static_cast<unsigned>(snap.pending.size())));
  auto jobs = out.initJobs(static_cast<unsigned>(snap.jobs.size()));
  for (size_t i = 0; i < snap.jobs.size(); ++i) {
    const auto& j = snap.jobs[i];
    auto o = jobs[static_cast<unsigned>(i)];
    o.setJob(j.job);
    o.setSteps(j.steps);
    o.setWaitMs(ms(j.wait));
    o.setIoMs(ms(j.io));
    o.setBytesWritten(j.bytes_written);
  }
}

void IoschedHost::add_metrics(metrics::Families& out) const {
  if (!scheduler_) return;
  const iosched::Snapshot snap = scheduler_->snapshot(now());
  auto wait = metrics::make_family("pvfs_mds_iosched_token_wait_seconds_total",
                                   "Time each job's I/O steps waited for a token, the current one's so far included",
                                   metrics::Type::counter);
  auto io = metrics::make_family("pvfs_mds_iosched_io_seconds_total",
                                 "Time each job's I/O steps held a token, the current one's so far included",
                                 metrics::Type::counter);
  auto steps = metrics::make_family("pvfs_mds_iosched_steps_total", "I/O steps each job finished", metrics::Type::counter);
  for (const auto& j : snap.jobs) {
    wait.samples.push_back({{{"job", j.job}}, std::chrono::duration<double>(j.wait).count(), {}});
    io.samples.push_back({{{"job", j.job}}, std::chrono::duration<double>(j.io).count(), {}});
    steps.samples.push_back({{{"job", j.job}}, static_cast<double>(j.steps), {}});
  }
  auto holding = metrics::make_family("pvfs_mds_iosched_tokens", "Jobs holding an I/O token now (1 per job)",
                                      metrics::Type::gauge);
  for (const auto& s : snap.active) holding.samples.push_back({{{"job", s.job}}, 1.0, {}});
  auto waiting = metrics::make_family("pvfs_mds_iosched_waiting", "Jobs whose I/O step waits for a token now (1 per job)",
                                      metrics::Type::gauge);
  for (const auto& s : snap.pending) waiting.samples.push_back({{{"job", s.job}}, 1.0, {}});
  metrics::add_single(out, "pvfs_mds_iosched_pending_steps", "I/O steps waiting for a token", metrics::Type::gauge,
                      static_cast<double>(snap.pending.size()));
  out.push_back(std::move(wait));
  out.push_back(std::move(io));
  out.push_back(std::move(steps));
  out.push_back(std::move(holding));
  out.push_back(std::move(waiting));
}

}  // namespace pvfs::mds
