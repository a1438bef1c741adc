// The storage service's space: the reserve kept for the redirect log (data
// writes refused under it), reserving and punching object ranges
// (fallocate), SEEK_DATA / SEEK_HOLE over an object, and the blocks an object
// occupies. Redirected ranges count as data: their bytes are in fragments on
// other servers. Disk work on the blocking pool; the redirect table is read
// on the network thread only.
#include <algorithm>

#include <fmt/format.h>

#include "server/storage_service.h"
#include "shared/rpc/blocking.h"

namespace pvfs {

namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

// The range of `ranges` (in order, not overlapping) that holds `at`, or end().
Ranges::const_iterator range_holding(const Ranges& ranges, uint64_t at) {
  return std::find_if(ranges.begin(), ranges.end(),
                      [at](const auto& r) { return r.first <= at && at < r.second; });
}

}  // namespace

Ranges StorageService::remote_ranges(ObjectId object, uint64_t from) const {
  Ranges out;
  if (!table_.find(object)) return out;
  for (const auto& seg : table_.query(object, from, redirect::kEnd))
    if (!seg.where.local) out.emplace_back(seg.begin, seg.end);
  return out;
}

Status StorageService::admit_data(uint64_t bytes) {
  const uint64_t reserve = uint64_t{config_.storage_reserve_mb} << 20;
  if (reserve == 0 || bytes == 0) return Status{};
  // statvfs on the network thread: it reads the file system's counters,
  // no disk.
  const TimePoint now = clock_.now();
  if (!space_measured_ || now - *space_measured_ >= std::chrono::milliseconds(100)) {
    space_measured_ = now;
    auto space = store_.space();
    // Unknown: the write itself will say whether it fits.
    space_free_ = space ? space->free_bytes : UINT64_MAX;
  }
  if (space_free_ >= reserve + bytes) return Status{};
  ++refused_no_room_;
  space_measured_.reset();  // the next write looks again
  return Status(Errc::no_space,
                fmt::format("{:.1f} MiB free on this server's disk, under its reserve of {} MiB",
                            static_cast<double>(space_free_) / (1 << 20), config_.storage_reserve_mb));
}

asio::awaitable<Status> StorageService::allocate(ObjectId object, uint64_t offset, uint64_t length,
                                                 bool punch) {
  if (length == 0 && punch) co_return Status{};
  if (offset > redirect::kEnd - length)
    co_return Status(Errc::invalid_argument, "range past the largest offset");
  auto gate = co_await gates_.enter_shared(object);
  Status st = co_await rpc::run_blocking(disk_pool_,
                                         [&] { return store_.allocate(object, offset, length, punch); });
  if (!st.ok() || !punch) co_return st;
  // The punched range reads as zeros, also where it had been redirected.
  if (table_.overlaps_remote(object, offset, offset + length))
    st = record(object,
                redirect::Entry{table_.next_seq(), offset, offset + length, redirect::Location::home()});
  co_return st;
}

asio::awaitable<Result<std::optional<uint64_t>>> StorageService::seek(ObjectId object, uint64_t offset,
                                                                      bool hole) {
  const Ranges remote = remote_ranges(object, offset);
  co_return co_await rpc::run_blocking(disk_pool_, [&]() -> Result<std::optional<uint64_t>> {
    if (!hole) {
      auto local = store_.seek(object, offset, false);
      if (!local) return local.status();
      if (remote.empty()) return *local;
      const uint64_t first_remote = std::max(remote.front().first, offset);
      return std::optional<uint64_t>(local->has_value() ? std::min(**local, first_remote) : first_remote);
    }
    // The first offset that is neither redirected nor data in the local file.
    uint64_t at = offset;
    for (;;) {
      if (auto in = range_holding(remote, at); in != remote.end()) {
        at = in->second;
        if (at == redirect::kEnd) return std::optional<uint64_t>(at);
        continue;
      }
      auto local = store_.seek(object, at, true);
      if (!local) return local.status();
      const uint64_t found = local->value_or(at);
      auto next = range_holding(remote, found);
      if (next == remote.end()) return std::optional<uint64_t>(found);
      at = next->second;
    }
  });
}

asio::awaitable<Result<ObjectStat>> StorageService::stat(ObjectId object) {
  // Redirected bytes occupy space elsewhere; count them as this object's.
  uint64_t remote_bytes = 0;
  for (const auto& [begin, end] : remote_ranges(object, 0)) remote_bytes += end - begin;
  auto st = co_await rpc::run_blocking(disk_pool_, [&] { return store_.stat(object); });
  if (!st) co_return st.status();
  st->blocks += (remote_bytes + 511) / 512;
  co_return st;
}

}  // namespace pvfs
