#include "server/storage_service.h"

#include <fmt/format.h>

#include "shared/log.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/blocking.h"
#include "shared/rpc/frame.h"

namespace pvfs {

namespace sp = proto::storage;

namespace {

ObjectId object_of(sp::ObjectId::Reader r) { return ObjectId{InodeId(r.getIno()), r.getIndex()}; }

}  // namespace

StorageService::StorageService(uint32_t server_id, ObjectStore& store, asio::thread_pool& disk_pool)
    : id_(server_id), store_(store), disk_pool_(disk_pool) {}

asio::awaitable<void> StorageService::handle(std::shared_ptr<rpc::Connection> conn,
                                             std::unique_ptr<rpc::InMessage> msg) {
  const uint64_t id = msg->id();
  auto req = msg->body<sp::Request>();
  const std::string job = msg->envelope().getJobId();
  rpc::OutMessage out;
  auto reply = out.init_body<sp::Reply>();

  switch (req.which()) {
    case sp::Request::WRITE: {
      auto w = req.getWrite();
      ObjectId obj = object_of(w.getObject());
      uint64_t offset = w.getOffset();
      bool sync = w.getSync();
      Buffer data = std::move(msg->data());
      jobs_.count(job, 0, data.size());
      auto written = co_await rpc::run_blocking(disk_pool_, [&] {
        return store_.write(obj, offset, data.span(), sync);
      });
      if (!written) co_return co_await conn->reply_error(id, written.status());
      reply.setWritten(*written);
      co_return co_await conn->reply(id, out);
    }
    case sp::Request::READ: {
      auto r = req.getRead();
      ObjectId obj = object_of(r.getObject());
      uint64_t offset = r.getOffset();
      uint32_t length = r.getLength();
      if (length > rpc::kMaxDataBytes)
        co_return co_await conn->reply_error(id, Status(Errc::invalid_argument, "read too large"));
      // A peer that pipelines large reads and never takes the replies must
      // not make us fill gigabytes of buffers: the connection's budget waits.
      if (!co_await conn->reserve_reply_bytes(length)) co_return;
      struct Held {
        std::shared_ptr<rpc::Connection> conn;
        uint64_t bytes;
        ~Held() { conn->release_reply_bytes(bytes); }
      } held{conn, length};
      Buffer data(length);
      auto got = co_await rpc::run_blocking(disk_pool_, [&] {
        return store_.read(obj, offset, data.span());
      });
      if (!got) co_return co_await conn->reply_error(id, got.status());
      data.resize(*got);
      jobs_.count(job, *got, 0);
      reply.setRead(*got);
      co_return co_await conn->reply(id, out, data.span());
    }
    case sp::Request::TRUNCATE: {
      auto t = req.getTruncate();
      ObjectId obj = object_of(t.getObject());
      uint64_t size = t.getSize();
      jobs_.count(job, 0, 0);
      Status st = co_await rpc::run_blocking(disk_pool_, [&] { return store_.truncate(obj, size); });
      if (!st.ok()) co_return co_await conn->reply_error(id, st);
      reply.setNone();
      co_return co_await conn->reply(id, out);
    }
    case sp::Request::REMOVE: {
      std::vector<ObjectId> objects;
      for (auto o : req.getRemove().getObjects()) objects.push_back(object_of(o));
      jobs_.count(job, 0, 0);
      Status st = co_await rpc::run_blocking(disk_pool_, [&] {
        Status first;
        for (const auto& o : objects) {
          Status s = store_.remove(o);
          if (!s.ok() && first.ok()) first = s;
        }
        return first;
      });
      if (!st.ok()) co_return co_await conn->reply_error(id, st);
      reply.setNone();
      co_return co_await conn->reply(id, out);
    }
    case sp::Request::FSYNC: {
      ObjectId obj = object_of(req.getFsync());
      jobs_.count(job, 0, 0);
      Status st = co_await rpc::run_blocking(disk_pool_, [&] { return store_.fsync(obj); });
      if (!st.ok()) co_return co_await conn->reply_error(id, st);
      reply.setNone();
      co_return co_await conn->reply(id, out);
    }
    case sp::Request::STAT: {
      ObjectId obj = object_of(req.getStat());
      auto st = co_await rpc::run_blocking(disk_pool_, [&] { return store_.stat(obj); });
      if (!st) co_return co_await conn->reply_error(id, st.status());
      auto s = reply.initStat();
      s.setExists(st->exists);
      s.setSize(st->size);
      co_return co_await conn->reply(id, out);
    }
    case sp::Request::STATFS: {
      auto space = co_await rpc::run_blocking(disk_pool_, [&] { return store_.space(); });
      if (!space) co_return co_await conn->reply_error(id, space.status());
      auto s = reply.initStatfs();
      s.setCapacityBytes(space->capacity_bytes);
      s.setFreeBytes(space->free_bytes);
      co_return co_await conn->reply(id, out);
    }
    case sp::Request::STATUS: {
      auto s = reply.initStatus();
      s.setKind("server");
      s.setId(id_);
      s.setVersion(PVFS_VERSION);
      s.setUptimeMs(std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started_)
                        .count());
      jobs_.fill(s, 100);
      co_return co_await conn->reply(id, out);
    }
  }
  co_await conn->reply_error(id, Status(Errc::not_supported, "unknown storage request"));
}

}  // namespace pvfs
