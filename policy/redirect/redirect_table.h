// Every redirect log a home server keeps, one per object with something
// redirected, and the sequence numbers that order their entries. Pure: the
// storage service persists what changes (server/sched_db.h) and does the
// I/O. Not thread-safe: one owner thread.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "policy/redirect/redirect_log.h"
#include "shared/ids.h"

namespace pvfs::redirect {

// A fragment on another server that no entry refers to any more.
struct Garbage {
  ServerId server;
  ObjectId object;
  uint64_t fragment = 0;
  auto operator<=>(const Garbage&) const = default;
};

// What one change did: the entries that left the log (to delete from disk)
// and the fragments nothing refers to any more (to drop on their servers).
struct Change {
  std::vector<Entry> removed;
  std::vector<Garbage> garbage;
};

class RedirectTable {
 public:
  // A fresh sequence number, larger than every one handed out or restored.
  // Always even: the odd number after an entry's is where a maintainer
  // records that the entry's bytes are home (see pulled_seq()).
  uint64_t next_seq() {
    last_seq_ = (last_seq_ | 1) + 1;
    return last_seq_;
  }
  // Where the local entry saying "entry `seq` was pulled home" goes: right
  // after that entry, so it replaces exactly what the entry answered for
  // and nothing newer (a later redirect or write, even one made while the
  // pull ran, still wins).
  static uint64_t pulled_seq(uint64_t seq) { return seq + 1; }

  // Appends `e` to the object's log (see RedirectLog::append).
  Change append(ObjectId object, const Entry& e);
  // Restores an entry read back from disk, in sequence order per object.
  void restore(ObjectId object, const Entry& e);
  // Drops the object's log (the object was removed): every remote entry's
  // fragment becomes garbage.
  Change drop(ObjectId object);

  // Where [begin, end) of the object lives now.
  std::vector<Segment> query(ObjectId object, uint64_t begin, uint64_t end) const;
  // Whether a write at home to [begin, end) must append a local entry.
  bool overlaps_remote(ObjectId object, uint64_t begin, uint64_t end) const;

  // The log of `object`, or nullptr when nothing of it is redirected.
  const RedirectLog* find(ObjectId object) const;
  // Objects with something redirected, in id order.
  std::vector<ObjectId> objects() const;
  // Objects with something redirected and remote entries among them.
  size_t object_count() const { return logs_.size(); }
  size_t remote_entry_count() const;

 private:
  Change finish(ObjectId object, std::vector<Entry> removed);
  std::map<ObjectId, RedirectLog> logs_;  // only non-empty logs
  uint64_t last_seq_ = 0;
};

}  // namespace pvfs::redirect
