// Directory leases on the MDS's side (mds/dir_lease_table.h): granting
// them (the leaseDir handler), and recalling them before a name is added to
// a leased directory for another client or before a file set leaves this
// member. A holder that does not answer a recall (paused, cut off, gone)
// is waited out: its lease ends `term` after it asked, by its own clock,
// and a little later by ours. Runs on the network thread.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>

#include <fmt/format.h>

#include "mds/mds_service.h"
#include "shared/log.h"
#include "shared/rpc/convert.h"

namespace pvfs::mds {

namespace mp = proto::mds;

namespace {

// The MDS counts a lease from when the request arrived, the client from
// when it sent it; this much longer again covers the two clocks' rates.
constexpr auto kLeaseMargin = std::chrono::milliseconds(50);

// Waits `d` of real time: the lease times come from the injected clock,
// whose epoch is not the steady clock's, so a wait is a duration.
asio::awaitable<void> wait_for(asio::io_context& io, Duration d) {
  if (d <= Duration::zero()) co_return;
  asio::steady_timer t(io, d);
  asio::error_code ec;
  co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

// In the data directory while this member may have leases out: a restart
// that finds it waits a term before adding names.
constexpr const char* kLeasesMarker = "dir-leases-given";

}  // namespace

std::optional<InodeId> dir_gaining_name(mp::Request::Reader req) {
  switch (req.which()) {
    case mp::Request::MKNOD: return InodeId(req.getMknod().getParent());
    case mp::Request::MKDIR: return InodeId(req.getMkdir().getParent());
    case mp::Request::SYMLINK: return InodeId(req.getSymlink().getParent());
    case mp::Request::LINK: return InodeId(req.getLink().getNewParent());
    case mp::Request::RENAME: return InodeId(req.getRename().getNewParent());
    default: return std::nullopt;
  }
}

std::chrono::milliseconds MdsService::dir_lease_term() const {
  const std::chrono::milliseconds asked(config_.dir_lease_ms);
  if (config_.mds.size() <= 1) return asked;
  const auto room = std::chrono::milliseconds(config_.mds_dead_after_ms) -
                    std::chrono::milliseconds(config_.mds_lease()) - kLeaseMargin;
  if (room <= kLeaseMargin) return std::chrono::milliseconds(0);
  return std::min(asked, std::chrono::duration_cast<std::chrono::milliseconds>(room));
}

std::filesystem::path MdsService::leases_marker() const { return filesets_.data_dir() / kLeasesMarker; }

std::optional<InodeId> MdsService::leased_dir_replaced(mp::Request::Reader req) {
  if (dir_leases_.empty()) return std::nullopt;
  uint64_t parent = 0;
  std::string_view name;
  switch (req.which()) {
    case mp::Request::RMDIR:
      parent = req.getRmdir().getParent();
      name = rpc::text(req.getRmdir().getName());
      break;
    case mp::Request::RENAME:
      parent = req.getRename().getNewParent();
      name = rpc::text(req.getRename().getNewName());
      break;
    case mp::Request::MAKE_FILE_SET: {
      const InodeId dir(req.getMakeFileSet().getIno());
      if (dir_leases_.leased(dir, clock_.now())) return dir;
      return std::nullopt;
    }
    default: return std::nullopt;
  }
  NamespaceStore* store = filesets_.find(InodeId(parent));
  if (!store) return std::nullopt;
  auto found = store->lookup(Caller{}, InodeId(parent), name);
  if (!found || !S_ISDIR(found->mode) || !dir_leases_.leased(found->ino, clock_.now())) return std::nullopt;
  return found->ino;
}

void MdsService::check_leases_marker() {
  // A restart forgets the leases given before it, and their holders may
  // not have seen the connection close yet: if this member gave any, names
  // wait for a term (in real time: timers run on the steady clock).
  std::error_code ec;
  if (!std::filesystem::remove(leases_marker(), ec)) return;
  names_wait_until_ = SteadyClock::now() + dir_lease_term() + kLeaseMargin;
  spdlog::info("directory leases were given before this start: names are added from {} ms on",
               (dir_lease_term() + kLeaseMargin).count());
}

Status MdsService::dir_leased(InodeId dir, const std::shared_ptr<rpc::Connection>& conn) {
  if (!leases_marked_) {
    std::FILE* f = std::fopen(leases_marker().c_str(), "w");
    if (!f || std::fclose(f) != 0)
      return Status(Errc::io, fmt::format("creating {}: {}", leases_marker().string(), std::strerror(errno)));
    leases_marked_ = true;
  }
  const TimePoint now = clock_.now();
  dir_leases_.grant(dir, conn.get(), conn, now + dir_lease_term() + kLeaseMargin, now);
  ++dir_leases_granted_;
  return Status{};
}

bool MdsService::dir_lease_renewed(InodeId dir, const rpc::Connection* conn) {
  const TimePoint now = clock_.now();
  if (!dir_leases_.renew(dir, conn, now + dir_lease_term() + kLeaseMargin, now)) return false;
  ++dir_leases_renewed_;
  return true;
}

asio::awaitable<void> MdsService::before_adding_name() {
  if (SteadyClock::now() < names_wait_until_) co_await wait_for(io_, names_wait_until_ - SteadyClock::now());
}

asio::awaitable<void> MdsService::recall_dir_leases(InodeId dir, const rpc::Connection* except) {
  if (!dir_leases_.leased(dir, clock_.now())) co_return;
  for (auto& lease : dir_leases_.take_others(dir, except, clock_.now()))
    co_await recall(dir, std::move(lease));
}

asio::awaitable<void> MdsService::recall_fileset_leases(FileSetId set) {
  for (auto& [dir, lease] : dir_leases_.take_fileset(set, clock_.now())) co_await recall(dir, std::move(lease));
}

asio::awaitable<void> MdsService::recall(InodeId dir, DirLeaseTable::Lease lease) {
  ++dir_leases_recalled_;
  const Duration left = lease.until - clock_.now();
  if (left <= Duration::zero()) co_return;
  // Waited for in real time (timers run on the steady clock).
  const TimePoint deadline = SteadyClock::now() + left;
  auto conn = std::static_pointer_cast<rpc::Connection>(lease.handle.lock());
  if (conn && conn->is_open()) {
    rpc::OutMessage out;
    auto req = out.init_body<mp::Request>();
    req.initCaller();
    req.setRecallDirLease(dir.value);
    auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(left) + std::chrono::milliseconds(1);
    auto reply = co_await conn->call(out, {}, timeout);
    if (reply) co_return;
    spdlog::debug("recalling the lease on directory {:#x}: {}; waiting it out", dir.value, reply.status().to_string());
  }
  ++dir_leases_waited_out_;
  co_await wait_for(io_, deadline - SteadyClock::now());
}

}  // namespace pvfs::mds
