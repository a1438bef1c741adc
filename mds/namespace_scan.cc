// NamespaceStore's listing of regular files for fsck: one read transaction
// walks the inodes database from a given inode on, in key (inode) order.
#include <sys/stat.h>

#include "mds/namespace_store.h"
#include "mds/namespace_txn.h"

namespace pvfs::mds {

using detail::NsTxn;

Result<FileScan> NamespaceStore::scan_files(InodeId after, uint32_t max) {
  if (max == 0) return Status(Errc::invalid_argument, "scan of 0 files");
  return detail::with_read(*t_, [&](NsTxn& tx) -> Result<FileScan> {
    FileScan out;
    out.eof = true;
    Status bad;
    if (after.value == UINT64_MAX) return out;
    const std::string from = inode_key(InodeId(after.value + 1));
    Status s = tx.raw().scan(tx.tables().inodes, {}, from, [&](std::string_view key, std::string_view value) {
      auto ino = decode_inode_key(key);
      if (!ino) {
        bad = ino.status();
        return false;
      }
      auto record = decode_inode(*ino, value);
      if (!record) {
        bad = record.status();
        return false;
      }
      if (!S_ISREG(record->attr.mode)) return true;
      if (out.files.size() == max) {
        out.eof = false;
        return false;
      }
      out.files.push_back(FileInfo{*ino, record->attr.size, record->attr.layout, false});
      return true;
    });
    if (!s.ok()) return s;
    if (!bad.ok()) return bad;
    for (FileInfo& f : out.files) {
      auto orphan = tx.raw().get(tx.tables().orphans, inode_key(f.ino));
      if (orphan) f.orphan = true;
      else if (orphan.code() != Errc::not_found) return orphan.status();
    }
    return out;
  });
}

}  // namespace pvfs::mds
