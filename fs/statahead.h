// Statahead, as Lustre's clients do it: a program that walks a directory
// in listing order (stat of every file, `find`, `du`, `rm -r`, mdtest's
// stat phase) makes the kernel send one LOOKUP per name, one round trip to
// the MDS each. The MDS tells the client each entry's place in the listing
// (its readdir cookie); after kWalkLength lookups in listing order the
// client fetches the kWindow entries that follow, with their attributes,
// in one readdirplus, and answers the next lookups from them.
//
// An entry answers one lookup, by the caller (uid, gid) whose walk fetched
// it, for at most the attribute timeout from when the MDS read it: no older
// than the kernel's own cache could have held it. A name this client
// removes, renames or creates, and an inode it changes (chmod, write,
// link...), is forgotten first. A name not fetched is always asked of the
// MDS: statahead never answers "no such file". Pure: time is an argument.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "shared/attr.h"

namespace pvfs {

class Statahead {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr uint32_t kWindow = 512;     // entries fetched per readdirplus
  static constexpr int kWalkLength = 3;        // lookups in listing order that make a walk
  static constexpr uint64_t kMaxStride = 8;    // cookies a walk may skip (names it did not stat)
  static constexpr size_t kMaxDirs = 16;       // directories walked at once

  struct Walker {
    InodeId dir;
    uint32_t uid = 0;
    uint32_t gid = 0;
    auto operator<=>(const Walker&) const = default;
  };

  struct Hit {
    Attr attr;
    Clock::duration age{};  // since the MDS read it
  };

  // A lookup the MDS answered: `cookie` is the entry's place in `w.dir`'s
  // listing (0: unknown). Returns the cookie to fetch a window after when
  // this lookup continues a walk past what was fetched, else nullopt.
  std::optional<uint64_t> note_lookup(const Walker& w, uint64_t cookie, Clock::time_point now);

  // Keeps the entries of a window fetched (readdirplus) after `after` for
  // walker `w`, asked for at `fetched` when generation() was `generation`.
  // Entries without attributes (another file set's root) are left out; the
  // whole window when, since it was asked for, this client changed a name
  // in that directory or any inode (it may predate the change).
  void keep(const Walker& w, uint64_t after, std::vector<DirEntry> entries,
            Clock::time_point fetched, uint64_t generation);
  // Counts forget() and forget_inode() calls.
  uint64_t generation() const { return generation_; }

  // Answers a lookup of `name` from a window, once; nullopt when it was
  // not fetched, or longer ago than `max_age`.
  std::optional<Hit> take(const Walker& w, const std::string& name, Clock::time_point now,
                          Clock::duration max_age);

  // This client changes `name` in `dir` (unlink, rename, create...) or the
  // inode `ino` (attributes, size, links): what was fetched of it goes.
  // Called when the change starts and again when it ends, so no window
  // fetched meanwhile keeps the old state.
  void forget(InodeId dir, const std::string& name);
  void forget_inode(InodeId ino);

  bool empty() const { return walks_.empty(); }

 private:
  struct Fetched {
    Attr attr;
    uint64_t cookie = 0;
    Clock::time_point at;
  };
  struct Walk {
    uint64_t last_cookie = 0;   // of the last lookup in this walk
    int length = 0;             // lookups in listing order so far
    uint64_t fetched_to = 0;    // last cookie fetched (0: none)
    Clock::time_point touched;
    std::map<std::string, Fetched, std::less<>> entries;
  };
  Walk& walk_of(const Walker& w, Clock::time_point now);
  void erase_inode(InodeId ino);
  std::map<Walker, Walk> walks_;
  uint64_t generation_ = 0;
  std::map<InodeId, uint64_t> dir_changed_;  // generation of the last forget() there
  uint64_t dirs_changed_floor_ = 0;          // of those no longer in dir_changed_
  uint64_t inode_changed_ = 0;               // generation of the last forget_inode()
  static constexpr size_t kMaxChangedDirs = 4096;
};

}  // namespace pvfs
