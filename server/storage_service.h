// The storage service: answers storage.capnp requests from clients and
// tools by running them against the ObjectStore on a blocking pool.
// Owns per-job counters and daemon status; does not own the store, the
// pool or the sockets. Runs on the daemon's single network thread.
#pragma once

#include <chrono>
#include <memory>

#include <asio.hpp>

#include "server/object_store.h"
#include "shared/rpc/connection.h"
#include "shared/rpc/job_counters.h"

namespace pvfs {

class StorageService {
 public:
  // `store` and `disk_pool` must outlive the service.
  StorageService(uint32_t server_id, ObjectStore& store, asio::thread_pool& disk_pool);

  // The RpcServer handler: decodes one request, runs it, sends one reply.
  asio::awaitable<void> handle(std::shared_ptr<rpc::Connection> conn,
                               std::unique_ptr<rpc::InMessage> msg);

 private:
  uint32_t id_;
  ObjectStore& store_;
  asio::thread_pool& disk_pool_;
  rpc::JobCounters jobs_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace pvfs
