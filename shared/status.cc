#include "shared/status.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace pvfs {

namespace {
struct ErrcInfo {
  std::string_view name;
  int err;
};

constexpr ErrcInfo kInfo[] = {
    {"ok", 0},
    {"not found", ENOENT},
    {"exists", EEXIST},
    {"directory not empty", ENOTEMPTY},
    {"not a directory", ENOTDIR},
    {"is a directory", EISDIR},
    {"invalid argument", EINVAL},
    {"name too long", ENAMETOOLONG},
    {"cross-device link", EXDEV},
    {"no space left", ENOSPC},
    {"I/O error", EIO},
    {"timed out", ETIMEDOUT},
    {"unavailable", EHOSTDOWN},
    {"corrupt", EUCLEAN},
    {"stale map", ESTALE},
    {"permission denied", EACCES},
    {"operation not permitted", EPERM},
    {"too many links", EMLINK},
    {"read-only file system", EROFS},
    {"no data", ENODATA},
    {"result out of range", ERANGE},
    {"not supported", EOPNOTSUPP},
    {"busy", EBUSY},
    {"file too big", EFBIG},
    {"too many symbolic links", ELOOP},
    {"bad handle", EBADF},
    {"try again", EAGAIN},
    {"stale file handle", ESTALE},
};
static_assert(std::size(kInfo) == static_cast<size_t>(Errc::kLast) + 1);
}  // namespace

std::string_view errc_name(Errc code) {
  auto i = static_cast<size_t>(code);
  return i < std::size(kInfo) ? kInfo[i].name : "unknown error";
}

int errc_to_errno(Errc code) {
  auto i = static_cast<size_t>(code);
  return i < std::size(kInfo) ? kInfo[i].err : EIO;
}

Errc errno_to_errc(int err) {
  if (err == 0) return Errc::ok;
  for (size_t i = 1; i < std::size(kInfo); ++i)
    if (kInfo[i].err == err) return static_cast<Errc>(i);
  switch (err) {
    case EDQUOT: return Errc::no_space;
    case ECONNREFUSED:
    case ECONNRESET:
    case EPIPE:
    case ENOTCONN:
    case EHOSTUNREACH: return Errc::unavailable;
    default: return Errc::io;
  }
}

std::string Status::to_string() const {
  std::string out(errc_name(code_));
  if (!detail_.empty()) {
    out += ": ";
    out += detail_;
  }
  return out;
}

void check_failed(const char* file, int line, const char* what) {
  std::fprintf(stderr, "pvfs: invariant broken at %s:%d: %s\n", file, line, what);
  std::abort();
}

}  // namespace pvfs
