#include "server/qos_agent.h"

#include <algorithm>

#include <fmt/format.h>

#include "shared/log.h"
#include "shared/proto/mds.capnp.h"
#include "shared/rpc/convert.h"

namespace pvfs {

namespace mp = proto::mds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

namespace {

using rpc::text;

// A period of 100 ms epochs has 10; more only after missed reports.
constexpr size_t kMaxEpochsPerReport = 256;

int64_t unix_ns() {
  return std::chrono::duration_cast<nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::optional<qos::WindowKind> kind_of(std::string_view k) {
  if (k == "dedicated") return qos::WindowKind::dedicated;
  if (k == "shared") return qos::WindowKind::shared;
  if (k == "best-effort") return qos::WindowKind::best_effort;
  return std::nullopt;
}

}  // namespace

QosAgent::QosAgent(asio::any_io_executor ex, const Config& config, const Secret& key, uint32_t id, IoQueue& queue)
    : ex_(ex),
      config_(config),
      id_(id),
      queue_(queue),
      tracker_(milliseconds(config.qos_epoch_ms)),
      next_seq_(static_cast<uint64_t>(unix_ns())),
      last_report_(std::chrono::steady_clock::now()),
      timer_(ex) {
  std::vector<DaemonEntry> mds = config.mds;
  std::sort(mds.begin(), mds.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (const auto& m : mds) {
    members_.push_back(std::make_unique<rpc::Peer>(ex, m.address, rpc::Auth(key, {rpc::Kind::server, id}, config.encrypt),
                                                   milliseconds(config.connect_timeout_ms)));
    member_ids_.push_back(m.id);
  }
  queue_.on_served([this](const IoQueue::Served& s) { served(s); });
}

void QosAgent::start() { asio::co_spawn(ex_, loop(), asio::detached); }

void QosAgent::stop() {
  stopped_ = true;
  timer_.cancel();
  queue_.on_served({});
  for (auto& m : members_) m->close();
}

uint64_t QosAgent::pending_bytes(std::string_view job) const {
  auto it = totals_.find(job);
  return it == totals_.end() ? 0 : it->second.bytes;
}

void QosAgent::served(const IoQueue::Served& s) {
  Totals& t = totals_[std::string(s.job)];
  t.bytes += s.length;
  t.requests += 1;
  t.window_bytes += s.window_bytes;
  if (s.job.empty()) return;  // best effort: no locality to learn
  if (s.client != 0 && !profiling_.empty() && profiling_.contains(s.job))
    qos::join_span(t.clients, s.client, {s.client_io_ns, s.client_io_ns});
  Last& last = last_[std::string(s.job)];
  // §3.2.1's idle cost: how long after one of its requests completes the
  // job's next one arrives here (what a dedicated window would wait).
  if (last.done.count() > 0 && s.arrival > last.done) {
    t.idle_sum += s.arrival - last.done;
    ++t.idle_n;
  }
  last.done = std::max(last.done, s.done);
  tracker_.record(s.job, qos::object_lba(s.object, s.offset), s.length, s.arrival, s.done);
}

asio::awaitable<void> QosAgent::loop() {
  const int64_t period = int64_t{config_.qos_period_ms} * 1'000'000;
  while (!stopped_) {
    // Ticks at a quarter and three quarters into each period of the wall
    // clock, as the coordinator counts them.
    const int64_t now = unix_ns();
    const int64_t base = now - now % period;
    int64_t next = base + period / 4;
    bool report = true;
    if (next <= now) next = base + 3 * period / 4, report = false;
    if (next <= now) next = base + period + period / 4, report = true;
    timer_.expires_after(nanoseconds(next - now));
    asio::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (stopped_) break;
    co_await exchange(report);
  }
}

asio::awaitable<void> QosAgent::exchange(bool report) {
  if (report) keep_report();
  std::unique_ptr<rpc::InMessage> answer;
  if (unsent_.empty()) {
    rpc::OutMessage ask;
    ask.init_body<mp::Request>().initQosReport().setServer(id_);
    answer = co_await deliver(ask);
  }
  // Reports no member has taken yet go first, oldest first. One that had no
  // answer may have been counted all the same: it goes again under its
  // number, which the coordinator counts once.
  while (!unsent_.empty() && !stopped_) {
    auto reply = co_await deliver(*unsent_.front());
    if (!reply) break;
    unsent_.pop_front();
    answer = std::move(reply);
  }
  if (answer && !stopped_) install(*answer);
}

void QosAgent::keep_report() {
  auto out = std::make_unique<rpc::OutMessage>();
  auto r = out->init_body<mp::Request>().initQosReport();
  r.setServer(id_);
  r.setSeq(next_seq_++);
  const auto now_steady = std::chrono::steady_clock::now();
  r.setPeriodMs(static_cast<uint32_t>(
      std::max<int64_t>(1, std::chrono::duration_cast<milliseconds>(now_steady - last_report_).count())));
  last_report_ = now_steady;
  for (const qos::EpochSample& e : tracker_.close(queue_.now() + tracker_.epoch_length())) {
    auto it = totals_.find(e.job);
    if (it == totals_.end()) continue;
    Totals& t = it->second;
    t.dist_weighted += e.avg_dist_bytes * static_cast<double>(e.requests);
    t.size_weighted += e.avg_size_bytes * static_cast<double>(e.requests);
    t.epoch_requests += e.requests;
    t.service += e.service;
    const bool wanted = profiling_.contains(e.job) ||
                        (goals_.contains(e.job) && queue_.qos_policy() == qos::QosPolicy::ushape);
    if (wanted && t.epochs.size() < kMaxEpochsPerReport) t.epochs.push_back(e);
  }
  // The period's bytes of each job with a goal join its total here, once a
  // period, not on every request served.
  for (auto& [job, goal] : goal_bytes_)
    if (auto it = totals_.find(job); it != totals_.end()) goal.bytes += it->second.bytes;
  const auto queued = queue_.queued_by_job();
  std::vector<std::string> jobs;
  for (const auto& [job, t] : totals_) jobs.push_back(job);
  for (const auto& [job, n] : queued)
    if (!totals_.contains(job)) jobs.push_back(job);
  for (const auto& [job, goal] : goal_bytes_)
    if (goal.bytes > 0 && !totals_.contains(job) && !queued.contains(job)) jobs.push_back(job);
  std::sort(jobs.begin(), jobs.end());
  auto list = r.initJobs(static_cast<unsigned>(jobs.size()));
  const nanoseconds seek = config_.emulated_bandwidth_bytes > 0
                               ? std::chrono::duration_cast<nanoseconds>(
                                     std::chrono::duration<double, std::milli>(config_.emulated_seek_ms))
                               : nanoseconds(0);
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto j = list[static_cast<unsigned>(i)];
    j.setJob(jobs[i]);
    j.setQueued(queued.contains(jobs[i]));
    if (auto goal = goal_bytes_.find(jobs[i]); goal != goal_bytes_.end()) {
      j.setGoalBytes(goal->second.bytes);
      j.setGoalId(goal->second.id);
    }
    auto it = totals_.find(jobs[i]);
    if (it == totals_.end()) continue;
    const Totals& t = it->second;
    j.setBytes(t.bytes);
    j.setWindowBytes(t.window_bytes);
    j.setRequests(t.requests);
    const double n = static_cast<double>(std::max<uint64_t>(t.epoch_requests, 1));
    j.setAvgDistBytes(t.dist_weighted / n);
    j.setAvgSizeBytes(t.size_weighted / n);
    j.setServiceNs(static_cast<uint64_t>(t.service.count()));
    // A dedicated window saves a seek per request only for a job whose
    // requests follow each other (§3.2.1); a scattered one seeks anyway.
    // Without an emulated disk the server cannot tell a seek's cost.
    const bool sequential = t.epoch_requests > 0 && t.dist_weighted / n <= t.size_weighted / n;
    j.setSeekCostNs(sequential ? static_cast<uint64_t>(seek.count()) : 0);
    j.setIdleCostNs(t.idle_n ? static_cast<uint64_t>(t.idle_sum.count() / static_cast<int64_t>(t.idle_n)) : 0);
    if (!t.clients.empty()) {
      auto list_c = j.initClientSpans(static_cast<unsigned>(t.clients.size()));
      unsigned k = 0;
      for (const auto& [client, span] : t.clients) {
        auto o = list_c[k++];
        o.setClient(client);
        o.setFirstNs(span.first_ns);
        o.setLastNs(span.last_ns);
      }
    }
    if (!t.epochs.empty()) {
      auto list_e = j.initEpochs(static_cast<unsigned>(t.epochs.size()));
      for (size_t k = 0; k < t.epochs.size(); ++k) {
        const qos::EpochSample& e = t.epochs[k];
        auto o = list_e[static_cast<unsigned>(k)];
        o.setEpoch(e.epoch);
        o.setRequests(e.requests);
        o.setAvgDistBytes(e.avg_dist_bytes);
        o.setAvgSizeBytes(e.avg_size_bytes);
        o.setBytes(e.bytes);
        o.setServiceNs(static_cast<uint64_t>(e.service.count()));
      }
    }
  }
  totals_.clear();
  if (unsent_.size() == kMaxUnsentReports) {
    if (!dropped_warned_)
      spdlog::warn("QoS: no metadata server took this server's reports for {} periods; dropping the oldest",
                   kMaxUnsentReports);
    dropped_warned_ = true;
    unsent_.pop_front();
  }
  unsent_.push_back(std::move(out));
}

asio::awaitable<std::unique_ptr<rpc::InMessage>> QosAgent::deliver(rpc::OutMessage& out) {
  std::vector<size_t> order;
  if (delegate_) order.push_back(*delegate_);
  for (size_t i = 0; i < members_.size(); ++i)
    if (!delegate_ || i != *delegate_) order.push_back(i);
  const milliseconds timeout(std::max<uint32_t>(config_.qos_period_ms / 2, 100));
  for (size_t i : order) {
    auto reply = co_await members_[i]->call(out, {}, timeout);
    if (stopped_) co_return nullptr;
    if (!reply) {
      if (reply.code() == Errc::timeout) members_[i]->close();
      if (reply.code() == Errc::unavailable || reply.code() == Errc::timeout || reply.code() == Errc::io) continue;
      if (!warned_) spdlog::warn("QoS: mds {} refused this server's report: {}", member_ids_[i], reply.status().to_string());
      warned_ = true;
      co_return nullptr;
    }
    if (!delegate_ || *delegate_ != i) spdlog::info("QoS: the coordinator is on mds {}", member_ids_[i]);
    delegate_ = i;
    warned_ = false;
    dropped_warned_ = false;
    co_return std::move(*reply);
  }
  delegate_.reset();
  co_return nullptr;
}

void QosAgent::install(rpc::InMessage& reply) {
  auto body = reply.body<mp::Reply>();
  if (!body.isQosPlan()) return;
  auto p = body.getQosPlan();
  const auto policy = qos::parse_qos_policy(text(p.getPolicy()));
  if (!policy) return;
  profiling_.clear();
  for (auto job : p.getProfiling()) profiling_.emplace(text(job));
  goals_.clear();
  std::map<std::string, uint64_t, std::less<>> ids;  // by job; 0 from a delegate that sends none
  const auto goal_ids = p.getGoalIds();
  for (unsigned i = 0; i < p.getGoals().size(); ++i) {
    const std::string job(text(p.getGoals()[i]));
    ids[job] = i < goal_ids.size() ? goal_ids[i] : 0;
    goals_.insert(job);
  }
  // A goal new to this server counts from here, as does a job's new goal
  // (another id); a cleared one is forgotten.
  std::erase_if(goal_bytes_, [&](const auto& kv) {
    if (goals_.contains(kv.first)) return false;
    spdlog::info("QoS: job {}'s goal is cleared", kv.first);
    return true;
  });
  for (const auto& [job, id] : ids) {
    auto [it, added] = goal_bytes_.try_emplace(job, GoalCount{id, 0});
    if (added) {
      spdlog::info("QoS: job {} has a goal; counting its bytes", job);
    } else if (it->second.id != id) {
      spdlog::info("QoS: job {} has a new goal; counting its bytes from 0", job);
      it->second = GoalCount{id, 0};
    }
  }
  if (*policy != queue_.qos_policy()) {
    spdlog::info("QoS: policy {} (was {})", qos::qos_policy_name(*policy), qos::qos_policy_name(queue_.qos_policy()));
    queue_.set_qos_policy(*policy);
  }
  if (*policy == qos::QosPolicy::off) installed_start_ = 0;
  if (*policy == qos::QosPolicy::off || p.getStartUnixNs() == 0 || p.getPeriodMs() == 0) return;
  qos::Plan plan;
  plan.period = milliseconds(p.getPeriodMs());
  nanoseconds total{0};
  for (auto w : p.getWindows()) {
    const auto kind = kind_of(text(w.getKind()));
    if (!kind || w.getLengthNs() < 0) return;  // a plan this build does not read: keep the old one
    total += nanoseconds(w.getLengthNs());
    plan.windows.push_back({*kind, std::string(text(w.getJob())), nanoseconds(w.getLengthNs())});
  }
  if (total > plan.period) return;
  for (auto m : p.getSharedMembers()) plan.shared_members.emplace_back(text(m));
  std::sort(plan.shared_members.begin(), plan.shared_members.end());
  // The delegate's wall-clock start on this host's steady clock (the
  // clock assumption in the file comment).
  const auto start = queue_.now() + nanoseconds(p.getStartUnixNs() - unix_ns());
  if (installed_start_ == 0)
    spdlog::info("QoS: enforcing the coordinator's windows ({} ms periods)", p.getPeriodMs());
  installed_start_ = p.getStartUnixNs();
  queue_.install_plan(std::move(plan), start, static_cast<int>(std::clamp<uint32_t>(p.getRepeat(), 1, 16)));
}

}  // namespace pvfs
