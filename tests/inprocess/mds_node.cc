#include "tests/inprocess/mds_node.h"

#include <doctest/doctest.h>

#include "mds/wall_clock.h"
#include "shared/rpc/convert.h"

namespace pvfs::test {

MdsNode::MdsNode(Loop& loop, rpc::MemoryNetwork& net, const Clock& clock, const Config& config,
                 const Secret& key, uint32_t id, std::filesystem::path dir)
    : loop_(loop), net_(net), key_(key), id_(id) {
  auto opened = FileSetCatalog::open(dir, mds::wall_now(clock), /*create_root=*/false);
  REQUIRE_MESSAGE(opened.ok(), opened.status().to_string());
  filesets_ = std::move(*opened);
  cluster_ = std::make_unique<MdsCluster>(loop.io, config, key, MdsId(id), *filesets_, pool_,
                                          mds::ClusterOptions{}, clock, net);
  REQUIRE(cluster_->load().ok());
  if (cluster_->should_create_root() && !filesets_->has(FileSetId(0)))
    REQUIRE(filesets_->create(FileSetId(0), mds::wall_now(clock)).ok());
  service_ = std::make_unique<MdsService>(loop.io, config, key, id, *filesets_, *cluster_, pool_, clock, net);
  MdsService* s = service_.get();
  net.listen(address(id), rpc::Auth(key, {rpc::Kind::mds, id}),
             [s](auto conn, auto msg) { return s->handle(std::move(conn), std::move(msg)); });
  service_->start();
  cluster_->start();
}

MdsNode::~MdsNode() {
  net_.unlisten(address(id_));
  net_.cut(address(id_));
  service_->stop();
  cluster_->stop();
  loop_.settle();
  // Blocking work that finished after the settle above (a sync on the pool)
  // has posted its completion to the shared loop: run it now, while the
  // service it resumes still exists, not in the next settle of the storage
  // cluster's teardown after this node is freed.
  pool_.join();
  loop_.settle();
}

std::shared_ptr<rpc::Connection> MdsNode::connect(rpc::Identity who, rpc::Connection::Handler on_request) {
  auto conn = loop_.run(net_.connect(address(id_), rpc::Auth(key_, who), std::chrono::seconds(30)));
  REQUIRE_MESSAGE(conn.ok(), conn.status().to_string());
  (*conn)->start(std::move(on_request));
  return *conn;
}

namespace {

asio::awaitable<MdsNode::Reply> call_on(std::shared_ptr<rpc::Connection> conn, rpc::OutMessage& m) {
  co_return co_await conn->call(m, {}, std::chrono::seconds(30));
}

}  // namespace

std::shared_ptr<std::optional<MdsNode::Reply>> MdsNode::send(rpc::OutMessage& request,
                                                             std::shared_ptr<rpc::Connection> conn) {
  if (!conn) {
    if (!client_ || !client_->is_open()) client_ = connect();
    conn = client_;
  }
  return loop_.spawn(call_on(conn, request));
}

MdsNode::Reply MdsNode::call(rpc::OutMessage& request, std::shared_ptr<rpc::Connection> conn) {
  auto slot = send(request, std::move(conn));
  loop_.run_until([&] { return slot->has_value(); });
  return std::move(**slot);
}

mp::Request::Builder request(rpc::OutMessage& m, const Caller& caller) {
  auto r = m.init_body<mp::Request>();
  rpc::to_wire(caller, r.initCaller());
  return r;
}

Attr attr_of(rpc::InMessage& reply) { return rpc::from_wire(reply.body<mp::Reply>().getAttr()); }

}  // namespace pvfs::test
