#include "mds/inode_record.h"

namespace pvfs::mds {

namespace {

constexpr uint8_t kRecordVersion = 1;
// Inode records gained the allocated blocks in version 2; version 1 ones
// still decode, with the blocks not known.
constexpr uint8_t kInodeVersion = 2;
constexpr uint64_t kBlocksNotKnown = UINT64_MAX;

class Writer {
 public:
  explicit Writer(uint8_t version) { u8(version); }
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i64(int64_t v) { le(static_cast<uint64_t>(v), 8); }
  void time(const Timespec& t) {
    i64(t.sec);
    u32(t.nsec);
  }
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  void servers(const std::vector<ServerId>& ids) {
    u32(static_cast<uint32_t>(ids.size()));
    for (ServerId id : ids) u32(id.value);
  }
  std::string take() { return std::move(out_); }

 private:
  void le(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string out_;
};

// Reads fields in order; after the first failure every read fails, so a
// decoder checks ok() once at the end.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool version() { return u8() == kRecordVersion && ok_; }
  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  int64_t i64() { return static_cast<int64_t>(le(8)); }
  Timespec time() {
    Timespec t;
    t.sec = i64();
    t.nsec = u32();
    return t;
  }
  std::string str() {
    uint32_t n = u32();
    if (!ok_ || n > in_.size()) {
      ok_ = false;
      return {};
    }
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }
  std::vector<ServerId> servers() {
    uint32_t n = u32();
    if (!ok_ || n > in_.size() / 4) {
      ok_ = false;
      return {};
    }
    std::vector<ServerId> ids;
    ids.reserve(n);
    for (uint32_t i = 0; i < n; ++i) ids.emplace_back(u32());
    return ids;
  }
  // True when every read succeeded and nothing is left over.
  bool done() const { return ok_ && in_.empty(); }

 private:
  uint64_t le(size_t bytes) {
    if (!ok_ || in_.size() < bytes) {
      ok_ = false;
      return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(in_[i])} << (8 * i);
    in_.remove_prefix(bytes);
    return v;
  }
  std::string_view in_;
  bool ok_ = true;
};

void be(std::string& out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

Status corrupt(std::string_view what) { return Status(Errc::corrupt, "bad " + std::string(what) + " record"); }

}  // namespace

std::string inode_key(InodeId ino) {
  std::string k;
  be(k, ino.value);
  return k;
}

std::string dentry_prefix(InodeId dir) { return inode_key(dir); }

std::string dentry_key(InodeId dir, std::string_view name) {
  std::string k = inode_key(dir);
  k.append(name);
  return k;
}

std::string seq_key(InodeId dir, uint64_t seq) {
  std::string k = inode_key(dir);
  be(k, seq);
  return k;
}

std::string xattr_prefix(InodeId ino) { return inode_key(ino); }

std::string xattr_key(InodeId ino, std::string_view name) { return dentry_key(ino, name); }

std::string server_key(uint32_t id) {
  std::string k;
  be(k, id);
  return k;
}

Result<InodeId> decode_inode_key(std::string_view key) {
  if (key.size() != 8) return corrupt("inode key");
  uint64_t v = 0;
  for (char c : key) v = (v << 8) | static_cast<uint8_t>(c);
  return InodeId(v);
}

Result<uint64_t> decode_seq_key(std::string_view key) {
  if (key.size() != 16) return corrupt("directory order key");
  auto seq = decode_inode_key(key.substr(8));
  if (!seq) return seq.status();
  return seq->value;
}

std::string encode_u64(uint64_t value) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  return out;
}

Result<uint64_t> decode_u64(std::string_view bytes) {
  if (bytes.size() != 8) return corrupt("counter");
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
  return v;
}

std::string encode_inode(const InodeRecord& r) {
  Writer w(kInodeVersion);
  const Attr& a = r.attr;
  w.u32(a.mode);
  w.u32(a.uid);
  w.u32(a.gid);
  w.u64(a.size);
  w.u32(a.nlink);
  w.u32(a.rdev);
  w.time(a.atime);
  w.time(a.mtime);
  w.time(a.ctime);
  w.u64(a.layout.stripe_size);
  w.servers(a.layout.servers);
  w.u64(r.parent.value);
  w.u64(r.next_seq);
  w.u64(r.policy.stripe_size);
  w.u32(r.policy.stripe_count);
  w.servers(r.policy.servers);
  w.str(r.target);
  w.u64(r.attr.blocks.value_or(kBlocksNotKnown));
  return w.take();
}

Result<InodeRecord> decode_inode(InodeId ino, std::string_view bytes) {
  Reader rd(bytes);
  const uint8_t version = rd.u8();
  if (version != kRecordVersion && version != kInodeVersion) return corrupt("inode");
  InodeRecord r;
  Attr& a = r.attr;
  a.ino = ino;
  a.mode = rd.u32();
  a.uid = rd.u32();
  a.gid = rd.u32();
  a.size = rd.u64();
  a.nlink = rd.u32();
  a.rdev = rd.u32();
  a.atime = rd.time();
  a.mtime = rd.time();
  a.ctime = rd.time();
  a.layout.stripe_size = rd.u64();
  a.layout.servers = rd.servers();
  r.parent = InodeId(rd.u64());
  r.next_seq = rd.u64();
  r.policy.stripe_size = rd.u64();
  r.policy.stripe_count = rd.u32();
  r.policy.servers = rd.servers();
  r.target = rd.str();
  if (version == kInodeVersion)
    if (const uint64_t blocks = rd.u64(); blocks != kBlocksNotKnown) a.blocks = blocks;
  if (!rd.done()) return corrupt("inode");
  return r;
}

std::string encode_dentry(const DentryRecord& r) {
  Writer w(kRecordVersion);
  w.u64(r.ino.value);
  w.u32(r.type);
  w.u64(r.seq);
  return w.take();
}

Result<DentryRecord> decode_dentry(std::string_view bytes) {
  Reader rd(bytes);
  if (!rd.version()) return corrupt("directory entry");
  DentryRecord r;
  r.ino = InodeId(rd.u64());
  r.type = rd.u32();
  r.seq = rd.u64();
  if (!rd.done()) return corrupt("directory entry");
  return r;
}

std::string encode_seq(const SeqRecord& r) {
  Writer w(kRecordVersion);
  w.u64(r.ino.value);
  w.u32(r.type);
  w.str(r.name);
  return w.take();
}

Result<SeqRecord> decode_seq(std::string_view bytes) {
  Reader rd(bytes);
  if (!rd.version()) return corrupt("directory order");
  SeqRecord r;
  r.ino = InodeId(rd.u64());
  r.type = rd.u32();
  r.name = rd.str();
  if (!rd.done()) return corrupt("directory order");
  return r;
}

std::string encode_orphan(const OrphanRecord& r) {
  Writer w(kRecordVersion);
  w.u8(r.held ? 1 : 0);
  return w.take();
}

Result<OrphanRecord> decode_orphan(std::string_view bytes) {
  Reader rd(bytes);
  if (!rd.version()) return corrupt("orphan");
  uint8_t held = rd.u8();
  if (!rd.done() || held > 1) return corrupt("orphan");
  return OrphanRecord{held == 1};
}

std::string encode_server(const StoredServer& s) {
  Writer w(kRecordVersion);
  w.u32(s.id);
  w.str(s.address);
  w.u64(s.capacity_bytes);
  w.u64(s.free_bytes);
  return w.take();
}

Result<StoredServer> decode_server(std::string_view bytes) {
  Reader rd(bytes);
  if (!rd.version()) return corrupt("server");
  StoredServer s;
  s.id = rd.u32();
  s.address = rd.str();
  s.capacity_bytes = rd.u64();
  s.free_bytes = rd.u64();
  if (!rd.done()) return corrupt("server");
  return s;
}

}  // namespace pvfs::mds
