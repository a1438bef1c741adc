// Directory leases on the client's side (fs/dir_lease_cache.h): asking the
// MDS for one after a lookup found nothing, and answering its recalls. A
// lease lets lookup_entry() answer "no such entry" without a round trip,
// which is what the kernel asks before every create.
#include <cstring>

#include "fs/client_impl.h"
#include "shared/proto/mds.capnp.h"

namespace pvfs {

namespace mp = proto::mds;

namespace {

// Trimmed from each lease, against the two clocks' rates and the time the
// answer takes to be handled.
constexpr auto kLeaseSafety = std::chrono::milliseconds(20);

asio::awaitable<void> ask_dir_lease(Client::Impl& impl, std::shared_ptr<bool> alive, Credentials who,
                                    InodeId dir) {
  const TimePoint sent = SteadyClock::now();
  const uint64_t ticket = impl.dir_leases.asking(dir, sent);
  rpc::OutMessage out;
  impl.begin_mds(out, who).initLeaseDir().setIno(dir.value);
  auto reply = co_await impl.call_mds(out, true);
  if (!*alive) co_return;
  if (!reply) {
    // Off, too large, or not understood (an older MDS): not again for a while.
    const bool lasting = reply.code() == Errc::not_supported || reply.code() == Errc::too_big;
    const Duration wait = lasting ? Duration(DirLeaseCache::kRetryAfterRefusal)
                                  : Duration(DirLeaseCache::kRetryAfterRecall);
    impl.dir_leases.refused(dir, ticket, SteadyClock::now() + wait);
    co_return;
  }
  auto lease = (*reply)->body<mp::Reply>().getDirLease();
  auto key_bytes = lease.getKey();
  NameHashKey key{};
  const auto term = std::chrono::milliseconds(lease.getTermMs());
  if (key_bytes.size() != key.size() || term <= kLeaseSafety) {
    impl.dir_leases.refused(dir, ticket, SteadyClock::now() + DirLeaseCache::kRetryAfterRefusal);
    co_return;
  }
  std::memcpy(key.data(), key_bytes.begin(), key.size());
  auto list = lease.getNames();
  std::vector<uint64_t> names;
  names.reserve(list.size());
  for (uint64_t h : list) names.push_back(h);
  if (impl.dir_leases.granted(dir, ticket, who.caller.uid, who.caller.gid, key, names, sent, term - kLeaseSafety))
    ++impl.dir_leases_taken;
}

asio::awaitable<void> renew_dir_lease(Client::Impl& impl, std::shared_ptr<bool> alive, Credentials who,
                                      InodeId dir, uint64_t ticket) {
  const TimePoint sent = SteadyClock::now();
  rpc::OutMessage out;
  auto r = impl.begin_mds(out, who).initLeaseDir();
  r.setIno(dir.value);
  r.setRenew(true);
  auto reply = co_await impl.call_mds(out, true);
  if (!*alive) co_return;
  const auto term = reply ? std::chrono::milliseconds((*reply)->body<mp::Reply>().getDirLease().getTermMs())
                          : std::chrono::milliseconds(0);
  if (term <= kLeaseSafety) impl.dir_leases.renewal_failed(dir, ticket);
  else impl.dir_leases.renewed(dir, ticket, sent, term - kLeaseSafety);
}

// The client's own credentials for a lease request on behalf of `who`: not
// the caller's job or request id.
Credentials asker_of(const Credentials& who) {
  Credentials asker;
  asker.caller = who.caller;
  asker.pid = who.pid;
  return asker;
}

}  // namespace

void Client::Impl::maybe_renew_dir_lease(const Credentials& who, InodeId dir) {
  const uint64_t ticket = dir_leases.renewing(dir, SteadyClock::now());
  if (ticket) asio::co_spawn(io, renew_dir_lease(*this, alive, asker_of(who), dir, ticket), asio::detached);
}

void Client::Impl::maybe_lease_dir(const Credentials& who, InodeId dir) {
  if (dir_leases.missed(dir, SteadyClock::now()))
    asio::co_spawn(io, ask_dir_lease(*this, alive, asker_of(who), dir), asio::detached);
}

namespace {

// An MDS's request to this client. Only recallDirLease is served.
asio::awaitable<void> serve_mds_request(Client::Impl* impl, std::shared_ptr<bool> alive,
                                        std::shared_ptr<rpc::Connection> conn,
                                        std::unique_ptr<rpc::InMessage> msg) {
  const uint64_t id = msg->id();
  Status outcome(Errc::not_supported, "a client serves only recallDirLease");
  try {
    auto req = msg->body<mp::Request>();
    if (req.which() == mp::Request::RECALL_DIR_LEASE && *alive) {
      impl->dir_leases.recalled(InodeId(req.getRecallDirLease()), SteadyClock::now());
      rpc::OutMessage reply;
      reply.init_body<mp::Reply>().setNone();
      co_await conn->reply(id, reply);
      co_return;
    }
  } catch (const kj::Exception& e) {
    outcome = Status(Errc::invalid_argument, std::string("malformed request: ") + e.getDescription().cStr());
  }
  co_await conn->reply_error(id, outcome);
}

}  // namespace

void Client::Impl::serve_mds_requests() {
  for (auto& [id, peer] : mds_peers) {
    peer->serve(
        [impl = this, alive = alive](std::shared_ptr<rpc::Connection> conn, std::unique_ptr<rpc::InMessage> msg) {
          return serve_mds_request(impl, alive, std::move(conn), std::move(msg));
        },
        // A lease is only as good as the connection the recall would come on.
        [impl = this, alive = alive] {
          if (*alive) impl->dir_leases.clear();
        });
  }
}

}  // namespace pvfs
