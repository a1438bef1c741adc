// The write dispatcher's policies as plain functions over slim values.
// Randomness comes only from the caller's generator, drawn through our own
// unbiased bounded draw so a seed gives the same plan on every standard
// library. Pure; see dispatcher.h.
#include "policy/dispatch/dispatcher.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace pvfs::sched {
namespace {

// Uniform in [0, n) for n > 0, by rejecting the 2^64 mod n lowest draws.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t rejected = (UINT64_MAX % n + 1) % n;  // 2^64 mod n
  uint64_t x = rng();
  while (x < rejected) x = rng();
  return x % n;
}

bool probed_policy(Policy p) {
  return p == Policy::two_choice || p == Policy::collab || p == Policy::preassign;
}

bool worth_probing(const Options& options, const Piece& piece) {
  return piece.bytes >= options.min_bytes;
}

// Appends `s` to `out` unless already there (`seen` mirrors `out`).
void add_distinct(std::vector<ServerId>& out, std::set<ServerId>& seen, ServerId s) {
  if (seen.insert(s).second) out.push_back(s);
}

// A random server of `servers` other than `home`; home when there is none.
ServerId random_other(std::span<const ServerId> servers, ServerId home, std::mt19937_64& rng) {
  std::vector<ServerId> others;
  others.reserve(servers.size());
  for (ServerId s : servers) {
    if (s != home) others.push_back(s);
  }
  if (others.empty()) return home;
  return others[uniform_below(rng, others.size())];
}

ProbePlan plan_two_choice(const Options& options, std::span<const Piece> pieces,
                          std::span<const ServerId> servers, std::mt19937_64& rng) {
  ProbePlan plan;
  std::set<ServerId> seen;
  plan.second_choice.reserve(pieces.size());
  for (const Piece& piece : pieces) {
    if (!worth_probing(options, piece)) {
      plan.second_choice.push_back(piece.home);
      continue;
    }
    const ServerId second = random_other(servers, piece.home, rng);
    plan.second_choice.push_back(second);
    add_distinct(plan.probe, seen, piece.home);
    add_distinct(plan.probe, seen, second);
  }
  return plan;
}

// Every probed piece's home, then random other servers (a partial
// Fisher-Yates shuffle of the rest) until twice the probed pieces.
ProbePlan plan_collab(const Options& options, std::span<const Piece> pieces,
                      std::span<const ServerId> servers, std::mt19937_64& rng) {
  ProbePlan plan;
  std::set<ServerId> seen;
  size_t probed_pieces = 0;
  for (const Piece& piece : pieces) {
    if (!worth_probing(options, piece)) continue;
    ++probed_pieces;
    add_distinct(plan.probe, seen, piece.home);
  }
  if (probed_pieces == 0) return plan;

  std::vector<ServerId> rest;
  for (ServerId s : servers) {
    if (!seen.contains(s)) rest.push_back(s);
  }
  const size_t want = 2 * probed_pieces;
  for (size_t i = 0; i < rest.size() && plan.probe.size() < want; ++i) {
    std::swap(rest[i], rest[i + uniform_below(rng, rest.size() - i)]);
    plan.probe.push_back(rest[i]);
  }
  return plan;
}

// What the round knows of one server: its reported load plus the pieces
// assigned to it so far (collab and preassign only).
struct Known {
  uint64_t bytes = 0;
  uint32_t requests = 0;
  uint64_t preassigned = 0;  // of bytes
  // Lighter: fewer bytes, then fewer requests.
  auto operator<=>(const Known& o) const { return std::tie(bytes, requests) <=> std::tie(o.bytes, o.requests); }
  bool operator==(const Known& o) const { return bytes == o.bytes && requests == o.requests; }
  // What the server has queued (counted in time), without the bytes it
  // expects from other clients' undecided probes.
  uint64_t queue() const { return bytes - std::min(bytes, preassigned); }
};

// The first report of each server wins; a server reported twice is bad
// input, not a bug.
std::map<ServerId, Known> known_loads(std::span<const ServerLoad> loads) {
  std::map<ServerId, Known> out;
  for (const ServerLoad& l : loads) out.try_emplace(l.server, Known{l.bytes, l.requests, l.preassigned});
  return out;
}

ServerId choose_two_choice(const Piece& piece, ServerId second,
                           const std::map<ServerId, Known>& known) {
  const auto home = known.find(piece.home);
  const auto other = known.find(second);
  if (other == known.end() || second == piece.home) return piece.home;
  if (home == known.end()) return second;
  return other->second < home->second ? second : piece.home;
}

// The lightest known server not in `taken` (fewest bytes, then fewest
// requests), one of the equally light at random; nullopt when none is left.
std::optional<ServerId> lightest(const std::map<ServerId, Known>& known, const std::set<ServerId>& taken,
                                 std::mt19937_64& rng) {
  std::optional<Known> best;
  for (const auto& [server, k] : known)
    if (!taken.count(server) && (!best || k < *best)) best = k;
  if (!best) return std::nullopt;
  std::vector<ServerId> ties;
  for (const auto& [server, k] : known)
    if (!taken.count(server) && k == *best) ties.push_back(server);
  return ties.size() == 1 ? ties.front() : ties[uniform_below(rng, ties.size())];
}

// `taken`: servers that already received a redirected piece this round.
// Each takes at most one, as the paper's "select k of the 2k probed": when
// every client of a burst probes at once, nobody sees the others'
// decisions, and stacking several pieces on the lightest server makes it
// the next straggler (pvfs-sim two-choice-stragglers shows it).
ServerId choose_collab(const Options& options, const Piece& piece,
                       const std::map<ServerId, Known>& known, const std::set<ServerId>& taken,
                       std::mt19937_64& rng) {
  if (known.empty()) return piece.home;
  const auto candidate = lightest(known, taken, rng);
  if (!candidate) return piece.home;
  const ServerId light = *candidate;
  const auto home = known.find(piece.home);
  if (home == known.end()) return light;
  const uint64_t home_bytes = home->second.bytes;
  const uint64_t light_bytes = known.at(light).bytes;
  // A redirect costs a redirect-table entry and a later pull-back, so only
  // a clear win is worth it.
  return home_bytes > light_bytes && home_bytes - light_bytes > options.margin_bytes ? light
                                                                                      : piece.home;
}

// The queues a round heard, as what a slow server is measured against.
struct Spread {
  uint64_t typical = 0;   // the lower quartile
  uint64_t lightest = 0;
};

Spread spread_of(const std::map<ServerId, Known>& known) {
  std::vector<uint64_t> queues;
  for (const auto& [server, k] : known) queues.push_back(k.queue());
  if (queues.empty()) return {};
  std::sort(queues.begin(), queues.end());
  return Spread{queues[(queues.size() - 1) / 4], queues.front()};
}

// preassign (issue 21): whether `k` is slow enough in this round that its
// pieces are worth a redirect. Ours, not the paper's, which moves a piece
// whenever another server is lighter by the margin. In a burst whose
// clients all probe at once nobody sees the others' choices, so moving
// over the normal spread of queues sends every client's heaviest pieces to
// the same few light servers (pvfs-sim two-choice-stragglers: 1.66x
// fixed's time with no straggler). Against the lightest server alone (our
// first cut: home more than skew_factor times the server it would move to)
// light servers looked heavy once the probes of many rounds had
// preassigned them, and pieces stayed on stragglers when 40-50% of the
// servers were stragglers (0.74-0.84x fixed). So: the queue without
// preassigned bytes, against the round's lower quartile (robust to a
// quarter of stragglers and to the lightest's noise) or, when three
// quarters of what the round heard are stragglers and the quartile is one
// of them, twice the factor against the lightest; and always more than the
// margin above the quartile, so servers reporting next to nothing
// (loopback) are not slow for a request or two, and a server as loaded as
// most of the round is never slow.
bool slow(const Options& options, const Known& k, const Spread& spread) {
  const auto q = static_cast<double>(k.queue());
  const double f = options.skew_factor;
  const bool skewed = q > f * static_cast<double>(spread.typical) || q > 2 * f * static_cast<double>(spread.lightest);
  return skewed && k.queue() > spread.typical && k.queue() - spread.typical > options.margin_bytes;
}

// preassign with skew_factor > 0: home unless home is slow; then one of
// the lighter half of the servers that are not slow and took no piece yet,
// at random: every client of a burst sees the same lightest server, and
// preassigned bytes, counted as the probes arrive, cannot tell it how many
// clients will choose it. A light server's second piece of a round beats a
// straggler keeping it, so when every server that is not slow took one,
// the lightest of them takes another.
// Slowness is judged on `reported` (the figures as the servers gave
// them), choices on `known` (those plus the round's own pieces).
ServerId choose_preassign(const Options& options, const Piece& piece, const std::map<ServerId, Known>& reported,
                          const std::map<ServerId, Known>& known, const std::set<ServerId>& taken,
                          const Spread& spread, std::mt19937_64& rng) {
  const auto home = known.find(piece.home);
  if (home != known.end() && !slow(options, reported.at(piece.home), spread)) return piece.home;
  std::vector<std::pair<Known, ServerId>> fast;
  for (const auto& [server, k] : known)
    if (server != piece.home && !slow(options, reported.at(server), spread)) fast.emplace_back(k, server);
  if (fast.empty()) return piece.home;
  std::sort(fast.begin(), fast.end());
  std::vector<ServerId> free;
  for (const auto& [k, server] : fast)
    if (!taken.contains(server)) free.push_back(server);
  const ServerId chosen = free.empty() ? fast.front().second : free[uniform_below(rng, (free.size() + 1) / 2)];
  if (home == known.end()) return chosen;
  const uint64_t home_bytes = home->second.bytes;
  const uint64_t chosen_bytes = known.at(chosen).bytes;
  return home_bytes > chosen_bytes && home_bytes - chosen_bytes > options.margin_bytes ? chosen : piece.home;
}

std::vector<ServerId> assign_collab(const Options& options, std::span<const Piece> pieces,
                                    std::span<const ServerLoad> loads, std::mt19937_64& rng) {
  const std::map<ServerId, Known> reported = known_loads(loads);
  const Spread spread = spread_of(reported);
  std::map<ServerId, Known> known = reported;
  const bool by_spread = options.policy == Policy::preassign && options.skew_factor > 0;
  std::set<ServerId> taken;
  std::vector<ServerId> out;
  out.reserve(pieces.size());
  for (const Piece& piece : pieces) {
    ServerId chosen = piece.home;
    if (worth_probing(options, piece) && !known.empty())
      chosen = by_spread ? choose_preassign(options, piece, reported, known, taken, spread, rng)
                         : choose_collab(options, piece, known, taken, rng);
    out.push_back(chosen);
    if (chosen != piece.home) taken.insert(chosen);
    // Count the round's own assignments so its pieces spread (§III-B).
    if (auto it = known.find(chosen); it != known.end()) {
      it->second.bytes += piece.bytes;
      ++it->second.requests;
    }
  }
  return out;
}

std::vector<ServerId> assign_two_choice(const Options& options, std::span<const Piece> pieces,
                                        const ProbePlan& plan, std::span<const ServerLoad> loads) {
  const std::map<ServerId, Known> known = known_loads(loads);
  std::vector<ServerId> out;
  out.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& piece = pieces[i];
    const bool planned = i < plan.second_choice.size();
    out.push_back(worth_probing(options, piece) && planned
                      ? choose_two_choice(piece, plan.second_choice[i], known)
                      : piece.home);
  }
  return out;
}

std::vector<ServerId> all_home(std::span<const Piece> pieces) {
  std::vector<ServerId> out;
  out.reserve(pieces.size());
  for (const Piece& piece : pieces) out.push_back(piece.home);
  return out;
}

std::vector<ServerId> assign_random(const Options& options, std::span<const Piece> pieces,
                                    std::span<const ServerId> servers, std::mt19937_64& rng) {
  std::vector<ServerId> out;
  out.reserve(pieces.size());
  for (const Piece& piece : pieces) {
    const bool redirect = worth_probing(options, piece) && !servers.empty();
    out.push_back(redirect ? servers[uniform_below(rng, servers.size())] : piece.home);
  }
  return out;
}

}  // namespace

std::optional<Policy> parse_policy(std::string_view name) {
  if (name == "fixed") return Policy::fixed;
  if (name == "random") return Policy::random;
  if (name == "two-choice" || name == "two_choice") return Policy::two_choice;
  if (name == "collab") return Policy::collab;
  if (name == "preassign") return Policy::preassign;
  return std::nullopt;
}

std::string_view policy_name(Policy policy) {
  switch (policy) {
    case Policy::fixed: return "fixed";
    case Policy::random: return "random";
    case Policy::two_choice: return "two-choice";
    case Policy::collab: return "collab";
    case Policy::preassign: return "preassign";
  }
  return "unknown";
}

ProbePlan plan_probes(const Options& options, std::span<const Piece> pieces,
                      std::span<const ServerId> servers, std::mt19937_64& rng) {
  if (!probed_policy(options.policy)) return {};
  if (options.policy == Policy::two_choice) return plan_two_choice(options, pieces, servers, rng);
  return plan_collab(options, pieces, servers, rng);
}

std::vector<ServerId> assign(const Options& options, std::span<const Piece> pieces,
                             const ProbePlan& plan, std::span<const ServerLoad> loads,
                             std::span<const ServerId> servers, std::mt19937_64& rng) {
  switch (options.policy) {
    case Policy::fixed: return all_home(pieces);
    case Policy::random: return assign_random(options, pieces, servers, rng);
    case Policy::two_choice: return assign_two_choice(options, pieces, plan, loads);
    case Policy::collab:
    case Policy::preassign: return assign_collab(options, pieces, loads, rng);
  }
  return all_home(pieces);
}

}  // namespace pvfs::sched
