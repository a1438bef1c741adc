// Test support: a metadata server in one process. The real FileSetCatalog,
// MdsCluster and MdsService on their own directory, on the test's Loop,
// ManualClock and MemoryNetwork (where storage servers of a StorageCluster
// may listen too), serving at "mds-ID:6000". Requests go in as a client,
// a storage server or another member would send them; replies come out.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "mds/cluster/mds_cluster.h"
#include "mds/fileset_catalog.h"
#include "mds/mds_service.h"
#include "shared/clock.h"
#include "shared/rpc/memory_network.h"
#include "tests/inprocess/loop.h"

namespace pvfs::test {

namespace mp = proto::mds;
using mds::FileSetCatalog;
using mds::MdsCluster;
using mds::MdsService;

class MdsNode {
 public:
  // Opens (creating) the namespace in `dir` and starts serving. `config`
  // must list this member in config.mds.
  MdsNode(Loop& loop, rpc::MemoryNetwork& net, const Clock& clock, const Config& config, const Secret& key,
          uint32_t id, std::filesystem::path dir);
  ~MdsNode();

  static Endpoint address(uint32_t id) { return Endpoint{"mds-" + std::to_string(id), 6000}; }

  using Reply = Result<std::unique_ptr<rpc::InMessage>>;
  // A connection to this member as `who` (a client by default); requests
  // the member sends back on it go to `on_request` (answered not_supported
  // without one).
  std::shared_ptr<rpc::Connection> connect(rpc::Identity who = {rpc::Kind::client, 0},
                                           rpc::Connection::Handler on_request = {});
  // One request on `conn` (a shared client connection when null).
  std::shared_ptr<std::optional<Reply>> send(rpc::OutMessage& request,
                                             std::shared_ptr<rpc::Connection> conn = nullptr);
  Reply call(rpc::OutMessage& request, std::shared_ptr<rpc::Connection> conn = nullptr);

  MdsCluster& cluster() { return *cluster_; }
  FileSetCatalog& filesets() { return *filesets_; }

 private:
  Loop& loop_;
  rpc::MemoryNetwork& net_;
  const Secret key_;
  uint32_t id_;
  asio::thread_pool pool_{1};
  std::unique_ptr<FileSetCatalog> filesets_;
  std::unique_ptr<MdsCluster> cluster_;
  std::unique_ptr<MdsService> service_;
  std::shared_ptr<rpc::Connection> client_;
};

// A request body with `caller` filled in.
mp::Request::Builder request(rpc::OutMessage& m, const Caller& caller = {});
// The attributes of an attr reply.
Attr attr_of(rpc::InMessage& reply);

}  // namespace pvfs::test
