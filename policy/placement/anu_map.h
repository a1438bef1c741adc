// The ANU map of Wu and Burns (§4): which metadata
// server owns each file set. File set ids hash into the unit interval, cut
// into 2^(ceil(lg k)+1) equal partitions; servers own whole partitions and at
// most one partial one, half of the interval in all; a hash that lands in
// unmapped space re-hashes with the next function of a fixed family, and
// after `rounds` misses falls to `hash mod k`. Owns the layout and its
// changes (scaling, joins, failures, serialization); does not decide how
// much to scale (anu_tuner.h) and does no I/O. A plain value: copy it
// freely; const methods are safe to call from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shared/ids.h"
#include "shared/status.h"

namespace pvfs::placement {

// The fixed hash family. Round i of a key is anu_hash(key, i); the values
// are part of the placement protocol: changing the function or its seeds
// moves every file set. Positions in the unit interval are 64-bit
// fractions: position p stands for p / 2^64.
uint64_t anu_hash(uint64_t key, uint32_t round);
// `position` as a double in [0, 1) (for display; placement uses integers).
double unit_fraction(uint64_t position);

// Hash rounds before falling back to `hash mod k`. A file set falls back
// with probability 2^-rounds (1 in 65,536 here), so the fallback adds no
// visible skew while bounding a lookup at 16 probes (2 on average).
inline constexpr uint32_t kDefaultRounds = 16;
inline constexpr uint32_t kMaxRounds = 64;
// Largest cluster a map describes; keeps the partition table small
// (at most 2 * 4096 entries).
inline constexpr size_t kMaxServers = 4096;
inline constexpr uint32_t kMaxPartitions = 2 * kMaxServers;

// A server and its target share of the mapped half, as a fraction
// (shares of a map sum to 1).
struct ServerShare {
  MdsId server;
  double share = 0;
};

// One partition: free (no server), or occupied by `server` from its start
// for `length` units of 2^-64; length == AnuMap::partition_length() is a
// whole partition, anything shorter a partial one.
struct Partition {
  std::optional<MdsId> server;
  uint64_t length = 0;
  bool operator==(const Partition&) const = default;
};

// Where a key landed: its server, and the round (0-based) whose hash hit a
// mapped region; round == rounds() means the `hash mod k` fallback.
struct Probe {
  MdsId server;
  uint32_t round = 0;
};

// For display: a server's share and its regions as [begin, end) fractions
// of the unit interval, in increasing order, adjacent pieces merged.
struct Interval {
  double begin = 0;
  double end = 0;
};
struct ServerRegions {
  MdsId server;
  double share = 0;
  std::vector<Interval> intervals;
};

class AnuMap {
 public:
  // An empty map: no servers, version 0. Only assignment, empty(),
  // serialize() and the factories may be used on it.
  AnuMap() = default;

  // A map of the given servers (distinct ids), each owning `share` of the
  // mapped half. Shares are weights: they are normalized by their sum; a
  // zero share makes a member that owns no region. Servers are laid out in
  // id order from partition 0. invalid_argument for no servers, more than
  // kMaxServers, duplicate ids, a negative or non-finite share, shares all
  // zero, or rounds > kMaxRounds.
  static Result<AnuMap> from_shares(std::span<const ServerShare> shares,
                                    uint32_t rounds = kDefaultRounds, uint64_t version = 1);
  // from_shares() with equal shares.
  static Result<AnuMap> uniform(std::span<const MdsId> servers, uint32_t rounds = kDefaultRounds,
                                uint64_t version = 1);

  bool empty() const { return servers_.empty(); }
  uint64_t version() const { return version_; }
  // The delegate that made this map, when one did (maps of the first
  // version, and maps saved before issuers were recorded, have none).
  // Maps are ordered by (version, issuer): see placement::supersedes().
  std::optional<MdsId> issuer() const { return issuer_; }
  void set_issuer(MdsId delegate) { issuer_ = delegate; }
  uint32_t rounds() const { return rounds_; }
  // Members in increasing id order, including those with a zero share.
  const std::vector<MdsId>& servers() const { return servers_; }
  bool contains(MdsId server) const;
  uint32_t partition_count() const { return static_cast<uint32_t>(partitions_.size()); }
  // 2^64 / partition_count(): the length of a whole partition.
  uint64_t partition_length() const;
  const std::vector<Partition>& partitions() const { return partitions_; }

  // The server owning file set `set` (hashes its id). Requires !empty().
  MdsId locate(FileSetId set) const;
  // Same for any 64-bit key (locate(set) == locate_key(set.value)).
  MdsId locate_key(uint64_t key) const;
  // locate_key() and the round that decided it.
  Probe probe(uint64_t key) const;
  // The servers `hash mod k` picks from: members with a nonzero share, in
  // id order. When this list changes, so does k, and the fallback's file
  // sets (2^-rounds of them) are reshuffled among it.
  std::vector<MdsId> fallback_servers() const;

  // `server`'s fraction of the mapped half (0 if not a member).
  double share(MdsId server) const;
  // `server`'s mapped length in units of 2^-64 (all shares sum to 2^63).
  uint64_t measure(MdsId server) const;
  // Every member's share, in id order.
  std::vector<ServerShare> shares() const;
  // Every member's regions, in id order.
  std::vector<ServerRegions> regions() const;

  // Changes. Each returns a new map with version() + 1 and leaves this one
  // as it was. A server whose new share is below its old one keeps a part
  // of its old region, one whose share grows keeps all of it, one whose
  // share is unchanged keeps exactly its region; growth is taken first from
  // partitions given up in the same change, then from the lowest free
  // partition. So a file set moves only off a server that shrank or onto a
  // server that grew (apart from the rare fallback, see fallback_servers()).
  // It is not a pure hand-over: growth into long-free space catches file
  // sets of every server, and file sets in space given up re-hash onto any
  // server -- the price of exactly half mapped with one partial partition
  // per server (§4). A hand-over of a whole partition (handed_over())
  // moves only the giver's.

  // Each member's new share (weights, normalized as in from_shares()).
  // `targets` names every member exactly once; invalid_argument otherwise.
  Result<AnuMap> with_shares(std::span<const ServerShare> targets) const;
  // `server` joins with `share` of the mapped half (in [0, 1); by default
  // the fair share 1 / (k + 1)); the others are scaled back proportionally.
  // Doubles the partitions first when k + 1 servers need more (which moves
  // nothing). exists if already a member; invalid_argument for a share out
  // of range or a full cluster. On an empty map: a one-server map.
  Result<AnuMap> add_server(MdsId server, std::optional<double> share = std::nullopt) const;
  // `server` leaves (failed or decommissioned): its regions become free and
  // the others grow proportionally to keep half the interval mapped.
  // If no survivor had a share, they get equal ones. Partitions are never
  // merged (that could move file sets). not_found if not a member;
  // invalid_argument if it is the last member.
  Result<AnuMap> remove_server(MdsId server) const;
  // Every partition split in two, version + 1. Each server keeps exactly
  // its region, so no file set moves (what add_server() does when k crosses
  // a power of two). Requires partition_count() < kMaxPartitions.
  AnuMap doubled() const;
  // The partitions split until there are `partitions` of them (a power of
  // two, at least partition_count() and at most kMaxPartitions; splitting
  // moves nothing), then whole partition `index` of that grid given to
  // member `to`, version + 1: exactly the file sets that hash into it move,
  // all from its holder to `to` (ours, issue 21; the paper's §4 asks only
  // that a server hold whole partitions and at most one partial one, which
  // this keeps). invalid_argument for a grid out of range, an index past
  // it, a partition that is not whole, or `to` not a member or its holder.
  Result<AnuMap> handed_over(uint32_t partitions, uint32_t index, MdsId to) const;

  // Compact one-line text form, e.g.
  //   anu1 version=7 rounds=16 servers=1,2,5 partitions=1,1,2:4000000000000000,-,... by=1
  // one entry per partition: "-" free, "ID" whole, "ID:HEXLEN" partial.
  // Fit for a Cap'n Proto Text or Data field.
  std::string serialize() const;
  // Inverse of serialize(). invalid_argument for malformed text, corrupt
  // for a well-formed map that breaks an invariant (see validate()).
  static Result<AnuMap> parse(std::string_view text);

  // Checks every invariant: members sorted and distinct, partition count a
  // power of two no less than 2^(ceil(lg k)+1), occupants are members, each
  // member has at most one partial partition, exactly half the interval
  // mapped. Maps built by this class always pass (it is checked on each
  // change); parse() uses it on untrusted input.
  Status validate() const;

  bool operator==(const AnuMap&) const = default;

 private:
  static Result<AnuMap> build(std::vector<MdsId> servers, uint32_t rounds, uint64_t version,
                              std::span<const double> weights);
  // Moves every member to its new measure (units of 2^-64, in servers_
  // order, summing to 2^63) with the minimal-movement rules above;
  // `released` marks partitions just given up, which growth takes first.
  void rescale(std::span<const uint64_t> targets, std::vector<bool> released);
  void split_partitions();
  std::vector<uint64_t> measures() const;  // in servers_ order
  size_t index_of(MdsId server) const;     // servers_.size() if absent
  uint32_t shift() const;                  // 64 - lg(partition_count())

  uint64_t version_ = 0;
  std::optional<MdsId> issuer_;
  uint32_t rounds_ = kDefaultRounds;
  std::vector<MdsId> servers_;
  std::vector<Partition> partitions_;
};

// Number of partitions for k servers: 2^(ceil(lg k) + 1) (2 for k <= 1).
uint32_t partitions_for(size_t k);

}  // namespace pvfs::placement
