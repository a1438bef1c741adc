// Test support: storage servers in one process. Each runs the real
// StorageService (and Maintainer) on its own directory, over a
// FaultyObjectStore for objects and one for fragments, on a ManualClock,
// reachable through a MemoryNetwork; the test thread runs their io_context
// (Loop) and a real disk pool does their I/O.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <vector>

#include "server/disk_object_store.h"
#include "server/maintainer.h"
#include "server/storage_service.h"
#include "shared/clock.h"
#include "shared/rpc/memory_network.h"
#include "tests/inprocess/loop.h"
#include "tests/support/faulty_object_store.h"
#include "tests/support/temp_dir.h"

namespace pvfs::test {

namespace sp = proto::storage;

struct StorageNode {
  uint32_t id = 0;
  std::filesystem::path dir;
  std::unique_ptr<DiskObjectStore> disk, fragment_disk;
  std::unique_ptr<FaultyObjectStore> store;
  FaultyObjectStore* fragments = nullptr;  // owned by the service
  std::unique_ptr<StorageService> service;
  std::unique_ptr<Maintainer> maintainer;  // rounds run by the test, never start()ed
};

class StorageCluster {
 public:
  // Servers 1..`servers`, started, each at endpoint "server-ID:7000".
  explicit StorageCluster(unsigned servers);
  ~StorageCluster();

  Loop loop;
  ManualClock clock;
  Config config;
  Secret key{};
  rpc::MemoryNetwork net{loop.io.get_executor()};

  StorageNode& node(uint32_t id) { return *nodes_.at(id); }
  static Endpoint address(uint32_t id) { return Endpoint{"server-" + std::to_string(id), 7000}; }
  // Stops server `id` (its listener, connections and service), as a crash
  // would, and starts it again on the same directory with healthy stores.
  void restart(uint32_t id);

  // A new client connection to server `id`.
  std::shared_ptr<rpc::Connection> connect(uint32_t id);
  // One request on a shared client connection to server `id`; `wait`
  // false returns at once with the slot filled when the reply comes.
  using Reply = Result<std::unique_ptr<rpc::InMessage>>;
  std::shared_ptr<std::optional<Reply>> send(uint32_t id, rpc::OutMessage& request,
                                             std::span<const std::byte> data = {});
  Reply call(uint32_t id, rpc::OutMessage& request, std::span<const std::byte> data = {});

 private:
  void start(uint32_t id);
  void stop(uint32_t id);

  TempDir root_{"pvfs-inprocess"};
  asio::thread_pool pool_{4};
  std::map<uint32_t, std::unique_ptr<StorageNode>> nodes_;
  std::map<uint32_t, std::shared_ptr<rpc::Connection>> clients_;
};

// Requests, as a client builds them.
ObjectId oid(uint64_t ino, uint32_t index = 0);
std::vector<std::byte> pattern(size_t size, uint32_t seed);
void write_request(rpc::OutMessage& m, ObjectId object, uint64_t offset, uint64_t fragment = 0, bool sync = false);
void read_request(rpc::OutMessage& m, ObjectId object, uint64_t offset, uint32_t length);
void redirect_request(rpc::OutMessage& m, ObjectId object, uint64_t offset, uint64_t length, uint32_t server,
                      uint64_t fragment);
void drop_request(rpc::OutMessage& m, ObjectId object, uint64_t fragment);
void remove_request(rpc::OutMessage& m, ObjectId object);
void sched_status_request(rpc::OutMessage& m);

// A read's reply: its bytes and the ranges it says live elsewhere.
struct ReadResult {
  std::vector<std::byte> bytes;
  struct Redirected {
    uint64_t offset, length;
    uint32_t server;
    uint64_t fragment;
  };
  std::vector<Redirected> redirected;
};
ReadResult read_result(rpc::InMessage& reply);

}  // namespace pvfs::test
