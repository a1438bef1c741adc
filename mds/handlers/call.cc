#include "mds/handlers/call.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include "shared/request_limits.h"
#include "shared/rpc/convert.h"

namespace pvfs::mds::handlers {

Status check_file_size(uint64_t size) {
  if (size <= kMaxFileBytes) return Status{};
  return Status(Errc::too_big, fmt::format("size {} is past the largest file size", size));
}

Result<NamespaceStore*> Call::at(uint64_t ino) const {
  NamespaceStore* s = mds.filesets().find(InodeId(ino));
  if (!s) return Status(Errc::not_found, fmt::format("no file set {} here", InodeId(ino).fileset().value));
  return s;
}

Status Call::attr_or(Result<Attr> attr) {
  if (!attr) return attr.status();
  if (S_ISREG(attr->mode)) attr->written_elsewhere = mds.written_by_other(attr->ino, conn.get());
  rpc::to_wire(*attr, reply.initAttr());
  return Status{};
}

void Call::add_parent_attr(uint64_t parent) {
  auto s = at(parent);
  if (!s) return;
  auto attr = (*s)->getattr(InodeId(parent));
  if (attr && S_ISDIR(attr->mode)) rpc::to_wire(*attr, reply.initParentAttr());
}

Status Call::none_or(Status st) {
  if (!st.ok()) return st;
  reply.setNone();
  return Status{};
}

}  // namespace pvfs::mds::handlers
