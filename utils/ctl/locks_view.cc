#include "utils/ctl/locks_view.h"

#include <algorithm>

#include <fmt/format.h>

#include "shared/proto/mds.capnp.h"
#include "utils/common/call_once.h"
#include "utils/ctl/ctl_cluster.h"
#include "utils/ctl/ctl_format.h"

namespace pvfs {

namespace mp = proto::mds;

namespace {

LockRow row_of(uint32_t member, mp::Reply::LockInfo::Reader l) {
  return {member,      l.getIno(),  l.getClient(), l.getOwner(),  l.getFlock(), l.getExclusive(),
          l.getFirst(), l.getLast(), l.getPid(),    l.getWaiter(), l.getWaitMs()};
}

struct Answer {
  uint32_t lease_ms = 0;
  std::vector<LockRow> held, waiting;
};

Result<Answer> answer_of(uint32_t member, mp::Reply::Reader body) {
  if (!body.isLocks()) return Status(Errc::io, "unexpected reply to lockStatus");
  auto s = body.getLocks();
  Answer a;
  a.lease_ms = s.getLeaseMs();
  for (auto l : s.getHeld()) a.held.push_back(row_of(member, l));
  for (auto l : s.getWaiters()) a.waiting.push_back(row_of(member, l));
  return a;
}

std::string range_cell(const LockRow& r) {
  if (r.flock) return "whole file";
  if (r.last == UINT64_MAX) return fmt::format("{}-EOF", r.first);
  return fmt::format("{}-{}", r.first, r.last);
}

std::string kind_cell(const LockRow& r) {
  return fmt::format("{} {}", r.flock ? "flock" : "posix", r.exclusive ? "write" : "read");
}

}  // namespace

Result<LocksView> locks_status(const Config& config, const Secret& key, std::chrono::milliseconds timeout,
                               uint64_t ino) {
  std::vector<DaemonEntry> members = config.mds;
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::vector<ctl::DaemonTarget> targets;
  for (const auto& m : members) targets.push_back({fmt::format("mds {}", m.id), DaemonKind::mds, m.id, m.address});
  auto answers = ctl::ask_all<Answer>(targets, [&](const ctl::DaemonTarget& t) {
    return call_once<Answer>(
        t.address, key, timeout,
        [&](rpc::OutMessage& out) {
          auto req = out.init_body<mp::Request>();
          req.initCaller();
          req.setLockStatus(ino);
        },
        [&](rpc::InMessage& in) { return answer_of(t.id, in.body<mp::Reply>()); });
  });
  LocksView v;
  bool any = false;
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i]) {
      // The members that do not own the file's set say so: not a failure.
      if (ino != 0 && answers[i].code() == Errc::stale_map) continue;
      v.unreachable.push_back(fmt::format("mds {}: {}", members[i].id, answers[i].status().to_string()));
      continue;
    }
    any = true;
    v.lease_ms = answers[i]->lease_ms;
    v.held.insert(v.held.end(), answers[i]->held.begin(), answers[i]->held.end());
    v.waiting.insert(v.waiting.end(), answers[i]->waiting.begin(), answers[i]->waiting.end());
  }
  if (!any)
    return Status(Errc::unavailable, v.unreachable.empty() ? "no metadata server answered" : v.unreachable.front());
  return v;
}

std::string render_locks(const LocksView& v, const std::string& path) {
  std::string out = path.empty() ? fmt::format("locks of the cluster (client lease {} ms)\n", v.lease_ms)
                                 : fmt::format("locks of {} (client lease {} ms)\n", path, v.lease_ms);
  out += "\nheld:\n";
  if (v.held.empty()) {
    out += "  (none)\n";
  } else {
    std::vector<std::vector<std::string>> rows = {{"inode", "lock", "range", "client", "owner", "pid", "mds"}};
    for (const auto& r : v.held)
      rows.push_back({fmt::format("{:x}", r.ino), kind_cell(r), range_cell(r), fmt::format("{:016x}", r.client),
                      fmt::format("{:x}", r.owner), std::to_string(r.pid), std::to_string(r.member)});
    out += ctl::table(rows, {5});
  }
  out += "\nwaiting, in arrival order:\n";
  if (v.waiting.empty()) {
    out += "  (none)\n";
  } else {
    std::vector<std::vector<std::string>> rows = {
        {"inode", "lock", "range", "client", "owner", "pid", "waiting", "mds"}};
    for (const auto& r : v.waiting)
      rows.push_back({fmt::format("{:x}", r.ino), kind_cell(r), range_cell(r), fmt::format("{:016x}", r.client),
                      fmt::format("{:x}", r.owner), std::to_string(r.pid), fmt::format("{} ms", r.wait_ms),
                      std::to_string(r.member)});
    out += ctl::table(rows, {5, 6});
  }
  for (const auto& u : v.unreachable) out += fmt::format("\nnot answering: {}\n", u);
  return out;
}

}  // namespace pvfs
