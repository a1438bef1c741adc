// Room on the metadata server's disk. LMDB copies every page it changes,
// so a removal or a size update needs a little free space too: on a disk
// filled by creates, `rm` would fail just when it is needed. Below
// [mds_tuning] reserve_mb free, requests that add to the namespace
// (handlers::Entry::needs_room) are refused with no_space before they run,
// and the rest of the disk is left to those that remove, rename or change
// what exists, as ext4 keeps blocks for root. A commit that still finds
// the disk full fails with no_space (lmdb::Txn::commit), nothing applied.
// Runs on the network thread.
#include <sys/statvfs.h>

#include <fmt/format.h>

#include "mds/mds_service.h"
#include "shared/log.h"

namespace pvfs::mds {

namespace {

// How long a measurement of the free space stands. Creates at 10,000 a
// second grow the database by a few MiB a second at most.
constexpr std::chrono::milliseconds kSpaceCheck{100};

std::string mib_text(uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

std::optional<uint64_t> MdsService::data_free_bytes() {
  const TimePoint now = clock_.now();
  if (space_.measured && now - *space_.measured < kSpaceCheck) return space_.free;
  space_.measured = now;
  struct statvfs vfs {};
  if (::statvfs(filesets_.data_dir().c_str(), &vfs) == 0)
    space_.free = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  else
    space_.free.reset();
  return space_.free;
}

Status MdsService::admit_growth() {
  const uint64_t reserve = reserve_bytes();
  if (reserve == 0) return Status{};
  const std::optional<uint64_t> free = data_free_bytes();
  if (!free || *free >= reserve) {
    if (space_.low && free)
      spdlog::info("data directory {} has {} free again: new names are accepted", filesets_.data_dir().string(),
                   mib_text(*free));
    space_.low = false;
    return Status{};
  }
  if (!space_.low)
    spdlog::warn("data directory {} has {} free, under the reserve of {} ([mds_tuning] reserve_mb): new "
                 "names are refused with ENOSPC until there is room; removals go on",
                 filesets_.data_dir().string(), mib_text(*free), mib_text(reserve));
  space_.low = true;
  ++space_.refused;
  return Status(Errc::no_space, fmt::format("the metadata server's disk has {} free, under its reserve of {}; "
                                            "remove files or add room",
                                            mib_text(*free), mib_text(reserve)));
}

}  // namespace pvfs::mds
