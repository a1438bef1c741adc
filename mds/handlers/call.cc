#include "mds/handlers/call.h"

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
  rpc::to_wire(*attr, reply.initAttr());
  return Status{};
}

Status Call::none_or(Status st) {
  if (!st.ok()) return st;
  reply.setNone();
  return Status{};
}

}  // namespace pvfs::mds::handlers
