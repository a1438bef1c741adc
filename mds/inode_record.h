// The stored form of a namespace: database names, key layouts and a small
// versioned little-endian encoding of every record. Keys are big-endian so
// LMDB's byte order is numeric order. Decoding checks every length and
// returns Errc::corrupt instead of trusting the bytes. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mds/namespace_types.h"
#include "shared/status.h"

namespace pvfs::mds {

// Databases of one file set's environment and what they map.
inline constexpr char kMetaDb[] = "meta";          // kMeta* keys -> u64
inline constexpr char kInodesDb[] = "inodes";      // inode_key -> InodeRecord
inline constexpr char kDentriesDb[] = "dentries";  // dentry_key -> DentryRecord
inline constexpr char kSeqDb[] = "dirseq";         // seq_key -> SeqRecord (readdir order)
inline constexpr char kXattrsDb[] = "xattrs";      // xattr_key -> raw value
inline constexpr char kOrphansDb[] = "orphans";    // inode_key -> OrphanRecord
inline constexpr char kServersDb[] = "servers";    // server_key -> StoredServer
inline constexpr char kLocksDb[] = "locks";        // inode_key -> locks::LockTable::encode() text

inline constexpr char kMetaFormat[] = "format";    // kFormatVersion
inline constexpr char kMetaFileSet[] = "fileset";  // the file set this environment holds
inline constexpr char kMetaNextIno[] = "next_ino"; // local numbers below it may be in use
inline constexpr uint64_t kFormatVersion = 1;

// Readdir cookies of a directory's entries start here; the FUSE bridge uses
// 1 and 2 for "." and "..".
inline constexpr uint64_t kFirstSeq = 3;

// An inode as stored: its attributes and what only some types carry.
struct InodeRecord {
  Attr attr;
  InodeId parent;                 // directories: the one holding its entry (root: itself)
  uint64_t next_seq = kFirstSeq;  // directories: seq of the next entry inserted
  LayoutPolicy policy;            // directories: handed down to new files and subdirectories
  std::string target;             // symlinks
};

// A name in a directory (dentries database).
struct DentryRecord {
  InodeId ino;
  uint32_t type = 0;  // S_IFMT bits of the inode
  uint64_t seq = 0;   // key of the entry in the seq database, its readdir cookie
  bool operator==(const DentryRecord&) const = default;
};

// The same entry in readdir order (seq database).
struct SeqRecord {
  InodeId ino;
  uint32_t type = 0;
  std::string name;
  bool operator==(const SeqRecord&) const = default;
};

// An unlinked regular file; `held` while a client still has it open.
struct OrphanRecord {
  bool held = false;
};

// Keys: an inode number or directory is 8 bytes big-endian; entry and xattr
// names follow it as raw bytes, a readdir seq as 8 more big-endian bytes.
std::string inode_key(InodeId ino);
std::string dentry_key(InodeId dir, std::string_view name);
// Every entry of `dir` in the dentries database starts with this.
std::string dentry_prefix(InodeId dir);
std::string seq_key(InodeId dir, uint64_t seq);
std::string xattr_key(InodeId ino, std::string_view name);
// Every xattr of `ino` starts with this.
std::string xattr_prefix(InodeId ino);
std::string server_key(uint32_t id);
// Inverse of inode_key; corrupt unless 8 bytes.
Result<InodeId> decode_inode_key(std::string_view key);
// The seq of a seq_key; corrupt unless 16 bytes.
Result<uint64_t> decode_seq_key(std::string_view key);

// A meta counter, 8 bytes little-endian.
std::string encode_u64(uint64_t value);
// Errors: corrupt unless exactly 8 bytes.
Result<uint64_t> decode_u64(std::string_view bytes);

// Each decode_* fails with Errc::corrupt on a wrong version, a short or
// overlong record, or a length that points past the end.
std::string encode_inode(const InodeRecord& record);
// `ino` is the key the record was stored under (it is not repeated inside).
Result<InodeRecord> decode_inode(InodeId ino, std::string_view bytes);
std::string encode_dentry(const DentryRecord& record);
Result<DentryRecord> decode_dentry(std::string_view bytes);
std::string encode_seq(const SeqRecord& record);
Result<SeqRecord> decode_seq(std::string_view bytes);
std::string encode_orphan(const OrphanRecord& record);
Result<OrphanRecord> decode_orphan(std::string_view bytes);
std::string encode_server(const StoredServer& server);
Result<StoredServer> decode_server(std::string_view bytes);

}  // namespace pvfs::mds
