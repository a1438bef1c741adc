#include "shared/ready_file.h"

#include <cerrno>
#include <fstream>

#include <fmt/format.h>

namespace pvfs {

Status write_ready_file(const std::filesystem::path& path, uint16_t port) {
  auto tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << "\n";
    if (!out) return Status(Errc::io, fmt::format("cannot write ready file {}", tmp.string()));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status(Errc::io, fmt::format("cannot write ready file {}: {}", path.string(), ec.message()));
  return {};
}

}  // namespace pvfs
