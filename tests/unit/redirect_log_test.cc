// Unit tests of policy/redirect/redirect_log: appending and removal, query
// splitting and merging, as-of queries, the paper's Fig. 9 and Fig. 10
// scenarios, the Min/Max bounds, and a randomized comparison against a
// brute-force "newest covering entry wins" model. Pure; a seeded generator.
#include "policy/redirect/redirect_log.h"
#include "policy/redirect/redirect_table.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

namespace pvfs::redirect {
namespace {

Entry remote(uint64_t seq, uint64_t begin, uint64_t end, uint32_t server,
             uint64_t fragment = 0) {
  return Entry{seq, begin, end, Location::remote(ServerId(server), fragment ? fragment : seq, begin)};
}

Entry local(uint64_t seq, uint64_t begin, uint64_t end) {
  return Entry{seq, begin, end, Location::home()};
}

Segment at_home(uint64_t begin, uint64_t end) { return Segment{begin, end, Location::home()}; }

Segment at(const Entry& e, uint64_t begin, uint64_t end) { return Segment{begin, end, e.where}; }

const Entry kInitial{0, 0, kEnd, Location::home()};

}  // namespace

TEST_CASE("a new log holds only the initial entry and redirects nothing") {
  RedirectLog log;
  CHECK(log.empty());
  CHECK(log.size() == 1);
  CHECK(log.entries() == std::vector<Entry>{kInitial});
  CHECK(log.min() == log.max());
  CHECK_FALSE(log.oldest_remote().has_value());
  CHECK(log.remote_entries().empty());
  CHECK_FALSE(log.overlaps_remote(0, kEnd));
  CHECK_FALSE(log.references(ServerId(1), 1));
  CHECK(log.query(10, 20) == std::vector<Segment>{at_home(10, 20)});
  CHECK(log.query(0, kEnd) == std::vector<Segment>{at_home(0, kEnd)});
  CHECK(log.query(20, 20).empty());
}

TEST_CASE("appending a range drops older entries inside it but not partly overlapping ones") {
  RedirectLog log;
  const Entry a = remote(1, 100, 200, 2);
  const Entry b = remote(2, 300, 400, 3);
  const Entry c = remote(3, 150, 350, 4);
  CHECK(log.append(a).empty());
  CHECK(log.append(b).empty());
  // c overlaps both a and b, contains neither.
  CHECK(log.append(c).empty());
  CHECK(log.entries() == std::vector<Entry>{kInitial, a, b, c});

  // d covers a, b and c exactly at their edges: inside is inclusive.
  const Entry d = remote(4, 100, 400, 5);
  CHECK(log.append(d) == std::vector<Entry>{a, b, c});
  CHECK(log.entries() == std::vector<Entry>{kInitial, d});

  // A smaller newer entry inside d does not remove d.
  const Entry e = remote(5, 200, 300, 6);
  CHECK(log.append(e).empty());
  CHECK(log.entries() == std::vector<Entry>{kInitial, d, e});
}

TEST_CASE("the initial entry is never removed, even by a remote entry over everything") {
  RedirectLog log;
  const Entry all = remote(1, 0, kEnd, 2);
  CHECK(log.append(all).empty());
  CHECK(log.entries() == std::vector<Entry>{kInitial, all});
  CHECK(log.query(5, 10) == std::vector<Segment>{at(all, 5, 10)});
}

TEST_CASE("an entry with an older sequence number is inserted in order and removes only older entries") {
  RedirectLog log;
  const Entry a = remote(10, 0, 100, 2);
  const Entry b = remote(20, 0, 100, 3);
  CHECK(log.append(a).empty());
  const Entry newer = remote(30, 0, 50, 4);
  CHECK(log.append(newer).empty());
  // b (seq 20) goes between a and newer; it removes a, not newer.
  CHECK(log.append(b) == std::vector<Entry>{a});
  CHECK(log.entries() == std::vector<Entry>{kInitial, b, newer});
  CHECK(log.query(0, 100) == std::vector<Segment>{at(newer, 0, 50), at(b, 50, 100)});
}

TEST_CASE("a query walks back newest first and splits the range at entry boundaries") {
  RedirectLog log;
  const Entry wide = remote(1, 100, 500, 2);
  const Entry mid = remote(2, 200, 300, 3);
  const Entry edge = remote(3, 450, 600, 4);
  (void)log.append(wide);
  (void)log.append(mid);
  (void)log.append(edge);
  CHECK(log.query(0, 700) == std::vector<Segment>{
                                 at_home(0, 100),
                                 at(wide, 100, 200),
                                 at(mid, 200, 300),
                                 at(wide, 300, 450),
                                 at(edge, 450, 600),
                                 at_home(600, 700),
                             });
  // A query inside one entry is one segment, clipped to the query.
  CHECK(log.query(220, 230) == std::vector<Segment>{at(mid, 220, 230)});
  // Fragment offsets follow from the base: byte 250 is at 250 - 200 in mid's fragment.
  const auto one = log.query(250, 251);
  REQUIRE(one.size() == 1);
  CHECK(one[0].begin - one[0].where.fragment_base == 50);
}

TEST_CASE("neighbouring segments at the same location are merged") {
  RedirectLog log;
  // Two entries into one fragment with one base: contiguous in the fragment too.
  const Entry first = Entry{1, 100, 200, Location::remote(ServerId(2), 7, 100)};
  const Entry second = Entry{2, 200, 300, Location::remote(ServerId(2), 7, 100)};
  (void)log.append(first);
  (void)log.append(second);
  CHECK(log.query(50, 350) == std::vector<Segment>{at_home(50, 100), at(first, 100, 300),
                                                   at_home(300, 350)});

  // Same server, other fragment: not merged.
  const Entry other = Entry{3, 300, 400, Location::remote(ServerId(2), 8, 300)};
  (void)log.append(other);
  CHECK(log.query(100, 400) == std::vector<Segment>{at(first, 100, 300), at(other, 300, 400)});

  // A local entry next to the initial entry's bytes: one home segment.
  (void)log.append(local(4, 350, 450));
  CHECK(log.query(300, 500) == std::vector<Segment>{at(other, 300, 350), at_home(350, 500)});
}

TEST_CASE("a local entry carrying stray server fields still answers as home") {
  RedirectLog log;
  (void)log.append(remote(1, 0, 100, 2));
  Entry pull = local(2, 0, 100);
  pull.where.server = ServerId(9);
  pull.where.fragment = 3;
  (void)log.append(pull);
  CHECK(log.query(0, 200) == std::vector<Segment>{at_home(0, 200)});
}

TEST_CASE("an as-of query ignores entries newer than its sequence number") {
  RedirectLog log;
  const Entry a = remote(5, 100, 300, 2);
  const Entry b = remote(9, 200, 400, 3);
  (void)log.append(a);
  (void)log.append(b);
  CHECK(log.query(0, 500, 4) == std::vector<Segment>{at_home(0, 500)});
  CHECK(log.query(0, 500, 5) == std::vector<Segment>{at_home(0, 100), at(a, 100, 300),
                                                     at_home(300, 500)});
  CHECK(log.query(0, 500, 8) == log.query(0, 500, 5));
  CHECK(log.query(0, 500, 9) == std::vector<Segment>{at_home(0, 100), at(a, 100, 200),
                                                     at(b, 200, 400), at_home(400, 500)});
  CHECK(log.query(0, 500) == log.query(0, 500, 9));
}

// Fig. 9 of the paper, reconstructed from §V-B: entries 1..6 on object-1 at
// OSD-1, with the fourth redirected range pulled back by the sixth.
TEST_CASE("the paper's Fig. 9: creates, a covering create, a pull-back and a query") {
  RedirectLog log;
  const Entry e2 = remote(2, 400, 600, 2);
  const Entry e3 = remote(3, 700, 800, 3);
  const Entry e4 = remote(4, 200, 500, 5);
  const Entry e5 = remote(5, 300, 900, 4);
  const Entry e6 = local(6, 200, 500);

  CHECK(log.append(e2).empty());
  CHECK(log.append(e3).empty());
  CHECK(log.append(e4).empty());
  CHECK(log.min() == 200);
  CHECK(log.max() == 800);
  // (300, 900, OSD-4) removes the second and third entries; the fourth
  // only overlaps it and stays.
  CHECK(log.append(e5) == std::vector<Entry>{e2, e3});
  CHECK(log.entries() == std::vector<Entry>{kInitial, e4, e5});
  CHECK(log.max() == 900);
  // The pull-back of the fourth entry removes it.
  CHECK(log.append(e6) == std::vector<Entry>{e4});
  CHECK(log.entries() == std::vector<Entry>{kInitial, e5, e6});

  CHECK(log.query(200, 600) == std::vector<Segment>{at_home(200, 500), at(e5, 500, 600)});

  // The paper's rule (a delete starting at or below Min sets Min to its
  // end) would give Min = 500 here. Recomputing from the remote entries
  // keeps 300, the start of the one remote entry left.
  CHECK(log.min() == 300);
  CHECK(log.max() == 900);
  CHECK(log.remote_entries() == std::vector<Entry>{e5});
  CHECK_FALSE(log.references(ServerId(5), e4.where.fragment));
  CHECK(log.references(ServerId(4), e5.where.fragment));
}

// Fig. 9 with the pull-back of entry 4 stamped, as §V-C requires, with the
// time its pull started, while [300, 400) was redirected again during the
// pull. The paper's incremental Min (500 after the delete) would send a
// query of [300, 400) down the fast path to home, hiding the redirect.
TEST_CASE("min stays low enough when a back-dated pull-back follows a newer redirect") {
  RedirectLog log;
  const Entry e2 = remote(20, 400, 600, 2);
  const Entry e3 = remote(30, 700, 800, 3);
  const Entry e4 = remote(40, 200, 500, 5);
  const Entry e5 = remote(50, 300, 900, 4);
  (void)log.append(e2);
  (void)log.append(e3);
  (void)log.append(e4);
  (void)log.append(e5);
  // The maintainer starts pulling e4 at time 55; at 60 a client redirects
  // [300, 400) to OSD-6; at 70 the pull finishes and appends at 55.
  const Entry during = remote(60, 300, 400, 6);
  CHECK(log.append(during).empty());
  CHECK(log.append(local(55, 200, 500)) == std::vector<Entry>{e4});

  CHECK(log.min() == 300);
  CHECK(log.query(300, 400) == std::vector<Segment>{at(during, 300, 400)});
  CHECK(log.query(200, 600) == std::vector<Segment>{at_home(200, 300), at(during, 300, 400),
                                                    at_home(400, 500), at(e5, 500, 600)});
  CHECK(log.overlaps_remote(300, 301));
}

// Fig. 10: the maintainer pulls (r1, r2, OSD-1) home; meanwhile a client
// redirects the same range to OSD-2. The pull-back entry carries the time
// the pull started, so it lands before the newer redirect and loses to it.
TEST_CASE("the paper's Fig. 10: a back-dated pull-back does not override a newer redirect") {
  RedirectLog log;
  const Entry first = remote(1, 1000, 2000, 1);
  (void)log.append(first);
  const uint64_t pull_started = 2;
  const Entry redirect = remote(3, 1000, 2000, 2);
  // The new redirect covers the old one and removes it already.
  CHECK(log.append(redirect) == std::vector<Entry>{first});

  const Entry pull_back = local(pull_started, 1000, 2000);
  CHECK(log.append(pull_back).empty());
  CHECK(log.entries() == std::vector<Entry>{kInitial, redirect});
  CHECK(log.query(1000, 2000) == std::vector<Segment>{at(redirect, 1000, 2000)});
}

TEST_CASE("a back-dated pull-back removes the entry it pulled and keeps the newer one") {
  RedirectLog log;
  const Entry pulled = remote(1, 1000, 2000, 1);
  (void)log.append(pulled);
  // During the pull (started at 2), only part of the range is redirected.
  const Entry redirect = remote(3, 1200, 1300, 2);
  (void)log.append(redirect);
  const Entry pull_back = local(2, 1000, 2000);
  CHECK(log.append(pull_back) == std::vector<Entry>{pulled});
  CHECK(log.entries() == std::vector<Entry>{kInitial, pull_back, redirect});
  CHECK(log.query(1000, 2000) == std::vector<Segment>{at_home(1000, 1200), at(redirect, 1200, 1300),
                                                      at_home(1300, 2000)});
  CHECK(log.min() == 1200);
  CHECK(log.max() == 1300);
  // As of the pull's start, the pull-back itself answers.
  CHECK(log.query(1000, 2000, 2) == std::vector<Segment>{at_home(1000, 2000)});
}

TEST_CASE("a local entry that overlaps no remote entry is not kept") {
  RedirectLog log;
  CHECK(log.append(local(1, 0, 100)).empty());
  CHECK(log.empty());

  const Entry r = remote(2, 500, 600, 3);
  (void)log.append(r);
  // Touches r's edge only: half-open ranges do not overlap.
  CHECK(log.append(local(3, 400, 500)).empty());
  CHECK(log.append(local(4, 600, 700)).empty());
  CHECK(log.entries() == std::vector<Entry>{kInitial, r});
  // A remote entry newer than the local one does not count either.
  CHECK(log.append(local(1, 500, 600)).empty());
  CHECK(log.entries() == std::vector<Entry>{kInitial, r});
}

TEST_CASE("when the last remote entry leaves, the log returns to its initial state") {
  RedirectLog log;
  const Entry a = remote(1, 0, 100, 2);
  const Entry b = remote(2, 200, 300, 3);
  (void)log.append(a);
  (void)log.append(b);
  // A local write over part of a: kept, a stays (not inside).
  const Entry part = local(3, 50, 150);
  CHECK(log.append(part).empty());
  CHECK(log.size() == 4);
  // Pull b home: a is still redirected.
  const Entry pull_b = local(4, 200, 300);
  CHECK(log.append(pull_b) == std::vector<Entry>{b});
  CHECK_FALSE(log.empty());
  // Pull a home: the last remote entry leaves; the other local entries go
  // with it, and the pull-back itself is not kept.
  CHECK(log.append(local(5, 0, 100)) == std::vector<Entry>{a, part, pull_b});
  CHECK(log.empty());
  CHECK(log.entries() == std::vector<Entry>{kInitial});
  CHECK(log.min() == log.max());
  CHECK(log.query(0, 1000) == std::vector<Segment>{at_home(0, 1000)});
}

TEST_CASE("references tells whether any entry still names a fragment") {
  RedirectLog log;
  const Entry a = Entry{1, 0, 100, Location::remote(ServerId(2), 7, 0)};
  const Entry b = Entry{2, 100, 200, Location::remote(ServerId(2), 7, 0)};
  (void)log.append(a);
  (void)log.append(b);
  CHECK(log.references(ServerId(2), 7));
  CHECK_FALSE(log.references(ServerId(2), 8));
  CHECK_FALSE(log.references(ServerId(3), 7));
  // Removing a leaves b on the same fragment.
  (void)log.append(remote(3, 0, 100, 4));
  CHECK(log.references(ServerId(2), 7));
  (void)log.append(remote(4, 100, 200, 4, 9));
  CHECK_FALSE(log.references(ServerId(2), 7));
}

TEST_CASE("oldest_remote and remote_entries follow sequence order, skipping local entries") {
  RedirectLog log;
  const Entry a = remote(10, 0, 100, 2);
  const Entry c = remote(30, 500, 600, 4);
  (void)log.append(a);
  (void)log.append(c);
  (void)log.append(local(35, 50, 60));
  const Entry b = remote(20, 300, 400, 3);
  (void)log.append(b);
  REQUIRE(log.oldest_remote().has_value());
  CHECK(*log.oldest_remote() == a);
  CHECK(log.remote_entries() == std::vector<Entry>{a, b, c});
  // Pulling a home makes b the oldest.
  (void)log.append(local(40, 0, 100));
  CHECK(*log.oldest_remote() == b);
}

TEST_CASE("overlaps_remote uses half-open ranges and sees remote entries shadowed by local ones") {
  RedirectLog log;
  (void)log.append(remote(1, 100, 200, 2));
  (void)log.append(remote(2, 300, 400, 3));
  CHECK(log.overlaps_remote(150, 160));
  CHECK(log.overlaps_remote(0, 101));
  CHECK(log.overlaps_remote(199, 1000));
  CHECK_FALSE(log.overlaps_remote(0, 100));
  CHECK_FALSE(log.overlaps_remote(200, 300));
  CHECK_FALSE(log.overlaps_remote(400, kEnd));
  CHECK_FALSE(log.overlaps_remote(150, 150));
  (void)log.append(local(3, 120, 180));
  CHECK(log.overlaps_remote(130, 140));
}

TEST_CASE("a range outside [min, max) is one home segment; one inside a hole is split correctly") {
  RedirectLog log;
  const Entry a = remote(1, 1000, 2000, 2);
  const Entry b = remote(2, 5000, 6000, 3);
  (void)log.append(a);
  (void)log.append(b);
  CHECK(log.min() == 1000);
  CHECK(log.max() == 6000);
  CHECK(log.query(0, 1000) == std::vector<Segment>{at_home(0, 1000)});
  CHECK(log.query(6000, kEnd) == std::vector<Segment>{at_home(6000, kEnd)});
  CHECK(log.query(2000, 5000) == std::vector<Segment>{at_home(2000, 5000)});
  CHECK(log.query(0, kEnd) == std::vector<Segment>{at_home(0, 1000), at(a, 1000, 2000),
                                                   at_home(2000, 5000), at(b, 5000, 6000),
                                                   at_home(6000, kEnd)});
  // Removing b by a covering entry moves max; a pull-back of a moves min.
  const Entry c = remote(3, 4000, 7000, 4);
  (void)log.append(c);
  CHECK(log.max() == 7000);
  (void)log.append(local(4, 1000, 2000));
  CHECK(log.min() == 4000);
  CHECK(log.max() == 7000);
}

namespace {

// The model: every byte lives where the newest entry covering it says,
// among all entries ever appended (removal must not change that).
Location model_at(const std::vector<Entry>& all, uint64_t byte) {
  const Entry* best = nullptr;
  for (const Entry& e : all) {
    if (e.begin <= byte && byte < e.end && (best == nullptr || e.seq > best->seq)) best = &e;
  }
  return best == nullptr || best->where.local ? Location::home() : best->where;
}

void check_invariants(const RedirectLog& log) {
  const auto& entries = log.entries();
  REQUIRE(entries.front() == Entry{0, 0, kEnd, Location::home()});
  for (size_t i = 1; i < entries.size(); ++i) CHECK(entries[i - 1].seq <= entries[i].seq);
  const auto remotes = log.remote_entries();
  CHECK(log.empty() == remotes.empty());
  if (remotes.empty()) {
    CHECK(log.min() == log.max());
    return;
  }
  uint64_t lo = kEnd, hi = 0;
  for (const Entry& r : remotes) {
    lo = std::min(lo, r.begin);
    hi = std::max(hi, r.end);
    CHECK(log.references(r.where.server, r.where.fragment));
  }
  CHECK(log.min() == lo);
  CHECK(log.max() == hi);
}

}  // namespace

TEST_CASE("random redirects and back-dated pull-backs match the newest-entry-wins model") {
  std::mt19937_64 rng(42);
  constexpr uint64_t kSpan = 64;
  for (int round = 0; round < 200; ++round) {
    RedirectLog log;
    std::vector<Entry> all;
    uint64_t now = 0;
    for (int step = 0; step < 40; ++step) {
      now += 2;
      const uint64_t a = rng() % kSpan, b = rng() % kSpan;
      if (a == b) continue;
      const uint64_t begin = std::min(a, b), end = std::max(a, b);
      Entry e;
      switch (rng() % 4) {
        case 0:  // a local write at home, appended only when it matters
          e = local(now, begin, end);
          if (!log.overlaps_remote(begin, end)) continue;
          break;
        case 1: {  // a pull-back stamped with an earlier time (odd: unique)
          const uint64_t back = 1 + 2 * (rng() % (now / 2));
          e = local(back, begin, end);
          break;
        }
        default:
          e = remote(now, begin, end, static_cast<uint32_t>(1 + rng() % 5));
      }
      all.push_back(e);
      (void)log.append(e);
      check_invariants(log);
    }
    const auto answer = log.query(0, kSpan);
    REQUIRE_FALSE(answer.empty());
    CHECK(answer.front().begin == 0);
    CHECK(answer.back().end == kSpan);
    for (size_t i = 0; i < answer.size(); ++i) {
      CHECK(answer[i].begin < answer[i].end);
      if (i > 0) {
        CHECK(answer[i - 1].end == answer[i].begin);
        CHECK_FALSE(answer[i - 1].where == answer[i].where);
      }
      for (uint64_t byte = answer[i].begin; byte < answer[i].end; ++byte) {
        REQUIRE(model_at(all, byte) == answer[i].where);
      }
    }
  }
}

TEST_CASE("forgetting a lost fragment: a local entry after each entry naming it reads home there, nothing else") {
  // What fsck --repair's dropRedirect does (server/storage_fsck.cc).
  RedirectTable table;
  const ObjectId object{InodeId(9), 2};
  const Entry a = remote(2, 0, 100, 1, 7);
  const Entry b = remote(4, 50, 150, 2, 8);
  const Entry c = remote(6, 160, 170, 2, 8);
  const Entry newer = remote(8, 140, 145, 3, 9);
  for (const Entry& e : {a, b, c, newer}) table.append(object, e);
  std::vector<Garbage> garbage;
  for (const Entry& e : table.find(object)->remote_entries()) {
    if (e.where.fragment != 8) continue;
    Change change = table.append(object, local(RedirectTable::pulled_seq(e.seq), e.begin, e.end));
    garbage.insert(garbage.end(), change.garbage.begin(), change.garbage.end());
  }
  CHECK(table.query(object, 0, 200) == std::vector<Segment>{at(a, 0, 50), at_home(50, 140), at(newer, 140, 145),
                                                            at_home(145, 200)});
  CHECK_FALSE(table.find(object)->references(ServerId(2), 8));
  CHECK(garbage == std::vector<Garbage>{Garbage{ServerId(2), object, 8}});
}

}  // namespace pvfs::redirect
