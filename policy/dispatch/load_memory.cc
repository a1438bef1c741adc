// The client's memory of server loads and the probe-or-not rule; see
// load_memory.h. Pure.
#include "policy/dispatch/load_memory.h"

#include <algorithm>
#include <set>

namespace pvfs::sched {

void LoadMemory::heard(const ServerLoad& load, TimePoint at) {
  auto it = figures_.find(load.server);
  if (it != figures_.end() && it->second.at > at) return;
  figures_.insert_or_assign(load.server, Figure{load, at});
}

void LoadMemory::sent(ServerId server, uint64_t bytes) {
  auto it = figures_.find(server);
  if (it == figures_.end()) return;
  it->second.load.bytes += bytes;
  ++it->second.load.requests;
}

std::optional<ServerLoad> LoadMemory::fresh(ServerId server, TimePoint now,
                                            std::chrono::nanoseconds fresh_for) const {
  auto it = figures_.find(server);
  if (it == figures_.end() || now - it->second.at >= fresh_for) return std::nullopt;
  return it->second.load;
}

std::vector<ServerLoad> LoadMemory::fresh_loads(std::span<const ServerId> servers, TimePoint now,
                                                std::chrono::nanoseconds fresh_for) const {
  std::vector<ServerLoad> out;
  for (ServerId s : servers)
    if (auto l = fresh(s, now, fresh_for)) out.push_back(*l);
  return out;
}

void LoadMemory::wrote(ServerId server, uint64_t bytes, std::chrono::nanoseconds took, TimePoint now) {
  if (bytes == 0) return;
  const double sample = static_cast<double>(std::max<int64_t>(took.count(), 0)) / static_cast<double>(bytes);
  Timing& t = timings_[server];
  t.recent[t.writes % kTimingSamples] = sample;
  ++t.writes;
  t.at = now;
}

double LoadMemory::Timing::ns_per_byte() const {
  if (writes < kMinTimings) return 0;
  const auto kept = recent.begin() + std::min<size_t>(writes, kTimingSamples);
  return *std::min_element(recent.begin(), kept);
}

std::vector<ServerLoad> LoadMemory::in_time(std::span<const ServerLoad> loads, uint64_t piece_bytes,
                                            TimePoint now, std::chrono::nanoseconds fresh_for) const {
  auto timing = [&](ServerId server) -> double {
    auto it = timings_.find(server);
    return it == timings_.end() || now - it->second.at >= kTimingLife * fresh_for ? 0 : it->second.ns_per_byte();
  };
  // The lower median, not the fastest: one healthy server that happened to
  // be quick must not make the others look slow.
  std::vector<double> timed;
  for (const ServerLoad& l : loads)
    if (const double t = timing(l.server); t > 0) timed.push_back(t);
  std::vector<ServerLoad> out(loads.begin(), loads.end());
  if (timed.empty()) return out;
  std::nth_element(timed.begin(), timed.begin() + (timed.size() - 1) / 2, timed.end());
  const double typical = timed[(timed.size() - 1) / 2];
  for (ServerLoad& l : out) {
    const double slower = timing(l.server) / typical;
    if (slower < kStragglerFactor) continue;
    const double in_time = static_cast<double>(l.bytes + piece_bytes) * slower - static_cast<double>(piece_bytes);
    l.bytes = in_time >= 1e18 ? uint64_t{1000000000000000000} : static_cast<uint64_t>(in_time);
  }
  return out;
}

std::vector<ServerLoad> LoadMemory::remembered(std::span<const ServerId> servers, uint64_t piece_bytes,
                                               TimePoint now, std::chrono::nanoseconds fresh_for) const {
  std::vector<ServerLoad> loads;
  for (ServerId s : servers) {
    if (auto l = fresh(s, now, fresh_for)) loads.push_back(*l);
    else if (timings_.contains(s)) loads.push_back(ServerLoad{s, 0, 0});
  }
  std::vector<ServerLoad> timed = in_time(loads, piece_bytes, now, fresh_for);
  // Keep a stale server only where its timing made it a straggler.
  std::vector<ServerLoad> out;
  for (size_t i = 0; i < loads.size(); ++i)
    if (fresh(loads[i].server, now, fresh_for) || timed[i].bytes != loads[i].bytes) out.push_back(timed[i]);
  return out;
}

namespace {

bool known(std::span<const ServerLoad> loads, ServerId server) {
  return std::any_of(loads.begin(), loads.end(), [&](const ServerLoad& l) { return l.server == server; });
}

// assign() over the remembered loads for the pieces whose home has a
// figure; the others stay home (assign() would send a piece with an
// unknown home to any known server, which only a probe may justify).
std::vector<ServerId> assign_remembered(const Options& options, std::span<const Piece> pieces,
                                        std::span<const ServerLoad> remembered,
                                        std::span<const ServerId> servers, std::mt19937_64& rng) {
  std::vector<Piece> placeable;
  for (const Piece& p : pieces)
    if (known(remembered, p.home)) placeable.push_back(p);
  const std::vector<ServerId> placed = assign(options, placeable, ProbePlan{}, remembered, servers, rng);
  std::vector<ServerId> out;
  out.reserve(pieces.size());
  size_t next = 0;
  for (const Piece& p : pieces) out.push_back(known(remembered, p.home) ? placed[next++] : p.home);
  return out;
}

}  // namespace

RoundChoice choose_round(const Options& options, std::span<const Piece> pieces, const ProbePlan& plan,
                         std::span<const ServerLoad> remembered, std::span<const ServerId> servers,
                         std::mt19937_64& rng) {
  if (plan.probe.empty()) return {RoundSource::none, "none", {}};
  if (options.policy != Policy::preassign) return {RoundSource::probe, "always", {}};
  const size_t worth = static_cast<size_t>(std::count_if(
      pieces.begin(), pieces.end(), [&](const Piece& p) { return p.bytes >= options.min_bytes; }));
  if (worth <= 1) {
    // No probe checks a lone piece's move, so only a clear skew is trusted.
    Options lone = options;
    lone.margin_bytes = options.margin_bytes * kLoneMarginFactor;
    return {RoundSource::memory, "lone", assign_remembered(lone, pieces, remembered, servers, rng)};
  }
  for (ServerId s : plan.probe)
    if (!known(remembered, s)) return {RoundSource::probe, "stale", {}, true};
  std::vector<ServerId> chosen = assign_remembered(options, pieces, remembered, servers, rng);
  for (size_t i = 0; i < pieces.size(); ++i)
    if (chosen[i] != pieces[i].home) return {RoundSource::probe, "skewed", {}};
  return {RoundSource::memory, "flat", std::move(chosen)};
}

}  // namespace pvfs::sched
