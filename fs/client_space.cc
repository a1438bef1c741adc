// Space on the storage servers as a file sees it: fallocate (reserve or
// punch every object range a file range covers), SEEK_DATA / SEEK_HOLE
// (each object asked from the matching object offset, answers mapped back
// to file offsets), and the blocks a file's objects occupy (st_blocks).
// One request per object, all objects at once.
#include <algorithm>
#include <limits>
#include <memory>

#include "fs/client_impl.h"
#include "shared/request_limits.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/fan_out.h"
#include "shared/rpc/frame.h"

namespace pvfs {

namespace sp = proto::storage;

namespace {

// The file offset of byte `object_offset` of object `index`.
uint64_t file_offset(const Layout& layout, uint32_t index, uint64_t object_offset) {
  const uint64_t stripe = layout.stripe_size;
  return ((object_offset / stripe) * layout.stripe_count() + index) * stripe + object_offset % stripe;
}

}  // namespace

asio::awaitable<Status> Client::fallocate(const Credentials& who, OpenFile& file, uint64_t offset,
                                          uint64_t length, Falloc mode) {
  if (impl_->any_behind()) co_await impl_->drain_behind(*file.inode);
  LocalChange local_change(*impl_);
  local_change.inode(file.inode->ino);
  if (offset + length < offset || offset + length > kMaxFileBytes) co_return Status(Errc::too_big);
  auto state = file.inode;
  if (!state->layout.valid()) co_return Status(Errc::io, "file has no layout");
  const Layout layout = state->layout;
  uint64_t end = offset + length;
  // Linux punches nothing past the end of the file.
  if (mode == Falloc::punch) end = std::min(end, state->size);
  if (offset >= end) co_return Status{};
  // Object j holds the bytes of [offset, end) at object offsets
  // [size_j(offset), size_j(end)): one contiguous range per object.
  std::vector<asio::awaitable<Status>> tasks;
  for (uint32_t j = 0; j < layout.stripe_count(); ++j) {
    const uint64_t from = object_size_for_file_size(layout, j, offset);
    const uint64_t to = object_size_for_file_size(layout, j, end);
    if (from >= to) continue;
    tasks.push_back([](Impl& impl, ServerId server, InodeId ino, uint32_t index, uint64_t from, uint64_t to,
                       bool punch, rpc::Origin origin) -> asio::awaitable<Status> {
      rpc::OutMessage out;
      rpc::stamp(out.envelope(), origin);
      auto a = out.init_body<sp::Request>().initAllocate();
      set_object(a.initObject(), ino, index);
      a.setOffset(from);
      a.setLength(to - from);
      a.setPunch(punch);
      auto reply = co_await impl.call_storage(server, out, {});
      co_return reply.status();
    }(*impl_, layout.servers[j], state->ino, j, from, to, mode == Falloc::punch, origin_of(who)));
  }
  if (mode != Falloc::punch)
    for (uint32_t j = 0; j < layout.stripe_count(); ++j)
      if (object_size_for_file_size(layout, j, offset) < object_size_for_file_size(layout, j, end))
        state->objects_made.insert(j);
  Status st = co_await rpc::run_all(std::move(tasks));
  // Even a failed call may have reserved or freed some objects' ranges.
  state->blocks_dirty = true;
  if (st.ok() && mode == Falloc::allocate && end > state->size) {
    state->size = end;
    state->size_dirty = true;
    ++state->writes;
  }
  Status published = co_await publish(who, file, false);
  co_return st.ok() ? published : st;
}

asio::awaitable<Result<std::optional<uint64_t>>> Client::seek(const Credentials& who, OpenFile& file,
                                                              uint64_t offset, bool hole) {
  if (impl_->any_behind()) co_await impl_->drain_behind(*file.inode);
  auto state = file.inode;
  const uint64_t size = state->size;
  if (offset >= size) co_return std::optional<uint64_t>();
  if (!state->layout.valid()) co_return Status(Errc::io, "file has no layout");
  const Layout layout = state->layout;
  // Per object, the file offset of the first data (or hole) at or after
  // `offset` in it; each slot is written by its own task only.
  auto found = std::make_shared<std::vector<std::optional<uint64_t>>>(layout.stripe_count());
  std::vector<asio::awaitable<Status>> tasks;
  for (uint32_t j = 0; j < layout.stripe_count(); ++j) {
    const uint64_t from = object_size_for_file_size(layout, j, offset);
    const uint64_t to = object_size_for_file_size(layout, j, size);
    if (from >= to) continue;  // none of the file's bytes past `offset` are in this object
    tasks.push_back([](Impl& impl, Layout layout, InodeId ino, uint32_t index, uint64_t from, uint64_t to,
                       bool hole, rpc::Origin origin,
                       std::shared_ptr<std::vector<std::optional<uint64_t>>> found)
                        -> asio::awaitable<Status> {
      rpc::OutMessage out;
      rpc::stamp(out.envelope(), origin);
      auto k = out.init_body<sp::Request>().initSeek();
      set_object(k.initObject(), ino, index);
      k.setOffset(from);
      k.setHole(hole);
      auto reply = co_await impl.call_storage(layout.servers[index], out, {});
      if (!reply) co_return reply.status();
      auto r = (*reply)->body<sp::Reply>().getSeek();
      if (r.getFound() && r.getOffset() < to) (*found)[index] = file_offset(layout, index, r.getOffset());
      co_return Status{};
    }(*impl_, layout, state->ino, j, from, to, hole, origin_of(who), found));
  }
  Status st = co_await rpc::run_all(std::move(tasks));
  if (!st.ok()) co_return st;
  std::optional<uint64_t> first;
  for (const auto& f : *found)
    if (f && (!first || *f < *first)) first = f;
  // The end of the file is a hole; data past it is none.
  if (hole) co_return std::optional<uint64_t>(first ? std::min(*first, size) : size);
  if (first && *first >= size) first.reset();
  co_return first;
}

asio::awaitable<Client::Impl::ObjectStats> Client::Impl::stat_objects(
    const Layout& layout, InodeId ino, std::span<const uint32_t> indexes, rpc::Origin origin,
    milliseconds timeout) {
  auto stats = std::make_shared<std::vector<std::optional<ObjectStat>>>(layout.stripe_count());
  std::vector<asio::awaitable<Status>> tasks;
  for (uint32_t j : indexes) {
    tasks.push_back([](Impl& impl, Layout layout, InodeId ino, uint32_t index, rpc::Origin origin,
                       milliseconds timeout,
                       std::shared_ptr<std::vector<std::optional<ObjectStat>>> stats) -> asio::awaitable<Status> {
      rpc::OutMessage out;
      rpc::stamp(out.envelope(), origin);
      set_object(out.init_body<sp::Request>().initStat(), ino, index);
      auto reply = co_await impl.call_storage(layout.servers[index], out, {}, timeout);
      if (!reply) co_return reply.status();
      auto stat = (*reply)->body<sp::Reply>().getStat();
      // An object whose every piece went elsewhere has no file at home,
      // only redirect entries: dataEnd counts them either way.
      const uint64_t end = std::max(stat.getSize(), stat.getDataEnd());
      (*stats)[index] = ObjectStat{.end_in_file = file_size_for_object_size(layout, index, end),
                                   .blocks = stat.getBlocks()};
      co_return Status{};
    }(*this, layout, ino, j, origin, timeout, stats));
  }
  Status st = co_await rpc::run_all(std::move(tasks));
  co_return ObjectStats{.objects = std::move(*stats), .status = std::move(st)};
}

asio::awaitable<Result<uint64_t>> Client::allocated_blocks(const Credentials& who,
                                                           std::shared_ptr<InodeState> state,
                                                           std::chrono::milliseconds timeout) {
  const Layout layout = state->layout;
  if (!layout.valid()) co_return uint64_t{0};
  // An object past the end that nothing made here holds nothing to count
  // (a small file on a wide stripe asks one server, not all).
  std::vector<uint32_t> asked;
  for (uint32_t j = 0; j < layout.stripe_count(); ++j)
    if (object_size_for_file_size(layout, j, state->size) > 0 || state->objects_made.count(j)) asked.push_back(j);
  const Impl::ObjectStats stats = co_await impl_->stat_objects(layout, state->ino, asked, origin_of(who), timeout);
  if (!stats.status.ok()) co_return stats.status;
  uint64_t total = 0;
  for (uint32_t j : asked) total += stats.objects[j]->blocks;
  co_return total;
}

asio::awaitable<void> Client::Impl::glimpse_size(Attr& attr, rpc::Origin origin) {
  if (!attr.written_elsewhere || !S_ISREG(attr.mode) || !attr.layout.valid()) co_return;
  const Layout layout = attr.layout;
  std::vector<uint32_t> all(layout.stripe_count());
  for (uint32_t j = 0; j < all.size(); ++j) all[j] = j;
  const ObjectStats stats = co_await stat_objects(layout, attr.ino, all, origin, blocks_timeout());
  // Each object's end bounds the size from below: those that answered
  // count.
  for (const auto& stat : stats.objects)
    if (stat) attr.size = std::max(attr.size, stat->end_in_file);
  // Reads here go as far as an open file's size (merge_local() set it from
  // the MDS's, which lags).
  if (auto state = open_state(attr.ino); state && !state->size_dirty) {
    state->size = std::max(state->size, attr.size);
    state->base = std::max(state->base, attr.size);
  }
}

void Client::Impl::make_hole_objects(std::shared_ptr<InodeState> state, uint64_t offset,
                                     std::span<const Piece> pieces, rpc::Origin origin,
                                     std::vector<asio::awaitable<Status>>& tasks) {
  const Layout& layout = state->layout;
  for (uint32_t j = 0; j < layout.stripe_count(); ++j) {
    if (state->objects_made.count(j)) continue;
    if (std::any_of(pieces.begin(), pieces.end(), [j](const Piece& p) { return p.object_index == j; }))
      continue;
    // Object j holds bytes of the hole [size, offset) of the file, and none
    // below it (those that do exist already, or were made by an earlier
    // write past the end).
    const uint64_t below = object_size_for_file_size(layout, j, state->size);
    if (below > 0 || object_size_for_file_size(layout, j, offset) == below) continue;
    state->objects_made.insert(j);
    tasks.push_back([](Impl& impl, std::shared_ptr<InodeState> state, ServerId server, uint32_t index,
                       rpc::Origin origin) -> asio::awaitable<Status> {
      rpc::OutMessage out;
      rpc::stamp(out.envelope(), origin);
      auto a = out.init_body<sp::Request>().initAllocate();
      set_object(a.initObject(), state->ino, index);
      a.setLength(0);  // only make it exist
      auto reply = co_await impl.call_storage(server, out, {});
      if (!reply) state->objects_made.erase(index);  // the next write past the end tries again
      co_return Status{};
    }(*this, state, layout.servers[j], j, origin));
  }
}

}  // namespace pvfs
