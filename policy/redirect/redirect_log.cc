// The redirect log as one vector in sequence order, scanned linearly: the
// log stays short because covering entries remove older ones and the
// maintainer pulls redirected ranges home. Pure; see redirect_log.h.
#include "policy/redirect/redirect_log.h"

#include <algorithm>
#include <iterator>

#include "shared/status.h"

namespace pvfs::redirect {
namespace {

// A byte range still to be answered by a query.
struct Range {
  uint64_t begin = 0;
  uint64_t end = 0;
};

bool intersects(const Entry& e, uint64_t begin, uint64_t end) {
  return e.begin < end && begin < e.end;
}

bool inside(const Entry& inner, const Entry& outer) {
  return outer.begin <= inner.begin && inner.end <= outer.end;
}

// Local entries may carry stale server or fragment fields; every local
// segment reports the one home location so neighbours merge.
Location normalized(const Location& where) {
  return where.local ? Location::home() : where;
}

void add_segment(std::vector<Segment>& out, uint64_t begin, uint64_t end, const Location& where) {
  out.push_back(Segment{begin, end, normalized(where)});
}

// Moves the parts of `open` that `e` covers into `out` (as segments at
// e.where) and keeps the rest in `open`.
void answer_from(const Entry& e, std::vector<Range>& open, std::vector<Segment>& out) {
  std::vector<Range> rest;
  rest.reserve(open.size() + 1);
  for (const Range& r : open) {
    if (e.end <= r.begin || r.end <= e.begin) {
      rest.push_back(r);
      continue;
    }
    const uint64_t lo = std::max(r.begin, e.begin);
    const uint64_t hi = std::min(r.end, e.end);
    add_segment(out, lo, hi, e.where);
    if (r.begin < lo) rest.push_back(Range{r.begin, lo});
    if (hi < r.end) rest.push_back(Range{hi, r.end});
  }
  open = std::move(rest);
}

// Sorts segments by offset and merges neighbours at equal locations. For a
// remote location equality includes fragment and base, so merged bytes are
// contiguous in the fragment too.
std::vector<Segment> ordered_and_merged(std::vector<Segment> pieces) {
  std::sort(pieces.begin(), pieces.end(),
            [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
  std::vector<Segment> out;
  out.reserve(pieces.size());
  for (const Segment& s : pieces) {
    if (!out.empty() && out.back().end == s.begin && out.back().where == s.where) {
      out.back().end = s.end;
    } else {
      out.push_back(s);
    }
  }
  return out;
}

bool has_remote(const std::vector<Entry>& entries) {
  return std::any_of(entries.begin(), entries.end(), [](const Entry& x) { return !x.where.local; });
}

// Whether a remote entry older than `e` intersects e's range.
bool overlaps_older_remote(const std::vector<Entry>& entries, const Entry& e) {
  return std::any_of(entries.begin(), entries.end(), [&](const Entry& x) {
    return !x.where.local && x.seq < e.seq && intersects(x, e.begin, e.end);
  });
}

// The log after inserting `e` in sequence order and dropping the older
// entries inside its range.
struct Insertion {
  std::vector<Entry> kept;     // the new log, initial entry first
  std::vector<Entry> removed;  // older entries inside e's range
  size_t e_at = 0;             // index of `e` in `kept`
};

Insertion insert_in_order(const std::vector<Entry>& entries, const Entry& e) {
  Insertion out;
  out.kept.reserve(entries.size() + 1);
  out.kept.push_back(entries.front());
  for (size_t i = 1; i < entries.size(); ++i) {
    const Entry& old = entries[i];
    if (out.e_at == 0 && old.seq > e.seq) {
      out.e_at = out.kept.size();
      out.kept.push_back(e);
    }
    // Only older entries fall: a pull-back stamped with its start time
    // must not remove a redirect made during the pull (§V-C, Fig. 10).
    (old.seq < e.seq && inside(old, e) ? out.removed : out.kept).push_back(old);
  }
  if (out.e_at == 0) {
    out.e_at = out.kept.size();
    out.kept.push_back(e);
  }
  return out;
}

}  // namespace

RedirectLog::RedirectLog() {
  entries_.push_back(Entry{0, 0, kEnd, Location::home()});
}

std::vector<Entry> RedirectLog::append(const Entry& e) {
  PVFS_CHECK(e.begin < e.end);
  if (e.where.local && !overlaps_older_remote(entries_, e)) return {};

  Insertion ins = insert_in_order(entries_, e);
  if (e.where.local && !has_remote(ins.kept)) {
    // Nothing redirected any more: back to the initial log. The older
    // local entries leave with it; `e` itself was never kept.
    for (size_t i = 1; i < ins.kept.size(); ++i) {
      if (i != ins.e_at) ins.removed.push_back(ins.kept[i]);
    }
    ins.kept.resize(1);
  }
  entries_ = std::move(ins.kept);
  recompute_bounds();
  return std::move(ins.removed);
}

std::vector<Segment> RedirectLog::query(uint64_t begin, uint64_t end, uint64_t as_of) const {
  if (begin >= end) return {};
  if (end <= min_ || max_ <= begin) return {Segment{begin, end, Location::home()}};

  std::vector<Range> open{Range{begin, end}};
  std::vector<Segment> pieces;
  for (auto it = entries_.rbegin(); it != entries_.rend() && !open.empty(); ++it) {
    if (it->seq > as_of || !intersects(*it, begin, end)) continue;
    answer_from(*it, open, pieces);
  }
  // The initial entry (seq 0, [0, kEnd)) answers whatever newer ones left open.
  return ordered_and_merged(std::move(pieces));
}

bool RedirectLog::overlaps_remote(uint64_t begin, uint64_t end) const {
  if (begin >= end || end <= min_ || max_ <= begin) return false;
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& x) {
    return !x.where.local && intersects(x, begin, end);
  });
}

std::optional<Entry> RedirectLog::oldest_remote() const {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [](const Entry& x) { return !x.where.local; });
  if (it == entries_.end()) return std::nullopt;
  return *it;
}

std::vector<Entry> RedirectLog::remote_entries() const {
  std::vector<Entry> out;
  std::copy_if(entries_.begin(), entries_.end(), std::back_inserter(out),
               [](const Entry& x) { return !x.where.local; });
  return out;
}

bool RedirectLog::references(ServerId server, uint64_t fragment) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& x) {
    return !x.where.local && x.where.server == server && x.where.fragment == fragment;
  });
}

void RedirectLog::recompute_bounds() {
  min_ = 0;
  max_ = 0;
  bool first = true;
  for (const Entry& x : entries_) {
    if (x.where.local) continue;
    min_ = first ? x.begin : std::min(min_, x.begin);
    max_ = first ? x.end : std::max(max_, x.end);
    first = false;
  }
}

}  // namespace pvfs::redirect
