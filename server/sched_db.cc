#include "server/sched_db.h"

#include <cstring>

#include <fmt/format.h>

namespace pvfs {

namespace {

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_be(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(in[at + i]);
  return v;
}

std::string object_key(ObjectId o) {
  std::string k;
  put_be(k, o.ino.value, 8);
  put_be(k, o.index, 4);
  return k;
}

std::string entry_key(ObjectId o, uint64_t seq) {
  std::string k = object_key(o);
  put_be(k, seq, 8);
  return k;
}

constexpr size_t kEntryValueBytes = 8 + 8 + 1 + 4 + 8 + 8;

std::string entry_value(const redirect::Entry& e) {
  std::string v;
  put_be(v, e.begin, 8);
  put_be(v, e.end, 8);
  v.push_back(e.where.local ? 1 : 0);
  put_be(v, e.where.server.value, 4);
  put_be(v, e.where.fragment, 8);
  put_be(v, e.where.fragment_base, 8);
  return v;
}

std::string garbage_key(const redirect::Garbage& g) {
  std::string k;
  put_be(k, g.server.value, 4);
  k += object_key(g.object);
  put_be(k, g.fragment, 8);
  return k;
}

std::string fragment_db_key(uint64_t fragment) {
  std::string k;
  put_be(k, fragment, 8);
  return k;
}

}  // namespace

Result<std::unique_ptr<SchedDb>> SchedDb::open(const std::filesystem::path& data_dir) {
  lmdb::EnvOptions options;
  options.map_size_bytes = uint64_t{16} << 30;
  options.max_dbs = 4;
  // Redirects are recorded on the network thread, one commit per redirected
  // write: a flush each would stall every request of this server. The
  // database is synced on fsync and O_SYNC instead (pvfs-server(8)).
  options.flush_commits = false;
  auto env = lmdb::Env::open(data_dir / "sched", options);
  if (!env) return env.status();
  auto entries = (*env)->open_db("redirects");
  if (!entries) return entries.status();
  auto fragments = (*env)->open_db("fragments");
  if (!fragments) return fragments.status();
  auto garbage = (*env)->open_db("garbage");
  if (!garbage) return garbage.status();
  return std::unique_ptr<SchedDb>(new SchedDb(std::move(*env), *entries, *fragments, *garbage));
}

Status SchedDb::load(redirect::RedirectTable& table,
                     const std::function<void(const HeldFragment&)>& held,
                     const std::function<void(const redirect::Garbage&)>& garbage) {
  auto txn = env_->begin_read();
  if (!txn) return txn.status();
  Status bad;
  // Keys sort by object, then sequence: each log is rebuilt in order.
  Status st = txn->scan(entries_, "", "", [&](std::string_view k, std::string_view v) {
    if (k.size() != 20 || v.size() != kEntryValueBytes) {
      bad = Status(Errc::corrupt, "malformed redirect entry in sched db");
      return false;
    }
    ObjectId o{InodeId(get_be(k, 0, 8)), static_cast<uint32_t>(get_be(k, 8, 4))};
    redirect::Entry e;
    e.seq = get_be(k, 12, 8);
    e.begin = get_be(v, 0, 8);
    e.end = get_be(v, 8, 8);
    e.where.local = v[16] != 0;
    e.where.server = ServerId(static_cast<uint32_t>(get_be(v, 17, 4)));
    e.where.fragment = get_be(v, 21, 8);
    e.where.fragment_base = get_be(v, 29, 8);
    table.restore(o, e);
    return true;
  });
  if (!st.ok()) return st;
  if (!bad.ok()) return bad;
  st = txn->scan(fragments_, "", "", [&](std::string_view k, std::string_view v) {
    if (k.size() != 8 || v.size() != 20) return true;
    held(HeldFragment{get_be(k, 0, 8),
                      ObjectId{InodeId(get_be(v, 0, 8)), static_cast<uint32_t>(get_be(v, 8, 4))},
                      get_be(v, 12, 8)});
    return true;
  });
  if (!st.ok()) return st;
  return txn->scan(garbage_, "", "", [&](std::string_view k, std::string_view) {
    if (k.size() != 24) return true;
    garbage(redirect::Garbage{ServerId(static_cast<uint32_t>(get_be(k, 0, 4))),
                              ObjectId{InodeId(get_be(k, 4, 8)), static_cast<uint32_t>(get_be(k, 12, 4))},
                              get_be(k, 16, 8)});
    return true;
  });
}

Status SchedDb::apply(ObjectId object, const redirect::Entry* added, const redirect::Change& change) {
  if (!added && change.removed.empty() && change.garbage.empty()) return Status{};
  auto txn = env_->begin_write();
  if (!txn) return txn.status();
  if (added)
    if (Status s = txn->put(entries_, entry_key(object, added->seq), entry_value(*added)); !s.ok())
      return s;
  for (const auto& e : change.removed) {
    Status s = txn->del(entries_, entry_key(object, e.seq));
    if (!s.ok() && s.code() != Errc::not_found) return s;
  }
  for (const auto& g : change.garbage)
    if (Status s = txn->put(garbage_, garbage_key(g), ""); !s.ok()) return s;
  return txn->commit();
}

Status SchedDb::put_fragment(const HeldFragment& f) {
  auto txn = env_->begin_write();
  if (!txn) return txn.status();
  std::string v = object_key(f.object);
  put_be(v, f.bytes, 8);
  if (Status s = txn->put(fragments_, fragment_db_key(f.fragment), v); !s.ok()) return s;
  return txn->commit();
}

Status SchedDb::delete_fragments(std::span<const uint64_t> fragments) {
  auto txn = env_->begin_write();
  if (!txn) return txn.status();
  for (uint64_t f : fragments) {
    Status s = txn->del(fragments_, fragment_db_key(f));
    if (!s.ok() && s.code() != Errc::not_found) return s;
  }
  return txn->commit();
}

Status SchedDb::delete_garbage(std::span<const redirect::Garbage> done) {
  auto txn = env_->begin_write();
  if (!txn) return txn.status();
  for (const auto& g : done) {
    Status s = txn->del(garbage_, garbage_key(g));
    if (!s.ok() && s.code() != Errc::not_found) return s;
  }
  return txn->commit();
}

}  // namespace pvfs
