#include "tests/inprocess/storage_cluster.h"

#include <fstream>

#include "server/calibration.h"
#include "shared/rpc/convert.h"
#include "tests/inprocess/memory_client.h"

namespace pvfs::test {

StorageCluster::StorageCluster(unsigned servers) {
  key.fill(7);
  config.rpc_timeout_ms = 30000;
  config.connect_timeout_ms = 30000;
  config.fragment_gc_grace_ms = 2000;
  // Every operation goes to the disk pool: an inline one would run (and,
  // stalled, block) on the test thread.
  config.storage_inline.max_bytes = 0;
  for (uint32_t id = 1; id <= servers; ++id) {
    DaemonEntry e;
    e.id = id;
    e.address = address(id);
    e.data_dir = root_.path() / ("server-" + std::to_string(id));
    config.servers.push_back(e);
  }
  for (uint32_t id = 1; id <= servers; ++id) start(id);
}

StorageCluster::~StorageCluster() {
  for (auto& [id, conn] : clients_) conn->close();
  for (auto& [id, node] : nodes_) {
    node->store->heal();
    if (node->fragments) node->fragments->heal();
  }
  loop.settle();
  pool_.join();
}

void StorageCluster::start(uint32_t id) {
  auto node = std::make_unique<StorageNode>();
  node->id = id;
  node->dir = config.find_server(id)->data_dir;
  std::filesystem::create_directories(node->dir);
  // A bandwidth table in place: no calibration run at start.
  std::ofstream(node->dir / "bandwidth") << elevator::BandwidthTable::flat(uint64_t{1} << 30).to_text() << "\n";
  auto disk = DiskObjectStore::open(node->dir);
  REQUIRE_MESSAGE(disk.ok(), disk.status().to_string());
  node->disk = std::move(*disk);
  auto fragment_disk = DiskObjectStore::open(node->dir / "fragments");
  REQUIRE_MESSAGE(fragment_disk.ok(), fragment_disk.status().to_string());
  node->fragment_disk = std::move(*fragment_disk);
  node->store = std::make_unique<FaultyObjectStore>(*node->disk);
  auto fragments = std::make_unique<FaultyObjectStore>(*node->fragment_disk);
  node->fragments = fragments.get();
  auto service = StorageService::open(id, config, node->dir, *node->store, pool_, 2, loop.io.get_executor(), clock,
                                      std::move(fragments));
  REQUIRE_MESSAGE(service.ok(), service.status().to_string());
  node->service = std::move(*service);
  node->maintainer = std::make_unique<Maintainer>(loop.io.get_executor(), config, key, id, *node->service, net);
  StorageService* s = node->service.get();
  net.listen(address(id), rpc::Auth(key, {rpc::Kind::server, id}),
             [s](auto conn, auto msg) { return s->handle(std::move(conn), std::move(msg)); });
  nodes_[id] = std::move(node);
}

void StorageCluster::stop(uint32_t id) {
  net.unlisten(address(id));
  net.cut(address(id));
  if (auto it = clients_.find(id); it != clients_.end()) {
    it->second->close();
    clients_.erase(it);
  }
  auto& node = *nodes_.at(id);
  node.store->heal();
  node.fragments->heal();
  loop.settle();  // requests in flight finish (failing) before the service goes
  nodes_.erase(id);
}

void StorageCluster::restart(uint32_t id) {
  stop(id);
  start(id);
}

std::shared_ptr<rpc::Connection> StorageCluster::connect(uint32_t id) {
  return connect_client(loop, net, address(id), key);
}

namespace {

asio::awaitable<StorageCluster::Reply> call_on(std::shared_ptr<rpc::Connection> conn, rpc::OutMessage& m,
                                               std::span<const std::byte> data) {
  co_return co_await conn->call(m, data, std::chrono::seconds(30));
}

}  // namespace

std::shared_ptr<std::optional<StorageCluster::Reply>> StorageCluster::send(uint32_t id, rpc::OutMessage& request,
                                                                           std::span<const std::byte> data) {
  auto& conn = clients_[id];
  if (!conn || !conn->is_open()) conn = connect(id);
  return loop.spawn(call_on(conn, request, data));
}

StorageCluster::Reply StorageCluster::call(uint32_t id, rpc::OutMessage& request, std::span<const std::byte> data) {
  auto slot = send(id, request, data);
  loop.run_until([&] { return slot->has_value(); });
  return std::move(**slot);
}

ObjectId oid(uint64_t ino, uint32_t index) { return ObjectId{InodeId(ino), index}; }

std::vector<std::byte> pattern(size_t size, uint32_t seed) {
  std::vector<std::byte> out(size);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : out) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<std::byte>(x >> 24);
  }
  return out;
}

void write_request(rpc::OutMessage& m, ObjectId object, uint64_t offset, uint64_t fragment, bool sync) {
  auto w = m.init_body<sp::Request>().initWrite();
  rpc::to_wire(object, w.initObject());
  w.setOffset(offset);
  w.setFragment(fragment);
  w.setSync(sync);
}

void read_request(rpc::OutMessage& m, ObjectId object, uint64_t offset, uint32_t length) {
  auto r = m.init_body<sp::Request>().initRead();
  rpc::to_wire(object, r.initObject());
  r.setOffset(offset);
  r.setLength(length);
}

void redirect_request(rpc::OutMessage& m, ObjectId object, uint64_t offset, uint64_t length, uint32_t server,
                      uint64_t fragment) {
  auto r = m.init_body<sp::Request>().initRedirect();
  rpc::to_wire(object, r.initObject());
  r.setOffset(offset);
  r.setLength(length);
  r.setServer(server);
  r.setFragment(fragment);
  r.setSync(true);
}

void drop_request(rpc::OutMessage& m, ObjectId object, uint64_t fragment) {
  auto list = m.init_body<sp::Request>().initDropFragments(1);
  rpc::to_wire(object, list[0].initObject());
  list[0].setFragment(fragment);
}

void remove_request(rpc::OutMessage& m, ObjectId object) {
  auto list = m.init_body<sp::Request>().initRemove().initObjects(1);
  rpc::to_wire(object, list[0]);
}

void sched_status_request(rpc::OutMessage& m) { m.init_body<sp::Request>().setSchedStatus(); }

ReadResult read_result(rpc::InMessage& reply) {
  ReadResult out;
  auto span = reply.data().span();
  out.bytes.assign(span.begin(), span.end());
  for (auto r : reply.body<sp::Reply>().getRead().getRedirected())
    out.redirected.push_back({r.getOffset(), r.getLength(), r.getServer(), r.getFragment()});
  return out;
}

}  // namespace pvfs::test
