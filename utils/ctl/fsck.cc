// pvfs-ctl fsck's conversations with the daemons: paged scans on one
// connection per daemon, and one request per repair. See fsck.h.
#include "utils/ctl/fsck.h"

#include <algorithm>
#include <optional>

#include <asio.hpp>
#include <fmt/format.h>

#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/connection.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/run_sync.h"
#include "utils/common/call_once.h"

namespace pvfs::fsck {

namespace {

namespace sp = proto::storage;
namespace mp = proto::mds;

// Items asked for per page.
constexpr uint32_t kPage = 1024;


asio::awaitable<Result<std::shared_ptr<rpc::Connection>>> open(const Endpoint& at, const Secret& key,
                                                                std::chrono::milliseconds timeout) {
  auto conn = co_await rpc::Connection::connect(at, key, timeout);
  if (!conn) co_return conn.status();
  (*conn)->start({});
  co_return *conn;
}

// Closes the connection however the scan ends.
struct Closer {
  std::shared_ptr<rpc::Connection> conn;
  ~Closer() {
    if (conn) conn->close();
  }
};

// Pages through one storage listing: `ask(request, after)` fills a page
// request, `take(reply)` consumes the page and returns (eof, last object).
template <typename Ask, typename Take>
asio::awaitable<Status> pages(rpc::Connection& conn, Wait wait, Ask ask, Take take) {
  ObjectId after{InodeId(0), 0};
  for (;;) {
    rpc::OutMessage out;
    auto scan = ask(out.init_body<sp::Request>());
    rpc::to_wire(after, scan.initAfter());
    scan.setMax(kPage);
    auto reply = co_await conn.call(out, {}, wait.timeout, wait.busy_limit);
    if (!reply) co_return reply.status();
    std::optional<std::pair<bool, ObjectId>> page;
    try {
      page = take((*reply)->template body<sp::Reply>());
    } catch (const kj::Exception& e) {
      co_return Status(Errc::io, fmt::format("malformed scan reply: {}", e.getDescription().cStr()));
    }
    if (!page) co_return Status(Errc::io, "unexpected reply to a scan");
    if (page->first) co_return Status{};
    if (!(after < page->second)) co_return Status(Errc::io, "a scan page did not move forward");
    after = page->second;
  }
}

const DaemonEntry* storage_entry(const Config& config, ServerId id) { return config.find_server(id.value); }

}  // namespace

Result<std::vector<File>> scan_files(const Endpoint& mds, const Secret& key, Wait wait,
                                     const std::function<void(size_t)>& on_page) {
  return rpc::run_sync([&]() -> asio::awaitable<Result<std::vector<File>>> {
    auto conn = co_await open(mds, key, wait.timeout);
    if (!conn) co_return conn.status();
    Closer closer{*conn};
    std::vector<File> files;
    uint64_t after = 0;
    for (;;) {
      rpc::OutMessage out;
      auto scan = out.init_body<mp::Request>().initScanFiles();
      scan.setAfter(after);
      scan.setMax(kPage);
      auto reply = co_await (*conn)->call(out, {}, wait.timeout, wait.busy_limit);
      if (!reply) co_return reply.status();
      auto body = (*reply)->body<mp::Reply>();
      if (!body.isFiles()) co_return Status(Errc::io, "unexpected reply to scanFiles");
      FileScan page = rpc::from_wire(body.getFiles());
      files.insert(files.end(), page.files.begin(), page.files.end());
      if (on_page) on_page(files.size());
      if (page.eof) break;
      if (files.empty() || files.back().ino.value <= after)
        co_return Status(Errc::io, "a scanFiles page did not move forward");
      after = files.back().ino.value;
    }
    co_return files;
  }());
}

Result<uint64_t> inode_count(const Endpoint& mds, const Secret& key, Wait wait) {
  return rpc::run_sync([&]() -> asio::awaitable<Result<uint64_t>> {
    auto conn = co_await open(mds, key, wait.timeout);
    if (!conn) co_return conn.status();
    Closer closer{*conn};
    rpc::OutMessage out;
    out.init_body<mp::Request>().setStatfs();
    auto reply = co_await (*conn)->call(out, {}, wait.timeout, wait.busy_limit);
    if (!reply) co_return reply.status();
    auto body = (*reply)->body<mp::Reply>();
    if (!body.isStatfs()) co_return Status(Errc::io, "unexpected reply to statfs");
    auto s = body.getStatfs();
    co_return s.getTotalInodes() - std::min(s.getTotalInodes(), s.getFreeInodes());
  }());
}

Result<ServerScan> scan_server(ServerId id, const Endpoint& at, const Secret& key,
                               Wait wait) {
  return rpc::run_sync([&]() -> asio::awaitable<Result<ServerScan>> {
    auto conn = co_await open(at, key, wait.timeout);
    if (!conn) co_return conn.status();
    Closer closer{*conn};
    ServerScan scan;
    scan.id = id;
    using Page = std::optional<std::pair<bool, ObjectId>>;
    Status st = co_await pages(
        **conn, wait, [](sp::Request::Builder r) { return r.initScanObjects(); },
        [&](sp::Reply::Reader reply) -> Page {
          if (!reply.isObjects()) return std::nullopt;
          ObjectId last{};
          for (auto o : reply.getObjects().getObjects()) {
            last = rpc::from_wire(o.getObject());
            scan.objects.push_back(StoredObject{last, o.getSize()});
          }
          return std::make_pair(reply.getObjects().getEof(), last);
        });
    if (!st.ok()) co_return st;
    st = co_await pages(
        **conn, wait, [](sp::Request::Builder r) { return r.initScanFragments(); },
        [&](sp::Reply::Reader reply) -> Page {
          if (!reply.isFragments()) return std::nullopt;
          ObjectId last{};
          for (auto f : reply.getFragments().getFragments()) {
            last = rpc::from_wire(f.getFragment().getObject());
            scan.fragments.push_back(
                Fragment{last, f.getFragment().getFragment(), f.getBytes(), f.getAgeMs(), f.getOnDisk()});
          }
          return std::make_pair(reply.getFragments().getEof(), last);
        });
    if (!st.ok()) co_return st;
    st = co_await pages(
        **conn, wait, [](sp::Request::Builder r) { return r.initScanRedirects(); },
        [&](sp::Reply::Reader reply) -> Page {
          if (!reply.isRedirects()) return std::nullopt;
          ObjectId last{};
          for (auto e : reply.getRedirects().getEntries()) {
            last = rpc::from_wire(e.getObject());
            scan.redirects.push_back(
                Redirect{last, e.getOffset(), e.getLength(), ServerId(e.getServer()), e.getFragment()});
          }
          return std::make_pair(reply.getRedirects().getEof(), last);
        });
    if (!st.ok()) co_return st;
    scan.answered = true;
    co_return scan;
  }());
}

namespace {

// Creates a missing object as an empty one of the finding's size. Stat
// first: it also drops a descriptor the server cached for a file deleted
// behind its back, so the truncate creates a new file.
Status create_object(const Finding& finding, const Endpoint& at, const Secret& key,
                     Wait wait) {
  return rpc::run_sync([&]() -> asio::awaitable<Status> {
    auto conn = co_await open(at, key, wait.timeout);
    if (!conn) co_return conn.status();
    Closer closer{*conn};
    rpc::OutMessage stat;
    rpc::to_wire(finding.object, stat.init_body<sp::Request>().initStat());
    auto reply = co_await (*conn)->call(stat, {}, wait.timeout, wait.busy_limit);
    if (!reply) co_return reply.status();
    auto body = (*reply)->body<sp::Reply>();
    if (!body.isStat()) co_return Status(Errc::io, "unexpected reply to stat");
    if (body.getStat().getExists()) co_return Status(Errc::exists, "the object exists now; left as it is");
    rpc::OutMessage out;
    auto t = out.init_body<sp::Request>().initTruncate();
    rpc::to_wire(finding.object, t.initObject());
    t.setSize(finding.size);
    auto done = co_await (*conn)->call(out, {}, wait.timeout, wait.busy_limit);
    co_return done.status();
  }());
}

}  // namespace

Status repair(const Finding& finding, const Config& config, const Secret& key, Wait wait) {
  if (finding.repair == Repair::none) return Status(Errc::invalid_argument, "nothing to repair");
  if (finding.repair == Repair::update_size) {
    // Offered to each member in turn: the owner of the file's set applies
    // it, the others answer staleMap (or again, while the set moves to them).
    Status last(Errc::unavailable, "no metadata server in the config");
    for (const auto& mds : config.mds) {
      last = call_once(mds.address, key, wait, [&](rpc::OutMessage& out) {
        auto u = out.init_body<mp::Request>().initUpdateSize();
        u.setIno(finding.object.ino.value);
        u.setSize(finding.size);
        u.setTouchMtime(false);
      });
      if (last.code() != Errc::unavailable && last.code() != Errc::timeout &&
          last.code() != Errc::stale_map && last.code() != Errc::again)
        return last;
    }
    return last;
  }
  const DaemonEntry* server = storage_entry(config, finding.server);
  if (!server) return Status(Errc::not_found, fmt::format("server {} is not in the config", finding.server.value));
  if (finding.repair == Repair::create_object) return create_object(finding, server->address, key, wait);
  return call_once(server->address, key, wait, [&](rpc::OutMessage& out) {
    auto req = out.init_body<sp::Request>();
    switch (finding.repair) {
      case Repair::remove_object: rpc::to_wire(finding.object, req.initRemove().initObjects(1)[0]); break;
      case Repair::drop_redirect: {
        auto f = req.initDropRedirect();
        rpc::to_wire(finding.object, f.initObject());
        f.setFragment(finding.fragment);
        break;
      }
      case Repair::drop_fragment: {
        auto f = req.initDropFragments(1)[0];
        rpc::to_wire(finding.object, f.initObject());
        f.setFragment(finding.fragment);
        break;
      }
      case Repair::none:
      case Repair::update_size:
      case Repair::create_object: PVFS_CHECK(false);  // handled above
    }
  });
}

}  // namespace pvfs::fsck
