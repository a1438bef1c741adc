// What a storage server's write scheduling must not forget across a crash,
// in one LMDB environment at data_dir/sched: the redirect entries of the
// objects it is home to, the fragments it holds for other servers, and the
// fragments elsewhere still to be dropped. Commits survive kill -9 at once
// (see shared/lmdb/lmdb_env.h); sync() makes them survive power loss.
// Used from the service's network thread only (not thread-safe).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "policy/redirect/redirect_table.h"
#include "shared/lmdb/lmdb_env.h"

namespace pvfs {

// A fragment this server holds: `bytes` of object `object`, stored under
// `fragment` for the object's home server.
struct HeldFragment {
  uint64_t fragment = 0;
  ObjectId object;
  uint64_t bytes = 0;
};

class SchedDb {
 public:
  // Opens (creating) data_dir/sched. Errors: io.
  static Result<std::unique_ptr<SchedDb>> open(const std::filesystem::path& data_dir);

  // Rebuilds the redirect table, and reports every held fragment and every
  // pending garbage record, from disk. Errors: corrupt, io.
  Status load(redirect::RedirectTable& table, const std::function<void(const HeldFragment&)>& held,
              const std::function<void(const redirect::Garbage&)>& garbage);

  // Records one change of `object`'s log in one transaction: `added` (when
  // the log kept it), the removed entries and the new garbage.
  Status apply(ObjectId object, const redirect::Entry* added, const redirect::Change& change);
  // A fragment was stored here / dropped from here.
  Status put_fragment(const HeldFragment& f);
  Status delete_fragments(std::span<const uint64_t> fragments);
  // Garbage dropped on its server: forget it.
  Status delete_garbage(std::span<const redirect::Garbage> done);

  // Flushes every commit to stable storage. Errors: io.
  Status sync() { return env_->sync(); }

 private:
  SchedDb(std::unique_ptr<lmdb::Env> env, lmdb::Db entries, lmdb::Db fragments, lmdb::Db garbage)
      : env_(std::move(env)), entries_(entries), fragments_(fragments), garbage_(garbage) {}
  std::unique_ptr<lmdb::Env> env_;
  lmdb::Db entries_;    // ino, index, seq (big-endian) -> entry
  lmdb::Db fragments_;  // fragment id -> ino, index, bytes
  lmdb::Db garbage_;    // server, ino, index, fragment -> ""
};

}  // namespace pvfs
