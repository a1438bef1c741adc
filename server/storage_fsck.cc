// The storage service's answers to pvfs-ctl fsck: pages of the objects,
// the fragments held for other servers and the redirected ranges stored
// here, and dropping the redirect entries of a fragment that is gone. It
// judges nothing: the checker (utils/ctl/fsck_check.h) compares what every
// daemon lists. Runs on the service's network thread; file system calls go
// to the blocking pool.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "server/storage_service.h"
#include "shared/log.h"
#include "shared/rpc/blocking.h"
#include "shared/rpc/convert.h"

namespace pvfs {

namespace sp = proto::storage;

namespace {

// Items per page when the caller asks for 0 or more than this.
constexpr uint32_t kMaxScanPage = 4096;
// How long the object listing of a walk serves its later pages.
constexpr auto kListingLife = std::chrono::seconds(60);

uint32_t page_size(sp::Request::Scan::Reader s) {
  const uint32_t max = s.getMax();
  return max == 0 || max > kMaxScanPage ? kMaxScanPage : max;
}

// A redirect listing entry; length 0 marks a fragment that no entry refers
// to any more and that waits for the garbage collector (see scan_redirects).
struct Listed {
  uint64_t offset = 0, length = 0;
  uint32_t server = 0;
  uint64_t fragment = 0;
};

}  // namespace

asio::awaitable<Status> StorageService::scan_objects(sp::Request::Scan::Reader s, Reply reply) {
  const ObjectId after = rpc::from_wire(s.getAfter());
  const uint32_t max = page_size(s);
  struct Page {
    std::vector<std::pair<ObjectId, uint64_t>> objects;
    bool eof = true;
  };
  // Listing the store costs a walk of every directory: one per fsck walk,
  // not one per page.
  const auto t = std::chrono::steady_clock::now();
  const bool fresh = after.ino.value == 0 || !fsck_listing_ || t - fsck_listed_at_ > kListingLife;
  std::shared_ptr<const std::vector<ObjectId>> listing = fresh ? nullptr : fsck_listing_;
  auto page = co_await rpc::run_blocking(disk_pool_, [&]() -> Result<Page> {
    if (!listing) {
      auto all = store_.list();
      if (!all) return all.status();
      std::sort(all->begin(), all->end());
      listing = std::make_shared<const std::vector<ObjectId>>(std::move(*all));
    }
    Page p;
    for (auto it = std::upper_bound(listing->begin(), listing->end(), after); it != listing->end(); ++it) {
      if (p.objects.size() == max) {
        p.eof = false;
        break;
      }
      auto st = store_.stat(*it);
      if (!st) return st.status();
      if (st->exists) p.objects.emplace_back(*it, st->size);  // removed since the listing: skip
    }
    return p;
  });
  if (!page) co_return page.status();
  if (fresh) {
    fsck_listing_ = listing;
    fsck_listed_at_ = t;
  }
  auto list = reply.initObjects();
  list.setEof(page->eof);
  auto items = list.initObjects(static_cast<unsigned>(page->objects.size()));
  for (unsigned i = 0; i < page->objects.size(); ++i) {
    rpc::to_wire(page->objects[i].first, items[i].initObject());
    items[i].setSize(page->objects[i].second);
  }
  co_return Status{};
}

asio::awaitable<Status> StorageService::scan_fragments(sp::Request::Scan::Reader s, Reply reply) {
  const ObjectId after = rpc::from_wire(s.getAfter());
  const uint32_t max = page_size(s);
  // By object, then fragment id; a page ends only between objects so the
  // caller can continue after the last object it saw.
  std::vector<HeldFragment> sorted;
  for (const auto& [id, held] : held_)
    if (after < held.object) sorted.push_back(held);
  std::sort(sorted.begin(), sorted.end(), [](const HeldFragment& a, const HeldFragment& b) {
    return a.object != b.object ? a.object < b.object : a.fragment < b.fragment;
  });
  bool eof = true;
  size_t take = 0;
  while (take < sorted.size()) {
    if (take >= max && !(sorted[take].object == sorted[take - 1].object)) {
      eof = false;
      break;
    }
    ++take;
  }
  sorted.resize(take);
  struct Seen {
    bool on_disk = false;
    int64_t mtime_ns = 0;
  };
  auto seen = co_await rpc::run_blocking(disk_pool_, [&]() -> Result<std::vector<Seen>> {
    std::vector<Seen> out;
    for (const auto& f : sorted) {
      auto st = fragments_->stat(ObjectId{InodeId(f.fragment), 0});
      if (!st) return st.status();
      out.push_back(Seen{st->exists, st->mtime_ns});
    }
    return out;
  });
  if (!seen) co_return seen.status();
  const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  auto list = reply.initFragments();
  list.setEof(eof);
  auto items = list.initFragments(static_cast<unsigned>(sorted.size()));
  for (unsigned i = 0; i < sorted.size(); ++i) {
    auto ref = items[i].initFragment();
    rpc::to_wire(sorted[i].object, ref.initObject());
    ref.setFragment(sorted[i].fragment);
    items[i].setBytes(sorted[i].bytes);
    const Seen& x = (*seen)[i];
    items[i].setOnDisk(x.on_disk);
    items[i].setAgeMs(x.on_disk && now_ns > x.mtime_ns ? static_cast<uint64_t>(now_ns - x.mtime_ns) / 1000000
                                                       : 0);
  }
  co_return Status{};
}

void StorageService::scan_redirects(sp::Request::Scan::Reader s, Reply reply) {
  const ObjectId after = rpc::from_wire(s.getAfter());
  const uint32_t max = page_size(s);
  // Where each byte lives now (entries partly covered by newer ones count
  // only for what they still answer), plus the fragments queued for the
  // garbage collector as length-0 entries: fsck must not call those orphans.
  std::map<ObjectId, std::vector<Listed>> by_object;
  for (ObjectId object : table_.objects()) {
    if (!(after < object)) continue;
    for (const auto& seg : table_.query(object, 0, redirect::kEnd))
      if (!seg.where.local)
        by_object[object].push_back(
            Listed{seg.begin, seg.end - seg.begin, seg.where.server.value, seg.where.fragment});
  }
  for (const auto& [g, since] : garbage_)
    if (after < g.object) by_object[g.object].push_back(Listed{0, 0, g.server.value, g.fragment});
  size_t total = 0;
  bool eof = true;
  std::vector<std::pair<ObjectId, const std::vector<Listed>*>> page;
  for (const auto& [object, entries] : by_object) {
    if (total >= max) {
      eof = false;
      break;
    }
    page.emplace_back(object, &entries);
    total += entries.size();
  }
  auto list = reply.initRedirects();
  list.setEof(eof);
  auto items = list.initEntries(static_cast<unsigned>(total));
  unsigned i = 0;
  for (const auto& [object, entries] : page) {
    for (const Listed& e : *entries) {
      auto item = items[i++];
      rpc::to_wire(object, item.initObject());
      item.setOffset(e.offset);
      item.setLength(e.length);
      item.setServer(e.server);
      item.setFragment(e.fragment);
    }
  }
}

asio::awaitable<Status> StorageService::drop_redirect(sp::FragmentRef::Reader f, Reply reply) {
  const ObjectId object = rpc::from_wire(f.getObject());
  const uint64_t fragment = f.getFragment();
  std::vector<redirect::Entry> naming;
  if (const auto* log = table_.find(object))
    for (const auto& e : log->remote_entries())
      if (e.where.fragment == fragment) naming.push_back(e);
  // A local entry right after each one, as a finished pull-back records:
  // it answers exactly for what that entry answered, so newer writes keep
  // theirs and the range reads home's bytes again.
  for (const auto& e : naming) {
    Status st = record(object, redirect::Entry{redirect::RedirectTable::pulled_seq(e.seq), e.begin, e.end,
                                               redirect::Location::home()});
    if (!st.ok()) co_return st;
  }
  // The fragment became garbage; on a server the config does not name
  // there is nobody to drop it on.
  std::vector<redirect::Garbage> unreachable;
  for (const auto& [g, since] : garbage_)
    if (g.object == object && g.fragment == fragment && !config_.find_server(g.server.value))
      unreachable.push_back(g);
  if (!unreachable.empty())
    if (Status st = garbage_dropped(unreachable); !st.ok()) co_return st;
  if (Status st = co_await sync_db(); !st.ok()) co_return st;
  if (!naming.empty())
    spdlog::info("fsck: dropped {} redirect entries of {:x}.{} naming fragment {:x}", naming.size(),
                 object.ino.value, object.index, fragment);
  reply.setNone();
  co_return Status{};
}

}  // namespace pvfs
