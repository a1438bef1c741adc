#include "mds/cluster/membership.h"

#include <algorithm>

namespace pvfs::mds {

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

MdsId Membership::delegate(SteadyTime now) const {
  for (MdsId m : members_)
    if (alive(m, now)) return m;
  return self_;
}

bool Membership::ready(SteadyTime now) const {
  if (now - start_ > options_.dead_after) return true;
  for (const auto& [id, p] : peers_)
    if (id != self_ && !p.last_heard) return false;
  return true;
}

const IntervalReport* Membership::report(MdsId member) const {
  auto it = reports_.find(member);
  return it == reports_.end() ? nullptr : &it->second;
}

std::optional<NextMap> Membership::next_map(const placement::AnuMap& map, SteadyTime now) {
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
  if (last_tuned_ && now - *last_tuned_ < options_.tune_interval) return std::nullopt;
  if (!last_tuned_ && now - start_ < options_.tune_interval) return std::nullopt;
  last_tuned_ = now;
  std::vector<placement::LatencyReport> current, previous;
  std::map<MdsId, IntervalReport> used;
  for (MdsId m : map.servers()) {
    auto it = reports_.find(m);
    if (it == reports_.end() || !alive(m, now)) continue;
    auto before = used_.find(m);
    if (before != used_.end()) {
      if (before->second.seq >= it->second.seq) continue;  // nothing new from it
      previous.push_back({m, before->second.latency_ms, before->second.requests});
    }
    current.push_back({m, it->second.latency_ms, it->second.requests});
    used[m] = it->second;
  }
  used_ = std::move(used);
  if (current.empty()) return std::nullopt;
  auto tuned = placement::tune(map, current, previous, options_.tuner);
  if (!tuned) return std::nullopt;
  last_tuning_ = *tuned;
  if (!tuned->map) return std::nullopt;
  placement::AnuMap next = *tuned->map;
  return NextMap{std::move(next), MapChange::tuned, self_, std::move(*tuned)};
}

}  // namespace pvfs::mds
