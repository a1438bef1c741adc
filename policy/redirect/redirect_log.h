// Where the bytes of one object live: the time-ordered redirect log of the
// two-choice paper (../papers: Dai et al., §IV and §V-B). Kept by the
// object's home server. Pure: no I/O, no clock, no locking; the owner
// (policy/redirect/redirect_table + the storage service) persists entries and
// hands out sequence numbers. Not thread-safe: one owner thread.
//
// Ranges are half-open byte ranges [begin, end) of the object. The log
// starts with the initial entry [0, kEnd) -> local at seq 0. Every entry has
// a sequence number ("time"); newer entries win. Appending an entry removes
// every older entry whose range lies inside the new one.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "shared/ids.h"

namespace pvfs::redirect {

inline constexpr uint64_t kEnd = UINT64_MAX;  // end of the initial entry's range

// Where a range lives: at home (local), or in fragment `fragment` on server
// `server`, whose byte 0 holds object offset `fragment_base`.
struct Location {
  bool local = true;
  ServerId server{};
  uint64_t fragment = 0;
  uint64_t fragment_base = 0;
  bool operator==(const Location&) const = default;
  static Location home() { return {}; }
  static Location remote(ServerId server, uint64_t fragment, uint64_t base) {
    return Location{false, server, fragment, base};
  }
};

struct Entry {
  uint64_t seq = 0;
  uint64_t begin = 0;
  uint64_t end = 0;  // exclusive; begin < end
  Location where;
  bool operator==(const Entry&) const = default;
};

// A piece of a query answer: bytes [begin, end) live at `where`. For a
// remote piece, the bytes are at fragment offset begin - where.fragment_base.
struct Segment {
  uint64_t begin = 0;
  uint64_t end = 0;
  Location where;
  bool operator==(const Segment&) const = default;
};

class RedirectLog {
 public:
  // The initial log: [0, kEnd) -> local at seq 0, nothing redirected.
  RedirectLog();

  // Inserts `e` in sequence order (after every entry with seq <= e.seq; in
  // practice at the end, or earlier for a maintainer's pull-back entry
  // stamped with the time its pull started) and removes every entry with a
  // smaller seq whose range lies inside [e.begin, e.end). The initial entry
  // is never removed. A local entry that overlaps no older remote entry
  // changes nothing and is not kept. When no remote entry remains, the log
  // returns to its initial state. Returns every entry that left the log
  // (the caller deletes them from disk and collects fragments no longer
  // referenced; see references()). Requires e.begin < e.end.
  std::vector<Entry> append(const Entry& e);

  // Where every byte of [begin, end) lives as of sequence `as_of` (entries
  // with seq <= as_of count): walks back from the newest entry; the answer
  // is ordered by offset, its segments adjacent, covering exactly
  // [begin, end), and neighbouring segments with equal locations merged.
  // Fast path: a range outside [min(), max()) is one local segment.
  std::vector<Segment> query(uint64_t begin, uint64_t end, uint64_t as_of = UINT64_MAX) const;

  // Whether any remote entry's range intersects [begin, end). A local write
  // at home must append a local entry exactly when this is true.
  bool overlaps_remote(uint64_t begin, uint64_t end) const;

  // The oldest remote entry (the maintainer pulls it home first).
  std::optional<Entry> oldest_remote() const;
  // Every remote entry, oldest first.
  std::vector<Entry> remote_entries() const;
  // Whether some entry still refers to fragment `fragment` on `server`.
  bool references(ServerId server, uint64_t fragment) const;

  // Bounds of the redirected region: every remote entry lies inside
  // [min(), max()); min() == max() when nothing is redirected. Unlike the
  // paper's incremental Min update on delete (which can exclude a newer
  // remote entry inserted before a pull-back), these are recomputed from
  // the remote entries whenever one leaves, so they are never too narrow.
  uint64_t min() const { return min_; }
  uint64_t max() const { return max_; }

  // True when nothing is redirected (only the initial entry).
  bool empty() const { return entries_.size() == 1; }
  // Entries including the initial one, oldest first.
  const std::vector<Entry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

 private:
  void recompute_bounds();
  std::vector<Entry> entries_;  // ordered by seq; entries_[0] is the initial entry
  uint64_t min_ = 0;
  uint64_t max_ = 0;
};

}  // namespace pvfs::redirect
