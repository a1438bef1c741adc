// A thin RAII wrapper over LMDB and the only file in pvfs that includes
// <lmdb.h>: environments, named databases, transactions, prefix scans, and
// the mapping of LMDB return codes to Status. It knows nothing of what the
// bytes mean. An Env may begin transactions from any thread (LMDB allows one
// open write transaction at a time); a Txn belongs to the thread using it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "shared/status.h"

struct MDB_env;
struct MDB_txn;

namespace pvfs::lmdb {

struct EnvOptions {
  // Address space reserved for the memory map. The file grows only as pages
  // are written, so a large value costs no disk; it caps the database size.
  uint64_t map_size_bytes = uint64_t{64} << 30;
  uint32_t max_dbs = 16;
  // true: MDB_NOMETASYNC, consistent after a system crash (see Env).
  // false: MDB_NOSYNC, no flush at commit: a system crash can lose recent
  // commits and damage the database unless sync() ran after the last
  // commit. For owners that commit on their network thread and cannot
  // afford a flush per commit.
  bool flush_commits = true;
};

// Handle of a named database; valid for the life of the Env that opened it.
struct Db {
  unsigned int handle = 0;
};

class Txn;

// One LMDB environment (a directory holding data.mdb and lock.mdb).
//
// Opened (by default) with MDB_NOMETASYNC: every commit fdatasyncs the pages it wrote
// before it writes its meta page, and leaves that meta page to the next
// commit's flush or to sync(). So a system crash or power loss undoes at
// most the commits made since the last flush (in practice the last one)
// and never leaves a meta page that names pages not on disk: the database
// stays consistent. MDB_NOSYNC gives no such promise (the kernel may write
// a meta page before the pages it names, and LMDB reuses pages the last
// durable meta page still names); MDB_WRITEMAP is not used either, so a
// stray write cannot reach the map and the file grows only as pages are
// written. A process crash (kill -9) loses nothing: every commit is in the
// page cache at once. Owners call sync() when a commit must be durable now
// (an fsync through a mount) and on a timer to bound the rest.
// LMDB forbids opening the same environment twice in one process: close it
// (destroy the Env) before opening it again.
class Env {
 public:
  // Opens the environment in `dir`, creating the directory and the files on
  // first use. Errors: io (with LMDB's or the OS's message).
  static Result<std::unique_ptr<Env>> open(const std::filesystem::path& dir,
                                           const EnvOptions& options = {});
  ~Env();
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // Opens named database `name`, creating it if absent, in a transaction of
  // its own. Call while no other transaction of this Env is open (LMDB's
  // rule for mdb_dbi_open). Errors: io (e.g. more than max_dbs databases).
  Result<Db> open_db(const std::string& name);
  // A read-only snapshot. Errors: io.
  Result<Txn> begin_read();
  // The single write transaction; blocks while another one is open, so a
  // thread must never begin one while it holds one. Errors: io.
  Result<Txn> begin_write();
  // Flushes every commit to stable storage (mdb_env_sync with force): the
  // commits made before the call are durable when it returns. May run on
  // another thread while a write transaction is open. Errors: io.
  Status sync();

 private:
  explicit Env(MDB_env* env) : env_(env) {}
  MDB_env* env_;
};

// A transaction. Destroying it without commit() aborts it. Move-only.
class Txn {
 public:
  Txn(Txn&& other) noexcept;
  Txn& operator=(Txn&& other) noexcept;
  ~Txn();

  // The value stored under `key`. The view points into the map: it stays
  // valid until the transaction ends or, in a write transaction, until the
  // next put() or del(). Errors: not_found, io.
  Result<std::string_view> get(Db db, std::string_view key);
  // Stores `value` under `key`, replacing any previous value. Keys are 1 to
  // 511 bytes. Errors: no_space (map full), invalid_argument (key size), io.
  // After an error the transaction can only be destroyed.
  Status put(Db db, std::string_view key, std::string_view value);
  // Removes `key`. Errors: not_found, io.
  Status del(Db db, std::string_view key);
  // Number of keys in the database. Errors: io.
  Result<uint64_t> count(Db db);
  // Visits, in key order, the keys that start with `prefix` and are not
  // less than `from` (pass `prefix` or "" to start at the first one), until
  // `visit` returns false. The views are valid during the call only; the
  // callback must not put or del in this transaction. Errors: io.
  using Visitor = std::function<bool(std::string_view key, std::string_view value)>;
  Status scan(Db db, std::string_view prefix, std::string_view from, const Visitor& visit);
  // Makes the changes visible, durable against process crashes, and
  // durable against system crashes once the next commit or Env::sync()
  // returns (see Env). The transaction is finished afterwards, whatever
  // the outcome.
  // Errors: no_space (the map, or the disk, is full), io.
  Status commit();

 private:
  friend class Env;
  explicit Txn(MDB_txn* txn) : txn_(txn) {}
  MDB_txn* txn_ = nullptr;
};

}  // namespace pvfs::lmdb
