// Which security.* extended attributes an inode was recently found not to
// have: a write must drop security.capability (the kernel asked for it
// before every write until pvfsmount took that over, fs/fuse_loop.h), and
// ls(1) asks for security.selinux of every `ls -l` entry. Asking the
// metadata server each time doubled the requests of a write. An absence is trusted for the attribute
// cache lifetime, like the attributes themselves; setting or removing an
// xattr through this mount forgets the inode at once, and another client's
// change shows within the lifetime. Pure: the caller passes the time. Not
// thread-safe: the FUSE loop's thread owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pvfs {

class XattrAbsence {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kDefaultMaxInodes = 65536;

  // `lifetime` zero: nothing is remembered.
  explicit XattrAbsence(Clock::duration lifetime, size_t max_inodes = kDefaultMaxInodes);

  // Whether absences of `name` are remembered: security.* names.
  static bool tracked(std::string_view name);

  // True when `ino` was found without `name` less than the lifetime before `now`.
  bool absent(uint64_t ino, std::string_view name, Clock::time_point now) const;
  // `ino` has no `name` as of `now` (ignored unless tracked(name)), by a
  // request that started at generation() `asked_at`: ignored as well when an
  // xattr changed since, as the answer may predate the change.
  void note_absent(uint64_t ino, std::string_view name, Clock::time_point now, uint64_t asked_at);
  // The MDS said, with attributes read at about `now`, that `ino` has no
  // security.* xattrs at all. Ignored within a lifetime of any change made
  // through this mount, since such a hint may have been read before it.
  void note_none(uint64_t ino, Clock::time_point now);
  // An xattr of `ino` is changing or changed at `now`: forget what was noted of it.
  void forget(uint64_t ino, Clock::time_point now) {
    inodes_.erase(ino);
    ++generation_;
    last_change_ = now;
  }
  // Counts forget() calls.
  uint64_t generation() const { return generation_; }

  size_t inodes() const { return inodes_.size(); }

 private:
  struct Noted {
    std::string name;
    Clock::time_point at;
  };
  bool fresh(const Noted& n, Clock::time_point now) const {
    return now >= n.at && now - n.at < lifetime_;
  }
  const Clock::duration lifetime_;
  const size_t max_inodes_;
  std::unordered_map<uint64_t, std::vector<Noted>> inodes_;
  uint64_t generation_ = 0;
  std::optional<Clock::time_point> last_change_;
};

}  // namespace pvfs
