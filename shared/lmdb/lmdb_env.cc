#include "shared/lmdb/lmdb_env.h"

#include <errno.h>
#include <lmdb.h>
#include <sys/statvfs.h>

#include <system_error>
#include <utility>

namespace pvfs::lmdb {

namespace {

Status from_mdb(int rc, std::string_view what) {
  switch (rc) {
    case MDB_SUCCESS: return {};
    case MDB_NOTFOUND: return Status(Errc::not_found, std::string(what));
    case MDB_MAP_FULL: return Status(Errc::no_space, std::string(what) + ": " + mdb_strerror(rc));
    case MDB_BAD_VALSIZE: return Status(Errc::invalid_argument, std::string(what) + ": " + mdb_strerror(rc));
    case ENOSPC:
    case EDQUOT: return Status(Errc::no_space, std::string(what) + ": " + mdb_strerror(rc));
    default: return Status(Errc::io, std::string(what) + ": " + mdb_strerror(rc));
  }
}

// Whether the file system holding `env` has less than 1 MiB left.
bool disk_full(MDB_env* env) {
  int fd = -1;
  if (mdb_env_get_fd(env, &fd) != 0) return false;
  struct statvfs vfs {};
  if (::fstatvfs(fd, &vfs) != 0) return false;
  return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize < (uint64_t{1} << 20);
}

MDB_val to_val(std::string_view bytes) {
  return MDB_val{bytes.size(), const_cast<char*>(bytes.data())};
}

std::string_view to_view(const MDB_val& val) {
  return {static_cast<const char*>(val.mv_data), val.mv_size};
}

}  // namespace

Result<std::unique_ptr<Env>> Env::open(const std::filesystem::path& dir, const EnvOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(Errc::io, "create " + dir.string() + ": " + ec.message());
  MDB_env* env = nullptr;
  int rc = mdb_env_create(&env);
  if (rc != 0) return from_mdb(rc, "mdb_env_create");
  rc = mdb_env_set_maxdbs(env, options.max_dbs);
  if (rc == 0) rc = mdb_env_set_mapsize(env, options.map_size_bytes);
  // MDB_NOTLS: read transactions are not tied to a thread, so the owner may
  // run them on any thread of its blocking pool. 0600: the namespace holds
  // every name and owner; nobody else reads it. MDB_NOMETASYNC: consistent
  // after a system crash, durable at the next commit or sync() (see Env).
  const unsigned sync_flag = options.flush_commits ? MDB_NOMETASYNC : MDB_NOSYNC;
  if (rc == 0) rc = mdb_env_open(env, dir.c_str(), sync_flag | MDB_NOTLS, 0600);
  if (rc != 0) {
    mdb_env_close(env);
    return from_mdb(rc, "open " + dir.string());
  }
  // Files an older version made 0644 are closed to others too.
  for (const char* name : {"data.mdb", "lock.mdb"})
    std::filesystem::permissions(dir / name, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                                 ec);
  return std::unique_ptr<Env>(new Env(env));
}

Env::~Env() { mdb_env_close(env_); }

Result<Db> Env::open_db(const std::string& name) {
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env_, nullptr, 0, &txn);
  if (rc != 0) return from_mdb(rc, "begin transaction");
  MDB_dbi dbi = 0;
  rc = mdb_dbi_open(txn, name.c_str(), MDB_CREATE, &dbi);
  if (rc != 0) {
    mdb_txn_abort(txn);
    return from_mdb(rc, "open database " + name);
  }
  rc = mdb_txn_commit(txn);
  if (rc != 0) return from_mdb(rc, "open database " + name);
  return Db{dbi};
}

Result<Txn> Env::begin_read() {
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn);
  if (rc != 0) return from_mdb(rc, "begin read transaction");
  return Txn(txn);
}

Result<Txn> Env::begin_write() {
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env_, nullptr, 0, &txn);
  if (rc != 0) return from_mdb(rc, "begin write transaction");
  return Txn(txn);
}

Status Env::sync() { return from_mdb(mdb_env_sync(env_, 1), "mdb_env_sync"); }

Txn::Txn(Txn&& other) noexcept : txn_(std::exchange(other.txn_, nullptr)) {}

Txn& Txn::operator=(Txn&& other) noexcept {
  if (this != &other) {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
    txn_ = std::exchange(other.txn_, nullptr);
  }
  return *this;
}

Txn::~Txn() {
  if (txn_ != nullptr) mdb_txn_abort(txn_);
}

Result<std::string_view> Txn::get(Db db, std::string_view key) {
  PVFS_CHECK(txn_ != nullptr);
  MDB_val k = to_val(key);
  MDB_val v{};
  int rc = mdb_get(txn_, db.handle, &k, &v);
  if (rc != 0) return from_mdb(rc, "get");
  return to_view(v);
}

Status Txn::put(Db db, std::string_view key, std::string_view value) {
  PVFS_CHECK(txn_ != nullptr);
  MDB_val k = to_val(key);
  MDB_val v = to_val(value);
  return from_mdb(mdb_put(txn_, db.handle, &k, &v, 0), "put");
}

Status Txn::del(Db db, std::string_view key) {
  PVFS_CHECK(txn_ != nullptr);
  MDB_val k = to_val(key);
  return from_mdb(mdb_del(txn_, db.handle, &k, nullptr), "del");
}

Result<uint64_t> Txn::count(Db db) {
  PVFS_CHECK(txn_ != nullptr);
  MDB_stat stat{};
  int rc = mdb_stat(txn_, db.handle, &stat);
  if (rc != 0) return from_mdb(rc, "mdb_stat");
  return uint64_t{stat.ms_entries};
}

Status Txn::scan(Db db, std::string_view prefix, std::string_view from, const Visitor& visit) {
  PVFS_CHECK(txn_ != nullptr);
  MDB_cursor* cursor = nullptr;
  int rc = mdb_cursor_open(txn_, db.handle, &cursor);
  if (rc != 0) return from_mdb(rc, "mdb_cursor_open");
  std::string_view start = from < prefix ? prefix : from;
  MDB_val k = to_val(start);
  MDB_val v{};
  rc = start.empty() ? mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
                     : mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
  while (rc == 0) {
    std::string_view key = to_view(k);
    if (!key.starts_with(prefix) || !visit(key, to_view(v))) break;
    rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT);
  }
  mdb_cursor_close(cursor);
  if (rc != 0 && rc != MDB_NOTFOUND) return from_mdb(rc, "cursor");
  return {};
}

Status Txn::commit() {
  PVFS_CHECK(txn_ != nullptr);
  MDB_env* env = mdb_txn_env(txn_);
  const int rc = mdb_txn_commit(std::exchange(txn_, nullptr));
  // LMDB reports a write that stopped short as EIO, which is how a disk
  // that fills during the commit shows; a disk with no room left is said
  // to be full rather than failing.
  if (rc == EIO && disk_full(env)) return Status(Errc::no_space, "commit: the disk is full");
  return from_mdb(rc, "commit");
}

}  // namespace pvfs::lmdb
