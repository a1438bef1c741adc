#include "policy/iosched/scheduler.h"

#include <algorithm>

namespace pvfs::iosched {

std::string_view policy_name(Policy policy) {
  switch (policy) {
    case Policy::none: return "none";
    case Policy::fcfs: return "fcfs";
    case Policy::sjf: return "sjf";
    case Policy::sa_fcfs: return "sa-fcfs";
    case Policy::sa_sjf: return "sa-sjf";
  }
  return "none";
}

std::optional<Policy> parse_policy(std::string_view text) {
  for (Policy p : {Policy::none, Policy::fcfs, Policy::sjf, Policy::sa_fcfs, Policy::sa_sjf})
    if (policy_name(p) == text) return p;
  return std::nullopt;
}

std::string_view size_source_name(SizeSource source) {
  switch (source) {
    case SizeSource::declared: return "declared";
    case SizeSource::predicted: return "predicted";
    case SizeSource::unknown: return "unknown";
  }
  return "unknown";
}

bool conflicts(const std::vector<ServerId>& a, const std::vector<ServerId>& b) {
  if (a.empty() || b.empty()) return true;
  // Both sorted: one merge pass.
  auto i = a.begin();
  auto j = b.begin();
  while (i != a.end() && j != b.end()) {
    if (*i == *j) return true;
    if (*i < *j) ++i;
    else ++j;
  }
  return false;
}

namespace {

bool sharing_aware(Policy p) { return p == Policy::sa_fcfs || p == Policy::sa_sjf; }
bool shortest_first(Policy p) { return p == Policy::sjf || p == Policy::sa_sjf; }

}  // namespace

Scheduler::Scheduler(Options options) : options_(options) {}

Result<Admission> Scheduler::begin(const BeginRequest& request, Nanos now) {
  if (request.job.empty()) return Status(Errc::invalid_argument, "an I/O step needs a job id");
  if (request.client == 0) return Status(Errc::invalid_argument, "client key 0 is reserved");
  if (request.servers.size() > options_.max_servers_per_step)
    return Status(Errc::invalid_argument, "an I/O step names more servers than the cluster can have");

  if (auto found = by_job_.find(request.job); found != by_job_.end()) {
    Step& step = steps_.at(found->second);
    const bool joined = step.holders.contains(request.client);
    if (!joined && step.holders.size() >= options_.max_holders_per_step)
      return Status(Errc::again, "too many clients in job " + request.job + "'s I/O step");
    step.holders[request.client] = now + options_.lease;
    if (request.declared_bytes && !step.granted) step.declared = request.declared_bytes;
    if (request.holds_token && !step.granted && !conflicts_with_active(step)) grant(step, now);
    return Admission{step.id, step.granted.has_value()};
  }
  if (steps_.size() >= options_.max_steps)
    return Status(Errc::again, "the I/O scheduler holds its maximum of steps");

  Step step;
  step.id = next_id_++;
  step.seq = next_seq_++;
  step.job = request.job;
  step.declared = request.declared_bytes;
  step.predicted = predicted_bytes(request.job);
  step.servers = request.servers;
  std::sort(step.servers.begin(), step.servers.end());
  step.servers.erase(std::unique(step.servers.begin(), step.servers.end()), step.servers.end());
  step.arrived = now;
  step.holders[request.client] = now + options_.lease;
  by_job_.emplace(step.job, step.id);
  jobs_[step.job].last_used = ++use_clock_;
  forget_jobs();
  const uint64_t id = step.id;
  Step& placed = steps_.emplace(id, std::move(step)).first->second;
  if (request.holds_token && !conflicts_with_active(placed)) grant(placed, now);
  return Admission{id, placed.granted.has_value()};
}

Result<std::optional<Finished>> Scheduler::end(std::string_view job, ClientKey client, uint64_t bytes_written,
                                               Nanos now) {
  auto found = by_job_.find(job);
  if (found == by_job_.end()) return Status(Errc::not_found, "job " + std::string(job) + " has no I/O step");
  auto it = steps_.find(found->second);
  PVFS_CHECK(it != steps_.end());
  Step& step = it->second;
  if (!step.holders.erase(client))
    return Status(Errc::not_found, "this client holds no I/O step of job " + std::string(job));
  uint64_t& mine = step.written[client];
  mine = std::max(mine, bytes_written);
  step.ended_cleanly = true;
  if (!step.holders.empty()) return std::optional<Finished>{};
  return std::optional<Finished>{finish(it, now, false)};
}

void Scheduler::renew(ClientKey client, Nanos now) {
  for (auto& [id, step] : steps_) {
    auto h = step.holders.find(client);
    if (h != step.holders.end()) h->second = now + options_.lease;
  }
}

void Scheduler::report_written(std::string_view job, ClientKey client, uint64_t bytes) {
  auto found = by_job_.find(job);
  if (found == by_job_.end()) return;
  Step& step = steps_.at(found->second);
  if (!step.holders.contains(client)) return;
  uint64_t& mine = step.written[client];
  mine = std::max(mine, bytes);
}

std::vector<Finished> Scheduler::expire(Nanos now) {
  std::vector<Finished> out;
  for (auto it = steps_.begin(); it != steps_.end();) {
    std::erase_if(it->second.holders, [&](const auto& h) { return h.second <= now; });
    if (it->second.holders.empty()) {
      auto next = std::next(it);
      out.push_back(finish(it, now, !it->second.ended_cleanly));
      it = next;
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<Finished> Scheduler::drop_client(ClientKey gone, Nanos now) {
  std::vector<Finished> out;
  for (auto it = steps_.begin(); it != steps_.end();) {
    const bool held = it->second.holders.erase(gone) > 0;
    if (held && it->second.holders.empty()) {
      auto next = std::next(it);
      out.push_back(finish(it, now, !it->second.ended_cleanly));
      it = next;
    } else {
      ++it;
    }
  }
  return out;
}

bool Scheduler::starved(const Step& step, Nanos now) const {
  return options_.max_wait > Nanos(0) && !step.granted && now - step.arrived >= options_.max_wait;
}

bool Scheduler::conflicts_with_active(const Step& step) const {
  if (options_.policy == Policy::none) return false;
  static const std::vector<ServerId> kAll;
  const bool sa = sharing_aware(options_.policy);
  for (const auto& [id, other] : steps_)
    if (other.granted && &other != &step && conflicts(sa ? step.servers : kAll, sa ? other.servers : kAll))
      return true;
  return false;
}

void Scheduler::grant(Step& step, Nanos now) {
  step.granted = now;
  step.granted_seq = next_grant_++;
}

bool Scheduler::before(const Step& a, const Step& b, Nanos now) const {
  const bool sa = starved(a, now);
  const bool sb = starved(b, now);
  if (sa != sb) return sa;
  if (sa || !shortest_first(options_.policy)) return a.seq < b.seq;
  const auto size = [](const Step& s) { return s.declared ? s.declared : s.predicted; };
  const auto za = size(a);
  const auto zb = size(b);
  // Unknown sizes queue behind every known one, in arrival order.
  if (za.has_value() != zb.has_value()) return za.has_value();
  if (za && *za != *zb) return *za < *zb;
  return a.seq < b.seq;
}

std::vector<const Scheduler::Step*> Scheduler::pending_order(Nanos now) const {
  std::vector<const Step*> out;
  for (const auto& [id, step] : steps_)
    if (!step.granted) out.push_back(&step);
  std::sort(out.begin(), out.end(), [&](const Step* a, const Step* b) { return before(*a, *b, now); });
  return out;
}

std::vector<StepView> Scheduler::schedule(Nanos now) {
  std::vector<StepView> granted;
  const Policy policy = options_.policy;
  if (policy != Policy::none && options_.gather > Nanos(0)) {
    bool any_active = false;
    std::optional<Nanos> earliest;
    for (const auto& [id, step] : steps_) {
      if (step.granted) any_active = true;
      else earliest = earliest ? std::min(*earliest, step.arrived) : step.arrived;
    }
    // Only steps that arrived to an idle system gather: one that waited
    // behind a token holder goes as soon as the token is back.
    if (!any_active && earliest && *earliest >= idle_since_) {
      if (!gather_until_) gather_until_ = *earliest + options_.gather;
      if (now < *gather_until_ && worth_gathering(now)) return granted;
    }
    gather_until_.reset();
  }
  // Under system-wide serialization every step stands for all servers, so
  // the one conflict test covers both families.
  static const std::vector<ServerId> kAll;
  const auto servers_of = [&](const Step& s) -> const std::vector<ServerId>& {
    return sharing_aware(policy) ? s.servers : kAll;
  };
  std::vector<const std::vector<ServerId>*> busy;
  for (const auto& [id, step] : steps_)
    if (step.granted) busy.push_back(&servers_of(step));
  std::vector<const std::vector<ServerId>*> reserved;  // servers starved steps wait for

  for (const Step* candidate : pending_order(now)) {
    const auto& mine = servers_of(*candidate);
    bool blocked = false;
    if (policy != Policy::none) {
      for (const auto* other : busy) blocked = blocked || conflicts(mine, *other);
      for (const auto* other : reserved) blocked = blocked || conflicts(mine, *other);
    }
    if (blocked) {
      if (starved(*candidate, now)) reserved.push_back(&mine);
      continue;
    }
    Step& step = steps_.at(candidate->id);
    grant(step, now);
    busy.push_back(&mine);
    granted.push_back(view(step, now));
  }
  return granted;
}

bool Scheduler::worth_gathering(Nanos now) const {
  const auto order = pending_order(now);
  if (order.empty()) return false;
  // Nothing remembered: any job may be about to arrive, wait the window.
  bool known = false;
  for (const auto& [job, record] : jobs_) known = known || !record.sizes.empty();
  if (!known) return true;
  // Otherwise wait only for a remembered job, absent now, that the policy
  // would serve before the head of the queue on a server it uses (under
  // FCFS none can: it would arrive later).
  if (!shortest_first(options_.policy)) return false;
  const Step& head = *order.front();
  const auto head_size = head.declared ? head.declared : head.predicted;
  for (const auto& [job, record] : jobs_) {
    if (record.sizes.empty() || by_job_.contains(job)) continue;
    const auto size = predicted_bytes(job);
    const bool sooner = !head_size || *size < *head_size;
    if (sooner && (!sharing_aware(options_.policy) || conflicts(record.servers, head.servers))) return true;
  }
  return false;
}

std::optional<bool> Scheduler::granted(std::string_view job) const {
  auto found = by_job_.find(job);
  if (found == by_job_.end()) return std::nullopt;
  return steps_.at(found->second).granted.has_value();
}

std::optional<StepView> Scheduler::step_of(std::string_view job, Nanos now) const {
  auto found = by_job_.find(job);
  if (found == by_job_.end()) return std::nullopt;
  return view(steps_.at(found->second), now);
}

std::optional<Nanos> Scheduler::next_deadline() const {
  std::optional<Nanos> out;
  const auto take = [&](Nanos t) { out = out ? std::min(*out, t) : t; };
  for (const auto& [id, step] : steps_) {
    for (const auto& [client, expiry] : step.holders) take(expiry);
    if (!step.granted && options_.max_wait > Nanos(0)) take(step.arrived + options_.max_wait);
  }
  if (gather_until_) take(*gather_until_);
  return out;
}

std::optional<uint64_t> Scheduler::predicted_bytes(std::string_view job) const {
  auto found = jobs_.find(job);
  if (found == jobs_.end() || found->second.sizes.empty()) return std::nullopt;
  uint64_t sum = 0;
  for (uint64_t s : found->second.sizes) sum += s;
  return sum / found->second.sizes.size();
}

StepView Scheduler::view(const Step& step, Nanos now) const {
  StepView v;
  v.id = step.id;
  v.job = step.job;
  if (step.declared) {
    v.bytes = *step.declared;
    v.source = SizeSource::declared;
  } else if (step.predicted) {
    v.bytes = *step.predicted;
    v.source = SizeSource::predicted;
  }
  v.servers = step.servers;
  v.arrived = step.arrived;
  v.granted = step.granted;
  uint64_t written = 0;
  for (const auto& [client, bytes] : step.written) written += bytes;
  v.bytes_written = written;
  for (const auto& [client, expiry] : step.holders) v.holders.push_back(client);
  v.starved = starved(step, now);
  return v;
}

Finished Scheduler::finish(std::map<uint64_t, Step>::iterator it, Nanos now, bool lapsed) {
  Finished out{view(it->second, now), now, lapsed};
  const Step& step = it->second;
  JobRecord& record = jobs_[step.job];
  record.stats.job = step.job;
  ++record.stats.steps;
  record.stats.wait += (step.granted ? *step.granted : now) - step.arrived;
  if (step.granted) record.stats.io += now - *step.granted;
  record.stats.bytes_written += out.step.bytes_written;
  record.last_used = ++use_clock_;
  // A lapsed step's byte count is whatever its holders reported before
  // dying: no basis for predicting the next one.
  if (!lapsed && out.step.bytes_written > 0) {
    record.sizes.push_back(out.step.bytes_written);
    record.servers = step.servers;
    while (record.sizes.size() > std::max<size_t>(options_.history, 1)) record.sizes.pop_front();
  }
  const bool was_granted = step.granted.has_value();
  by_job_.erase(step.job);
  steps_.erase(it);
  if (was_granted && std::none_of(steps_.begin(), steps_.end(), [](const auto& e) { return e.second.granted; }))
    idle_since_ = now;
  forget_jobs();
  return out;
}

void Scheduler::forget_jobs() {
  while (jobs_.size() > options_.max_jobs) {
    auto oldest = jobs_.end();
    for (auto it = jobs_.begin(); it != jobs_.end(); ++it)
      if (!by_job_.contains(it->first) && (oldest == jobs_.end() || it->second.last_used < oldest->second.last_used))
        oldest = it;
    if (oldest == jobs_.end()) return;  // every remembered job has a live step
    jobs_.erase(oldest);
  }
}

Snapshot Scheduler::snapshot(Nanos now) const {
  Snapshot out;
  out.policy = options_.policy;
  std::vector<const Step*> active;
  for (const auto& [id, step] : steps_)
    if (step.granted) active.push_back(&step);
  std::sort(active.begin(), active.end(), [](const Step* a, const Step* b) { return a->granted_seq < b->granted_seq; });
  for (const Step* s : active) out.active.push_back(view(*s, now));
  for (const Step* s : pending_order(now)) out.pending.push_back(view(*s, now));
  std::map<std::string_view, JobStats> totals;
  for (const auto& [job, record] : jobs_)
    if (record.stats.steps > 0) totals[job] = record.stats;
  for (const auto& [id, step] : steps_) {
    JobStats& t = totals[step.job];
    t.job = step.job;
    t.in_step = true;
    t.wait += (step.granted ? *step.granted : now) - step.arrived;
    if (step.granted) t.io += now - *step.granted;
    for (const auto& [client, bytes] : step.written) t.bytes_written += bytes;
  }
  for (auto& [job, t] : totals) out.jobs.push_back(std::move(t));
  return out;
}

}  // namespace pvfs::iosched
