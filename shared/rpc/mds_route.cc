#include "shared/rpc/mds_route.h"

namespace pvfs::rpc {

namespace mp = proto::mds;

std::optional<FileSetId> route_of(mp::Request::Reader req) {
  auto set = [](uint64_t ino) { return std::optional<FileSetId>(InodeId(ino).fileset()); };
  switch (req.which()) {
    case mp::Request::LOOKUP: return set(req.getLookup().getParent());
    case mp::Request::GETATTR: return set(req.getGetattr().getIno());
    case mp::Request::SETATTR: return set(req.getSetattr().getIno());
    case mp::Request::MKNOD: return set(req.getMknod().getParent());
    case mp::Request::MKDIR: return set(req.getMkdir().getParent());
    case mp::Request::UNLINK: return set(req.getUnlink().getParent());
    case mp::Request::RMDIR: return set(req.getRmdir().getParent());
    case mp::Request::SYMLINK: return set(req.getSymlink().getParent());
    case mp::Request::READLINK: return set(req.getReadlink().getIno());
    case mp::Request::RENAME: return set(req.getRename().getParent());
    case mp::Request::LINK: return set(req.getLink().getNewParent());
    case mp::Request::READDIR: return set(req.getReaddir().getIno());
    case mp::Request::SETXATTR: return set(req.getSetxattr().getIno());
    case mp::Request::GETXATTR: return set(req.getGetxattr().getIno());
    case mp::Request::LISTXATTR: return set(req.getListxattr().getIno());
    case mp::Request::REMOVEXATTR: return set(req.getRemovexattr().getIno());
    case mp::Request::ACCESS: return set(req.getAccess().getIno());
    case mp::Request::OPEN: return set(req.getOpen().getIno());
    case mp::Request::UPDATE_SIZE: return set(req.getUpdateSize().getIno());
    case mp::Request::SET_LAYOUT: return set(req.getSetLayout().getIno());
    case mp::Request::GET_LAYOUT_POLICY: return set(req.getGetLayoutPolicy().getIno());
    case mp::Request::RELEASE_ORPHAN: return set(req.getReleaseOrphan().getIno());
    case mp::Request::HOLD_ORPHAN: return set(req.getHoldOrphan().getIno());
    case mp::Request::APPEND_AT: return set(req.getAppendAt().getIno());
    case mp::Request::LEASE_DIR: return set(req.getLeaseDir().getIno());
    case mp::Request::OPEN_FILES: {
      auto inos = req.getOpenFiles().getInos();
      return inos.size() == 0 ? std::nullopt : set(inos[0]);
    }
    case mp::Request::MAKE_FILE_SET: return set(req.getMakeFileSet().getIno());
    case mp::Request::SYNC_FILE_SET: return set(req.getSyncFileSet().getIno());
    case mp::Request::LOCK: return set(req.getLock().getIno());
    case mp::Request::LOCK_STATUS:
      return req.getLockStatus() == 0 ? std::nullopt : set(req.getLockStatus());
    default: return std::nullopt;
  }
}

}  // namespace pvfs::rpc
