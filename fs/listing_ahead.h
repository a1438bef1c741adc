// What pvfsmount fetched of a directory listing beyond what the kernel asked
// for. The kernel lists a directory a few KiB at a time (about 25 entries
// with attributes per READDIRPLUS), so `ls -l` of 10,000 entries would
// cost 400 round trips to the MDS; the client asks for kAheadEntries at
// once and answers the kernel's next calls from here.
//
// A rest is used only by the caller who fetched it (same uid and gid), in the same
// mode (plain or plus), when the cookie the kernel passes back is where the
// rest starts or one of its entries (the kernel may take fewer entries than
// asked when names are long), while no change made through this client has
// happened since it was fetched (`epoch`), and for at most the attribute
// timeout: its attributes are then no older than the kernel's own cache
// could hold them. Pure: time is an argument.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "shared/attr.h"

namespace pvfs {

class ListingAhead {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr uint32_t kAheadEntries = 512;  // asked of the MDS per fetch
  static constexpr size_t kMaxRests = 64;         // listings in progress kept

  // One rest per directory, mode and caller: the listing in progress.
  struct Key {
    InodeId dir;
    bool plus = false;
    uint32_t uid = 0;
    uint32_t gid = 0;
    auto operator<=>(const Key&) const = default;
  };

  struct Page {
    DirPage page;
    Clock::duration age{};  // since the entries were fetched
  };

  // Keeps `entries` (in listing order), which follow the entry of cookie
  // `after`; `eof` when the directory ends after them. Replaces what was
  // kept for `key`; nothing is kept when `entries` is empty, unless the
  // directory ends there (an empty directory's listing, fetched at
  // opendir). The client keeps a whole page from the MDS and takes the
  // kernel's first part of it.
  void keep(const Key& key, uint64_t after, std::vector<DirEntry> entries, bool eof,
            uint64_t epoch, Clock::time_point fetched);

  // Up to `max` kept entries following cookie `after` (copies: the kernel
  // may come back for some of them), or nullopt when none are kept there,
  // they were fetched before change `epoch`, or are older than `max_age` (a
  // rest found stale is dropped). Asked for past the last entry: an empty
  // page that says eof at the end of the directory, else nullopt.
  std::optional<Page> take(const Key& key, uint64_t after, uint32_t max, uint64_t epoch,
                           Clock::time_point now, Clock::duration max_age);

  size_t size() const { return rests_.size(); }
  void clear() { rests_.clear(); }

 private:
  struct Rest {
    uint64_t after = 0;             // the cookie entries[0] follows
    std::vector<DirEntry> entries;  // in listing order (rising cookies)
    bool eof = false;
    uint64_t epoch = 0;
    Clock::time_point fetched;
  };
  std::map<Key, Rest> rests_;
};

}  // namespace pvfs
