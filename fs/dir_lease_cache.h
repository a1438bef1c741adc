// A client's directory leases (mds/dir_lease_table.h is the MDS's side): for
// a directory it holds a lease on, the hash of every name in it, so that a
// lookup of a name that is not there (one before every create) is answered
// here instead of by the MDS. The MDS recalls a lease before it adds a name
// for another client; this client's own additions go into the lease as it
// makes them, including those in flight while the lease is being asked
// for. A lease serves only the uid and gid that asked for it (the MDS
// checked their permissions), and ends `term` after it was asked for, a
// recall, or the loss of a connection to the MDS, whichever comes first.
// Pure: time is an argument. Runs on the client's io thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "shared/clock.h"
#include "shared/ids.h"
#include "shared/name_hash.h"

namespace pvfs {

class DirLeaseCache {
 public:
  // After a recall a directory is not asked for again before this, doubled
  // at each further recall up to kMaxRetryAfterRecall, and back to this
  // once a lease on it runs its whole term: a directory that nodes keep
  // adding to (mdtest's shared directory on many nodes) soon costs the
  // MDS little, where each lease means listing the whole directory.
  static constexpr auto kRetryAfterRecall = std::chrono::seconds(1);
  static constexpr auto kMaxRetryAfterRecall = std::chrono::seconds(64);
  // After a failed or refused request (leases off, too large a directory).
  static constexpr auto kRetryAfterRefusal = std::chrono::seconds(60);
  static constexpr size_t kMaxDirs = 4096;  // past this, directories without a lease are forgotten
  // A lease is asked for at the second lookup of an absent name in a
  // directory within this: a lone miss (a shell's PATH search, a test -e)
  // is not worth a request listing the whole directory.
  static constexpr auto kMissWindow = std::chrono::seconds(1);

  // Whether `name` is known not to be in `dir` for a caller with `uid` and `gid`.
  bool absent(InodeId dir, std::string_view name, uint32_t uid, uint32_t gid, TimePoint now) const;
  // Whether to ask the MDS for a lease on `dir` now: none held or being
  // asked for, and none recalled or refused lately.
  bool should_ask(InodeId dir, TimePoint now) const;
  // A lookup in `dir` found nothing at the MDS. Returns whether to ask for a
  // lease now: should_ask(), and an earlier miss within kMissWindow.
  bool missed(InodeId dir, TimePoint now);
  // A leaseDir for `dir` is being sent. Returns the ticket its answer must
  // bring back to granted().
  uint64_t asking(InodeId dir, TimePoint now);
  // The MDS's answer to the leaseDir of `ticket`, sent at `sent`. Kept
  // unless the directory was recalled, or the cache cleared, meanwhile;
  // returns whether it was.
  bool granted(InodeId dir, uint64_t ticket, uint32_t uid, uint32_t gid, const NameHashKey& key,
               const std::vector<uint64_t>& names, TimePoint sent, Duration term);
  // The leaseDir of `ticket` failed: not asked again before `retry_at`.
  void refused(InodeId dir, uint64_t ticket, TimePoint retry_at);
  // A lookup in `dir` was just answered from its lease at `now`. Returns a
  // ticket for renewed() when the lease is past half its term and no
  // renewal is in flight (the MDS extends it without listing the
  // directory again), else 0.
  uint64_t renewing(InodeId dir, TimePoint now);
  // The renewal of `ticket`, sent at `sent`, was granted for `term` from
  // then; kept unless the lease was recalled or cleared meanwhile.
  void renewed(InodeId dir, uint64_t ticket, TimePoint sent, Duration term);
  // It failed: the lease ends when it would have.
  void renewal_failed(InodeId dir, uint64_t ticket);
  // This client sends a request adding `name` to `dir` / has its answer.
  void adding(InodeId dir, std::string_view name, TimePoint now);
  void added(InodeId dir, std::string_view name);
  // The MDS recalled `dir`'s lease.
  void recalled(InodeId dir, TimePoint now);
  // A connection to the MDS closed: every lease ends.
  void clear();
  // Leases running at `now`.
  size_t held(TimePoint now) const;

 private:
  struct Lease {
    NameHashKey key;
    std::unordered_set<uint64_t> names;
    TimePoint until;
    Duration term{};
    uint32_t uid = 0;
    uint32_t gid = 0;
  };
  struct Dir {
    std::optional<Lease> lease;
    uint64_t ticket = 0;            // of the leaseDir in flight; 0: none
    uint64_t renew_ticket = 0;      // of the renewal in flight; 0: none
    std::vector<std::string> collected;  // added while it is in flight
    std::unordered_multiset<std::string> pending;  // additions in flight
    TimePoint retry_at{};
    Duration recall_backoff{};  // zero: no recall since a lease ran its term
    std::optional<TimePoint> last_miss;
  };
  // `dir`'s entry, made if need be (forgetting idle ones past kMaxDirs).
  Dir& entry(InodeId dir, TimePoint now);
  void forget_idle(TimePoint now);
  std::unordered_map<uint64_t, Dir> dirs_;
  uint64_t next_ticket_ = 1;
};

}  // namespace pvfs
