#include "policy/elevator/emulated_disk.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace pvfs::elevator {

EmulatedDisk::EmulatedDisk(EmulatedDiskOptions options) : options_(options) {
  PVFS_CHECK(options_.bytes_per_second > 0);
  PVFS_CHECK(options_.seek >= Nanos(0));
}

Nanos EmulatedDisk::transfer_time(uint64_t length_bytes) const {
  return from_seconds(static_cast<double>(length_bytes) /
                      static_cast<double>(options_.bytes_per_second));
}

Nanos EmulatedDisk::service_time(ObjectId object, uint64_t offset, uint64_t length_bytes) {
  const bool contiguous = head_ && head_->object == object && head_->offset == offset;
  Nanos t = transfer_time(length_bytes);
  if (!contiguous) {
    t = saturating_add(t, options_.seek);
    ++seeks_;
  }
  head_ = Head{object, offset + length_bytes};
  ++accesses_;
  bytes_ += length_bytes;
  busy_ = saturating_add(busy_, t);
  return t;
}

BandwidthTable modelled_bandwidth(const EmulatedDiskOptions& options,
                                  const std::vector<uint64_t>& record_sizes) {
  std::vector<BandwidthPoint> points;
  for (uint64_t r : record_sizes) {
    const double seconds = std::chrono::duration<double>(options.seek).count() +
                           static_cast<double>(r) / static_cast<double>(options.bytes_per_second);
    const double bw = static_cast<double>(r) / seconds;
    points.push_back({r, std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(bw)))});
  }
  auto table = BandwidthTable::make(std::move(points));
  PVFS_CHECK(table.ok());
  return std::move(table).value();
}

}  // namespace pvfs::elevator
