#include "server/calibration.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace pvfs {

Result<elevator::BandwidthTable> measure_bandwidth(const std::filesystem::path& data_dir,
                                                   std::chrono::milliseconds budget) {
  const auto scratch = data_dir / "calibrate.tmp";
  std::vector<elevator::BandwidthPoint> points;
  constexpr uint64_t kMaxBytes = uint64_t{8} << 20;
  void* raw = nullptr;
  if (posix_memalign(&raw, 4096, 4 << 20) != 0) return Status(Errc::no_space, "calibration buffer");
  std::unique_ptr<void, decltype(&std::free)> buffer(raw, &std::free);
  std::memset(raw, 0x5a, 4 << 20);
  for (uint64_t record : kCalibratedRecordSizes) {
    const int fd = ::open(scratch.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return Status::from_errno(errno, fmt::format("calibration: open {}", scratch.string()));
    const auto start = std::chrono::steady_clock::now();
    uint64_t done = 0;
    while (done < kMaxBytes && std::chrono::steady_clock::now() - start < budget) {
      ssize_t n = ::pwrite(fd, raw, record, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        ::close(fd);
        ::unlink(scratch.c_str());
        return Status::from_errno(err, "calibration: write");
      }
      done += static_cast<uint64_t>(n);
    }
    ::fdatasync(fd);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ::close(fd);
    points.push_back({record, std::max<uint64_t>(1, static_cast<uint64_t>(done / std::max(seconds, 1e-6)))});
  }
  ::unlink(scratch.c_str());
  // Larger records are never slower per byte on a real device; smooth out noise.
  for (size_t i = 1; i < points.size(); ++i)
    points[i].bytes_per_second = std::max(points[i].bytes_per_second, points[i - 1].bytes_per_second);
  return elevator::BandwidthTable::make(std::move(points));
}

Result<elevator::BandwidthTable> load_or_calibrate(const std::filesystem::path& data_dir, bool force) {
  const auto file = data_dir / "bandwidth";
  if (!force) {
    std::ifstream in(file);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      auto table = elevator::BandwidthTable::from_text(text.str());
      if (!table)
        return Status(Errc::corrupt, fmt::format("{}: {} (delete it or run pvfs-server --calibrate)",
                                                 file.string(), table.status().detail()));
      return table;
    }
  }
  auto table = measure_bandwidth(data_dir, std::chrono::milliseconds(20));
  if (!table) return table;
  const auto tmp = data_dir / "bandwidth.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << table->to_text() << "\n";
    if (!out) return Status(Errc::io, fmt::format("cannot write {}", tmp.string()));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) return Status(Errc::io, fmt::format("cannot write {}: {}", file.string(), ec.message()));
  return table;
}

}  // namespace pvfs
