#include "policy/placement/anu_map.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>

namespace pvfs::placement {
namespace {

constexpr uint64_t kHalf = uint64_t{1} << 63;

// splitmix64's finalizer (Stafford's mix 13): a bijection on 64 bits with
// full avalanche.
constexpr uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr uint64_t round_seed(uint32_t round) {
  return mix64(0x414e552d706c6163ULL ^ ((uint64_t{round} + 1) * 0x9e3779b97f4a7c15ULL));
}

bool valid_weight(double w) { return std::isfinite(w) && w >= 0; }

// Splits 2^63 units in proportion to `weights` (nonnegative, positive sum).
// Each share ends at round-down(cumulative fraction * 2^63), the last at
// exactly 2^63, so the parts are exact for dyadic weights, never negative,
// and always sum to half the interval.
std::vector<uint64_t> apportion(std::span<const double> weights) {
  double total = 0;
  for (double w : weights) total += w;
  PVFS_CHECK(total > 0 && std::isfinite(total));
  std::vector<uint64_t> out(weights.size());
  double cumulative = 0;
  uint64_t previous = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    cumulative += weights[i];
    uint64_t edge = kHalf;
    if (i + 1 < weights.size()) {
      const double fraction = std::min(cumulative / total, 1.0);
      edge = fraction >= 1.0 ? kHalf : static_cast<uint64_t>(std::ldexp(fraction, 63));
    }
    edge = std::max(edge, previous);
    out[i] = edge - previous;
    previous = edge;
  }
  return out;
}

// Splits `total` units in proportion to integer `weights` (positive sum),
// exactly: part i ends at floor(cumulative weight * total / sum). Equal
// weights and total give back the weights unchanged.
// 128 bits hold a product of two 64-bit numbers exactly. ISO C++ has no such
// type; GCC and Clang have one on every 64-bit target, and __extension__ says
// that this is the one deliberate use of it (-Wpedantic).
__extension__ typedef unsigned __int128 Uint128;

std::vector<uint64_t> apportion_units(std::span<const uint64_t> weights, uint64_t total) {
  Uint128 sum = 0;
  for (uint64_t w : weights) sum += w;
  PVFS_CHECK(sum > 0);
  std::vector<uint64_t> out(weights.size());
  Uint128 cumulative = 0;
  uint64_t previous = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    cumulative += weights[i];
    const auto edge = static_cast<uint64_t>(cumulative * total / sum);
    out[i] = edge - previous;
    previous = edge;
  }
  return out;
}

void append_uint(std::string& out, uint64_t value, int base = 10) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, base);
  (void)ec;
  out.append(buf, end);
}

template <typename T>
bool parse_uint(std::string_view text, T& value, int base = 10) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  return ec == std::errc() && end == text.data() + text.size();
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

bool take_field(std::string_view token, std::string_view key, std::string_view& value) {
  if (token.size() <= key.size() || token.substr(0, key.size()) != key || token[key.size()] != '=')
    return false;
  value = token.substr(key.size() + 1);
  return true;
}

}  // namespace

uint64_t anu_hash(uint64_t key, uint32_t round) {
  const uint64_t seed = round_seed(round);
  return mix64(mix64(key ^ seed) + seed);
}

double unit_fraction(uint64_t position) { return std::ldexp(static_cast<double>(position >> 11), -53); }

uint32_t partitions_for(size_t k) {
  const uint32_t lg = k <= 1 ? 0 : static_cast<uint32_t>(std::bit_width(k - 1));  // ceil(lg k)
  return uint32_t{2} << lg;
}

Result<AnuMap> AnuMap::from_shares(std::span<const ServerShare> shares, uint32_t rounds, uint64_t version) {
  if (shares.empty()) return Status(Errc::invalid_argument, "an ANU map needs at least one server");
  if (shares.size() > kMaxServers) return Status(Errc::invalid_argument, "too many servers");
  if (rounds > kMaxRounds) return Status(Errc::invalid_argument, "too many hash rounds");
  std::vector<ServerShare> sorted(shares.begin(), shares.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const ServerShare& a, const ServerShare& b) { return a.server < b.server; });
  std::vector<MdsId> servers;
  std::vector<double> weights;
  double total = 0;
  for (const ServerShare& s : sorted) {
    if (!servers.empty() && servers.back() == s.server)
      return Status(Errc::invalid_argument, "server listed twice");
    if (!valid_weight(s.share)) return Status(Errc::invalid_argument, "share must be finite and >= 0");
    servers.push_back(s.server);
    weights.push_back(s.share);
    total += s.share;
  }
  if (!(total > 0) || !std::isfinite(total))
    return Status(Errc::invalid_argument, "shares must have a positive finite sum");
  return build(std::move(servers), rounds, version, weights);
}

Result<AnuMap> AnuMap::uniform(std::span<const MdsId> servers, uint32_t rounds, uint64_t version) {
  std::vector<ServerShare> shares;
  for (MdsId s : servers) shares.push_back({s, 1.0});
  return from_shares(shares, rounds, version);
}

Result<AnuMap> AnuMap::build(std::vector<MdsId> servers, uint32_t rounds, uint64_t version,
                             std::span<const double> weights) {
  AnuMap map;
  map.version_ = version;
  map.rounds_ = rounds;
  map.servers_ = std::move(servers);
  map.partitions_.assign(partitions_for(map.servers_.size()), Partition{});
  const uint64_t ps = map.partition_length();
  const std::vector<uint64_t> units = apportion(weights);
  size_t next = 0;
  for (size_t i = 0; i < units.size(); ++i) {
    uint64_t left = units[i];
    while (left > 0) {
      PVFS_CHECK(next < map.partitions_.size());
      const uint64_t take = std::min(left, ps);
      map.partitions_[next++] = Partition{map.servers_[i], take};
      left -= take;
    }
  }
  PVFS_CHECK(map.validate().ok());
  return map;
}

bool AnuMap::contains(MdsId server) const { return index_of(server) < servers_.size(); }

size_t AnuMap::index_of(MdsId server) const {
  auto it = std::lower_bound(servers_.begin(), servers_.end(), server);
  return it != servers_.end() && *it == server ? static_cast<size_t>(it - servers_.begin()) : servers_.size();
}

uint32_t AnuMap::shift() const {
  return 64 - static_cast<uint32_t>(std::countr_zero(static_cast<uint32_t>(partitions_.size())));
}

uint64_t AnuMap::partition_length() const {
  PVFS_CHECK(!partitions_.empty());
  return uint64_t{1} << shift();
}

MdsId AnuMap::locate(FileSetId set) const { return probe(set.value).server; }

MdsId AnuMap::locate_key(uint64_t key) const { return probe(key).server; }

Probe AnuMap::probe(uint64_t key) const {
  PVFS_CHECK(!empty());
  const uint32_t sh = shift();
  const uint64_t offset_mask = (uint64_t{1} << sh) - 1;
  for (uint32_t round = 0; round < rounds_; ++round) {
    const uint64_t h = anu_hash(key, round);
    const Partition& p = partitions_[h >> sh];
    if (p.server && (h & offset_mask) < p.length) return Probe{*p.server, round};
  }
  // §4: "File sets that have not been assigned in a fixed number of rounds
  // are hashed to a server (rather than the unit interval)."
  const std::vector<MdsId> candidates = fallback_servers();
  return Probe{candidates[anu_hash(key, rounds_) % candidates.size()], rounds_};
}

std::vector<MdsId> AnuMap::fallback_servers() const {
  const std::vector<uint64_t> m = measures();
  std::vector<MdsId> out;
  for (size_t i = 0; i < servers_.size(); ++i)
    if (m[i] > 0) out.push_back(servers_[i]);
  return out;
}

std::vector<uint64_t> AnuMap::measures() const {
  std::vector<uint64_t> m(servers_.size(), 0);
  for (const Partition& p : partitions_)
    if (p.server) m[index_of(*p.server)] += p.length;
  return m;
}

uint64_t AnuMap::measure(MdsId server) const {
  uint64_t total = 0;
  for (const Partition& p : partitions_)
    if (p.server == server) total += p.length;
  return total;
}

double AnuMap::share(MdsId server) const { return std::ldexp(static_cast<double>(measure(server)), -63); }

std::vector<ServerShare> AnuMap::shares() const {
  const std::vector<uint64_t> m = measures();
  std::vector<ServerShare> out;
  for (size_t i = 0; i < servers_.size(); ++i)
    out.push_back({servers_[i], std::ldexp(static_cast<double>(m[i]), -63)});
  return out;
}

std::vector<ServerRegions> AnuMap::regions() const {
  std::vector<ServerRegions> out;
  for (const ServerShare& s : shares()) out.push_back({s.server, s.share, {}});
  const double width = 1.0 / static_cast<double>(partitions_.size());
  for (size_t p = 0; p < partitions_.size(); ++p) {
    if (!partitions_[p].server) continue;
    std::vector<Interval>& list = out[index_of(*partitions_[p].server)].intervals;
    const double begin = static_cast<double>(p) * width;
    const double end = begin + std::ldexp(static_cast<double>(partitions_[p].length), -64);
    if (!list.empty() && list.back().end == begin) {
      list.back().end = end;
    } else {
      list.push_back({begin, end});
    }
  }
  return out;
}

Result<AnuMap> AnuMap::with_shares(std::span<const ServerShare> targets) const {
  if (empty()) return Status(Errc::invalid_argument, "empty map");
  if (targets.size() != servers_.size())
    return Status(Errc::invalid_argument, "targets must name every member exactly once");
  std::vector<double> weights(servers_.size(), -1);
  double total = 0;
  for (const ServerShare& t : targets) {
    const size_t i = index_of(t.server);
    if (i == servers_.size() || weights[i] >= 0)
      return Status(Errc::invalid_argument, "targets must name every member exactly once");
    if (!valid_weight(t.share)) return Status(Errc::invalid_argument, "share must be finite and >= 0");
    weights[i] = t.share;
    total += t.share;
  }
  if (!(total > 0) || !std::isfinite(total))
    return Status(Errc::invalid_argument, "shares must have a positive finite sum");
  AnuMap next = *this;
  next.version_ = version_ + 1;
  next.rescale(apportion(weights), std::vector<bool>(partitions_.size(), false));
  return next;
}

Result<AnuMap> AnuMap::add_server(MdsId server, std::optional<double> share) const {
  if (share && !(valid_weight(*share) && *share < 1))
    return Status(Errc::invalid_argument, "a joining server's share must be in [0, 1)");
  if (empty()) {
    const ServerShare only{server, 1.0};
    return from_shares(std::span(&only, 1), rounds_, version_ + 1);
  }
  if (contains(server)) return Status(Errc::exists, "server is already in the map");
  if (servers_.size() >= kMaxServers) return Status(Errc::invalid_argument, "too many servers");
  const double joining = share ? *share : 1.0 / static_cast<double>(servers_.size() + 1);

  AnuMap next = *this;
  next.version_ = version_ + 1;
  // §4: "If the added server increases k ... such that there are fewer than
  // 2^(ceil(lg k)+1) partitions, the algorithm re-partitions the unit
  // interval" -- splitting partitions in place, which moves nothing.
  while (next.partitions_.size() < partitions_for(servers_.size() + 1)) next.split_partitions();
  // The old servers split what the new one leaves in proportion to their
  // measures, exactly (a zero share for the newcomer changes nobody).
  const double newcomer[] = {joining, 1 - joining};
  const uint64_t joining_units = apportion(newcomer)[0];
  const std::vector<uint64_t> old = apportion_units(measures(), kHalf - joining_units);
  const auto at = std::lower_bound(next.servers_.begin(), next.servers_.end(), server);
  const auto pos = static_cast<size_t>(at - next.servers_.begin());
  next.servers_.insert(at, server);
  std::vector<uint64_t> targets = old;
  targets.insert(targets.begin() + static_cast<std::ptrdiff_t>(pos), joining_units);
  next.rescale(targets, std::vector<bool>(next.partitions_.size(), false));
  return next;
}

Result<AnuMap> AnuMap::remove_server(MdsId server) const {
  const size_t gone = index_of(server);
  if (gone == servers_.size()) return Status(Errc::not_found, "server is not in the map");
  if (servers_.size() == 1) return Status(Errc::invalid_argument, "cannot remove the last server");
  const std::vector<uint64_t> old = measures();
  AnuMap next = *this;
  next.version_ = version_ + 1;
  next.servers_.erase(next.servers_.begin() + static_cast<std::ptrdiff_t>(gone));
  // The failed server's partitions are free space given up in this change,
  // so the survivors' growth lands there first.
  std::vector<bool> released(partitions_.size(), false);
  for (size_t p = 0; p < next.partitions_.size(); ++p) {
    if (next.partitions_[p].server == server) {
      next.partitions_[p] = Partition{};
      released[p] = true;
    }
  }
  std::vector<uint64_t> weights;
  uint64_t total = 0;
  for (size_t i = 0; i < servers_.size(); ++i) {
    if (i == gone) continue;
    weights.push_back(old[i]);
    total += old[i];
  }
  if (total == 0) std::fill(weights.begin(), weights.end(), 1);
  next.rescale(apportion_units(weights, kHalf), std::move(released));
  return next;
}

AnuMap AnuMap::doubled() const {
  PVFS_CHECK(!empty() && partitions_.size() < kMaxPartitions);
  AnuMap next = *this;
  next.version_ = version_ + 1;
  next.split_partitions();
  return next;
}

Result<AnuMap> AnuMap::handed_over(uint32_t partitions, uint32_t index, MdsId to) const {
  if (empty() || partitions < partitions_.size() || partitions > kMaxPartitions || !std::has_single_bit(partitions))
    return Status(Errc::invalid_argument, "hand-over grid out of range");
  if (index >= partitions) return Status(Errc::invalid_argument, "hand-over partition past the grid");
  if (!contains(to)) return Status(Errc::invalid_argument, "hand-over to a non-member");
  AnuMap next = *this;
  next.version_ = version_ + 1;
  while (next.partitions_.size() < partitions) next.split_partitions();
  Partition& p = next.partitions_[index];
  if (!p.server || p.length != next.partition_length())
    return Status(Errc::invalid_argument, "only a whole partition can be handed over");
  if (*p.server == to) return Status(Errc::invalid_argument, "hand-over to the partition's own holder");
  p.server = to;
  PVFS_CHECK(next.validate().ok());
  return next;
}

void AnuMap::split_partitions() {
  // Partition p covers [p, p+1) / P; its halves are partitions 2p and 2p+1
  // of the finer grid, so a server's piece [p/P, p/P + len) is exactly the
  // same set of hash values afterwards. A whole partition gives two whole
  // ones; a partial one gives a whole and a partial, or a partial and a free
  // one: still at most one partial per server.
  const uint64_t half = partition_length() / 2;
  std::vector<Partition> finer;
  finer.reserve(partitions_.size() * 2);
  for (const Partition& p : partitions_) {
    if (!p.server) {
      finer.push_back({});
      finer.push_back({});
      continue;
    }
    const uint64_t first = std::min(p.length, half);
    finer.push_back({p.server, first});
    finer.push_back(p.length > half ? Partition{p.server, p.length - half} : Partition{});
  }
  partitions_ = std::move(finer);
}

void AnuMap::rescale(std::span<const uint64_t> targets, std::vector<bool> released) {
  PVFS_CHECK(targets.size() == servers_.size());
  const uint64_t ps = partition_length();
  struct Holding {
    std::vector<uint32_t> wholes;  // increasing
    std::optional<uint32_t> partial;
    uint64_t measure = 0;
  };
  std::vector<Holding> hold(servers_.size());
  for (uint32_t p = 0; p < partitions_.size(); ++p) {
    if (!partitions_[p].server) continue;
    const size_t i = index_of(*partitions_[p].server);
    PVFS_CHECK(i < hold.size());
    Holding& h = hold[i];
    if (partitions_[p].length == ps) {
      h.wholes.push_back(p);
    } else {
      h.partial = p;
    }
    h.measure += partitions_[p].length;
  }
  auto release = [&](uint32_t p) {
    partitions_[p] = Partition{};
    released[p] = true;
  };

  // Shrink first so growth can reuse what was given up. A shrinking server
  // keeps a subset of its region: its partial partition if the new
  // remainder fits in it (giving up whole partitions, which others can take
  // whole), else its lowest whole partitions with the next one cut down.
  for (size_t i = 0; i < servers_.size(); ++i) {
    Holding& h = hold[i];
    const uint64_t t = targets[i];
    if (t >= h.measure) continue;
    const size_t keep_wholes = t / ps;
    const uint64_t rest = t % ps;
    const uint64_t partial_len = h.partial ? partitions_[*h.partial].length : 0;
    if (h.partial && rest <= partial_len) {
      if (rest == 0) {
        release(*h.partial);
      } else {
        partitions_[*h.partial].length = rest;
      }
      for (size_t w = keep_wholes; w < h.wholes.size(); ++w) release(h.wholes[w]);
    } else {
      if (h.partial) release(*h.partial);
      PVFS_CHECK(keep_wholes < h.wholes.size());
      size_t w = keep_wholes;
      if (rest > 0) partitions_[h.wholes[w++]].length = rest;
      for (; w < h.wholes.size(); ++w) release(h.wholes[w]);
    }
  }

  auto take_free = [&]() -> uint32_t {
    for (uint32_t p = 0; p < partitions_.size(); ++p)
      if (released[p] && !partitions_[p].server) return p;
    for (uint32_t p = 0; p < partitions_.size(); ++p)
      if (!partitions_[p].server) return p;
    PVFS_CHECK(false && "no free partition: the half-occupancy invariant is broken");
    return 0;
  };
  // A growing server keeps all it had: it first fills its partial partition
  // (it may not hold a second partial one), then takes free partitions.
  for (size_t i = 0; i < servers_.size(); ++i) {
    Holding& h = hold[i];
    const uint64_t t = targets[i];
    if (t <= h.measure) continue;
    uint64_t need = t - h.measure;
    if (h.partial) {
      Partition& q = partitions_[*h.partial];
      const uint64_t add = std::min(need, ps - q.length);
      q.length += add;
      need -= add;
    }
    while (need > 0) {
      const uint64_t len = std::min(need, ps);
      partitions_[take_free()] = Partition{servers_[i], len};
      need -= len;
    }
  }
  PVFS_CHECK(validate().ok());
  PVFS_CHECK(measures() == std::vector<uint64_t>(targets.begin(), targets.end()));
}

Status AnuMap::validate() const {
  auto bad = [](std::string what) { return Status(Errc::corrupt, "ANU map: " + what); };
  if (rounds_ > kMaxRounds) return bad("too many hash rounds");
  if (servers_.empty()) return partitions_.empty() ? Status{} : bad("partitions without servers");
  if (servers_.size() > kMaxServers) return bad("too many servers");
  for (size_t i = 1; i < servers_.size(); ++i)
    if (!(servers_[i - 1] < servers_[i])) return bad("servers not sorted and distinct");
  const size_t count = partitions_.size();
  if (count > kMaxPartitions || !std::has_single_bit(count) || count < partitions_for(servers_.size()))
    return bad("partition count must be a power of two >= 2^(ceil(lg k)+1)");
  const uint64_t ps = partition_length();
  std::vector<bool> has_partial(servers_.size(), false);
  uint64_t total = 0;
  for (const Partition& p : partitions_) {
    if (!p.server) {
      if (p.length != 0) return bad("free partition with a length");
      continue;
    }
    const size_t i = index_of(*p.server);
    if (i == servers_.size()) return bad("partition owned by a non-member");
    if (p.length == 0 || p.length > ps) return bad("occupied length out of range");
    if (p.length < ps) {
      if (has_partial[i]) return bad("server holds two partial partitions");
      has_partial[i] = true;
    }
    if (p.length > kHalf - total) return bad("more than half the interval mapped");
    total += p.length;
  }
  if (total != kHalf) return bad("mapped total is not half the interval");
  return {};
}

std::string AnuMap::serialize() const {
  std::string out = "anu1 version=";
  append_uint(out, version_);
  out += " rounds=";
  append_uint(out, rounds_);
  out += " servers=";
  for (size_t i = 0; i < servers_.size(); ++i) {
    if (i > 0) out += ',';
    append_uint(out, servers_[i].value);
  }
  out += " partitions=";
  const uint64_t ps = partitions_.empty() ? 0 : partition_length();
  for (size_t p = 0; p < partitions_.size(); ++p) {
    if (p > 0) out += ',';
    if (!partitions_[p].server) {
      out += '-';
      continue;
    }
    append_uint(out, partitions_[p].server->value);
    if (partitions_[p].length != ps) {
      out += ':';
      append_uint(out, partitions_[p].length, 16);
    }
  }
  if (issuer_) {
    out += " by=";
    append_uint(out, issuer_->value);
  }
  return out;
}

Result<AnuMap> AnuMap::parse(std::string_view text) {
  auto malformed = [](std::string what) { return Status(Errc::invalid_argument, "ANU map text: " + what); };
  const std::vector<std::string_view> tokens = split(text, ' ');
  std::string_view version, rounds, servers, partitions, by;
  if (tokens.size() == 6 && !take_field(tokens[5], "by", by)) return malformed("expected 'by=ID' last");
  if ((tokens.size() != 5 && tokens.size() != 6) || tokens[0] != "anu1" || !take_field(tokens[1], "version", version) ||
      !take_field(tokens[2], "rounds", rounds) || !take_field(tokens[3], "servers", servers) ||
      !take_field(tokens[4], "partitions", partitions)) {
    return malformed("expected 'anu1 version=N rounds=N servers=... partitions=...'");
  }
  AnuMap map;
  if (!parse_uint(version, map.version_)) return malformed("bad version");
  if (!parse_uint(rounds, map.rounds_)) return malformed("bad rounds");
  if (!by.empty()) {
    uint32_t issuer = 0;
    if (!parse_uint(by, issuer)) return malformed("bad issuer");
    map.issuer_ = MdsId(issuer);
  }
  for (std::string_view id : split(servers, ',')) {
    uint32_t value = 0;
    if (!parse_uint(id, value)) return malformed("bad server id");
    map.servers_.push_back(MdsId(value));
    if (map.servers_.size() > kMaxServers) return malformed("too many servers");
  }
  const std::vector<std::string_view> entries = split(partitions, ',');
  if (entries.size() < 2 || entries.size() > kMaxPartitions || !std::has_single_bit(entries.size()))
    return malformed("partition count must be a power of two");
  map.partitions_.resize(entries.size());
  const uint64_t ps = map.partition_length();
  for (size_t p = 0; p < entries.size(); ++p) {
    const std::string_view e = entries[p];
    if (e == "-") continue;
    const size_t colon = e.find(':');
    uint32_t id = 0;
    if (!parse_uint(e.substr(0, colon), id)) return malformed("bad partition entry");
    uint64_t length = ps;
    if (colon != std::string_view::npos && !parse_uint(e.substr(colon + 1), length, 16))
      return malformed("bad partition length");
    map.partitions_[p] = Partition{MdsId(id), length};
  }
  if (Status s = map.validate(); !s.ok()) return s;
  return map;
}

}  // namespace pvfs::placement
