#include "policy/membership/membership.h"

#include <algorithm>

namespace pvfs::mds {
namespace {

placement::LatencyReport to_latency(MdsId m, const IntervalReport& r) {
  placement::LatencyReport out{m, r.latency_ms, r.requests, r.backlog, r.backlog_age_ms, r.busy, r.service_ms};
  out.sets = r.sets;
  out.interval_ms = r.interval_ms;
  return out;
}

}  // namespace

std::optional<IntervalReport> IntervalMeter::close(SteadyTime now) {
  if (now - start_ < length_) return std::nullopt;
  last_.seq += 1;
  last_.requests = requests_;
  last_.latency_ms = requests_ == 0 ? 0
                                    : std::chrono::duration<double, std::milli>(latency_).count() /
                                          static_cast<double>(requests_);
  last_.backlog = outstanding_;
  last_.backlog_age_ms = 0;
  if (outstanding_ > 0) {
    // Sum of the ages = n x now - sum of the arrival times.
    const auto ages =
        now.time_since_epoch() * static_cast<int64_t>(outstanding_) - SteadyTime::duration(outstanding_since_);
    last_.backlog_age_ms =
        std::chrono::duration<double, std::milli>(ages).count() / static_cast<double>(outstanding_);
  }
  if (outstanding_ > 0 && now > busy_since_) {
    busy_ += now - busy_since_;
    busy_since_ = now;
  }
  if (worked_given_ && !spans_) {
    // Both bound the work on requests: the thread works on other things
    // too (heartbeats, timers), and on none while none is outstanding.
    busy_ = std::min(busy_, worked_);
    worked_ = std::chrono::nanoseconds(0);
  }
  uint64_t served = requests_;
  if (spans_) {
    // The emulated server's time instead: the closed spans and the open
    // run's part up to now; the rest of the run belongs to the next one.
    // Per span completed by now.
    served = 0;
    while (!span_ends_.empty() && span_ends_.front() <= now) {
      span_ends_.pop_front();
      ++served;
    }
    busy_ = span_busy_;
    const SteadyTime from = std::max(span_from_, start_), to = std::min(span_to_, now);
    if (to > from) busy_ += to - from;
    span_busy_ = std::chrono::nanoseconds(0);
    span_from_ = std::max(span_from_, now);
    span_to_ = std::max(span_to_, span_from_);
  }
  const double length = std::chrono::duration<double, std::milli>(now - start_).count();
  const double busy = std::chrono::duration<double, std::milli>(busy_).count();
  last_.busy = length > 0 ? std::clamp(busy / length, 0.0, 1.0) : 0;
  last_.service_ms = served == 0 ? 0 : busy / static_cast<double>(served);
  last_.interval_ms = length;
  last_.sets.clear();
  for (const auto& [set, requests] : sets_) last_.sets.push_back({set, requests});
  sets_.clear();
  requests_ = 0;
  latency_ = std::chrono::nanoseconds(0);
  busy_ = std::chrono::nanoseconds(0);
  start_ = now;
  return last_;
}

Membership::Membership(std::vector<MdsId> members, MdsId self, SteadyTime start,
                       MembershipOptions options)
    : members_(std::move(members)), self_(self), start_(start), options_(options) {
  std::sort(members_.begin(), members_.end());
  members_.erase(std::unique(members_.begin(), members_.end()), members_.end());
  for (MdsId m : members_) peers_[m];
}

void Membership::heard(MdsId member, SteadyTime now, const IntervalReport& report) {
  auto it = peers_.find(member);
  if (it == peers_.end()) return;  // not configured: ignored
  Peer& p = it->second;
  if (!p.last_heard || now - *p.last_heard > options_.dead_after) p.alive_since = now;
  p.last_heard = now;
  if (report.seq != 0) reports_[member] = report;
}

void Membership::answered(MdsId member, SteadyTime sent) {
  auto it = peers_.find(member);
  if (it == peers_.end()) return;
  auto& last = it->second.last_answer_sent;
  if (!last || *last < sent) last = sent;
}

std::optional<SteadyTime> Membership::answered_until(MdsId member) const {
  auto it = peers_.find(member);
  if (it == peers_.end() || !it->second.last_answer_sent) return std::nullopt;
  return *it->second.last_answer_sent + options_.lease;
}

bool Membership::alive(MdsId member, SteadyTime now) const {
  if (member == self_) return true;
  auto it = peers_.find(member);
  if (it == peers_.end()) return false;
  const Peer& p = it->second;
  if (p.last_heard) return now - *p.last_heard <= options_.dead_after;
  return now - start_ <= options_.dead_after;  // not heard yet: may still be starting
}

std::vector<MdsId> Membership::alive_members(SteadyTime now) const {
  std::vector<MdsId> out;
  for (MdsId m : members_)
    if (alive(m, now)) out.push_back(m);
  return out;
}

MdsId Membership::delegate(const placement::AnuMap& map, SteadyTime now) const {
  for (MdsId m : map.servers())  // sorted
    if (alive(m, now)) return m;
  for (MdsId m : members_)
    if (alive(m, now)) return m;
  return self_;
}

bool Membership::quorum(const placement::AnuMap& map, SteadyTime now) const {
  const auto& in_map = map.servers();
  if (in_map.empty()) return true;
  size_t live = 0;
  for (MdsId m : in_map) live += alive(m, now) ? 1 : 0;
  return 2 * live > in_map.size() || (2 * live == in_map.size() && alive(in_map.front(), now));
}

bool Membership::lease_valid(const placement::AnuMap& map, SteadyTime now) const {
  const MdsId by = delegate(map, now);
  if (by != self_) {
    auto until = answered_until(by);
    return until && now < *until;
  }
  // The delegate itself: a quorum of the map answered it lately.
  const auto& in_map = map.servers();
  if (in_map.empty()) return true;
  size_t answering = 0;
  bool lowest = false;
  for (MdsId m : in_map) {
    bool ok = m == self_;
    if (!ok) {
      auto until = answered_until(m);
      ok = until && now < *until;
    }
    if (ok) {
      ++answering;
      if (m == in_map.front()) lowest = true;
    }
  }
  return 2 * answering > in_map.size() || (2 * answering == in_map.size() && lowest);
}

bool Membership::ready(SteadyTime now) const {
  if (now - start_ > options_.dead_after) return true;
  for (const auto& [id, p] : peers_)
    if (id != self_ && !p.last_heard) return false;
  return true;
}

bool Membership::all_reported(const placement::AnuMap& map, SteadyTime now) const {
  for (MdsId m : map.servers()) {
    if (!alive(m, now)) continue;
    auto it = reports_.find(m);
    if (it == reports_.end()) return false;
    auto before = used_.find(m);
    if (before != used_.end() && before->second.seq >= it->second.seq) return false;
  }
  return true;
}

const IntervalReport* Membership::report(MdsId member) const {
  auto it = reports_.find(member);
  return it == reports_.end() ? nullptr : &it->second;
}

std::optional<NextMap> Membership::next_map(const placement::AnuMap& map, SteadyTime now) {
  if (!quorum(map, now)) return std::nullopt;
  // Membership first: a dead member's file sets are unreachable until it leaves the map.
  for (MdsId m : map.servers()) {
    if (alive(m, now) || map.servers().size() == 1) continue;
    auto next = map.remove_server(m);
    if (next) return NextMap{std::move(*next), MapChange::removed, m, std::nullopt};
  }
  for (MdsId m : members_) {
    if (map.contains(m) || !alive(m, now)) continue;
    if (m != self_) {
      // Heard from steadily for a while: a flapping member does not pull file sets back and forth.
      const Peer& p = peers_.at(m);
      if (!p.alive_since || now - *p.alive_since < options_.dead_after) continue;
    }
    auto next = map.add_server(m);
    if (next) return NextMap{std::move(*next), MapChange::added, m, std::nullopt};
  }
  if (!placement::tunes(options_.policy)) return std::nullopt;
  const SteadyTime since = last_tuned_ ? *last_tuned_ : start_;
  if (now - since < options_.tune_interval) return std::nullopt;
  // Wait for every live member's report of the interval that just ended:
  // the delegate's own closes at its heartbeat, the others' reach it only
  // with the answers to that heartbeat, after this turn. Tuning at once
  // would weigh the delegate's new latency against the others' of the
  // interval before. A member that sends none holds it up for dead_after
  // at most.
  if (now - since < options_.tune_interval + options_.dead_after && !all_reported(map, now)) return std::nullopt;
  last_tuned_ = now;
  std::vector<placement::LatencyReport> current, previous;
  std::map<MdsId, IntervalReport> used;
  for (MdsId m : map.servers()) {
    auto it = reports_.find(m);
    if (it == reports_.end() || !alive(m, now)) continue;
    auto before = used_.find(m);
    if (before != used_.end()) {
      if (before->second.seq >= it->second.seq) continue;  // nothing new from it
      previous.push_back(to_latency(m, before->second));
    }
    current.push_back(to_latency(m, it->second));
    used[m] = it->second;
  }
  used_ = std::move(used);
  if (current.empty()) return std::nullopt;
  // What each member was offered in the earlier intervals under this map
  // (the tuner pools it with this one's): forgotten when the map changed.
  if (!tuned_version_ || *tuned_version_ != map.version()) history_.clear();
  tuned_version_ = map.version();
  for (placement::LatencyReport& r : current) {
    if (r.service_ms > 0) known_service_ms_[r.server] = r.service_ms;
    if (auto known = known_service_ms_.find(r.server); known != known_service_ms_.end())
      r.known_service_ms = known->second;
  }
  for (placement::LatencyReport& r : current) {
    const auto h = history_.find(r.server);
    if (h == history_.end() || h->second.requests == 0) continue;
    r.history_load = h->second.load / static_cast<double>(h->second.requests);
    r.history_requests = h->second.requests;
  }
  for (const placement::LatencyReport& r : current) {
    const placement::LatencyReport* prev = nullptr;
    for (const placement::LatencyReport& p : previous)
      if (p.server == r.server) prev = &p;
    if (!prev) continue;  // its backlog's growth is unknown
    History& h = history_[r.server];
    h.load += placement::offered_load(r, prev) * static_cast<double>(r.requests);
    h.requests += r.requests;
  }
  auto tuned = placement::tune(map, current, previous, options_.tuner);
  if (!tuned) return std::nullopt;
  last_tuning_ = *tuned;
  if (!tuned->map) return std::nullopt;
  placement::AnuMap next = *tuned->map;
  return NextMap{std::move(next), MapChange::tuned, self_, std::move(*tuned)};
}

}  // namespace pvfs::mds
