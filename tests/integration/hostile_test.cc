// Requests that once hurt the daemons, sent by hand over raw connections to
// a real cluster: the same drop sent twice at once (a crash). Each case
// checks what an operator would see: the daemon is the same process,
// answers, and keeps its state straight.
#include <signal.h>
#include <sys/stat.h>

#include <string>
#include <variant>
#include <vector>

#include <capnp/serialize.h>
#include <doctest/doctest.h>

#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"
#include "tests/integration/raw_conn.h"
#include "tests/integration/session.h"

namespace pvfs::test {
namespace {

namespace mp = proto::mds;
namespace sp = proto::storage;
constexpr uint64_t kMiB = uint64_t{1} << 20;

struct Held {
  uint64_t fragments = 0, bytes = 0;
};

// How many fragments server `id` says it holds, and their bytes.
Held held_on(const Config& config, uint32_t id) {
  auto reply = ask_storage(config, id, [](sp::Request::Builder r) { r.setSchedStatus(); });
  REQUIRE_MESSAGE(reply.ok(), reply.status().to_string());
  auto s = (*reply)->body<sp::Reply>().getSchedStatus();
  return Held{s.getFragments(), s.getFragmentBytes()};
}

// A dropFragments request naming `fragment` of `object` `times` times.
Bytes drop_request(uint64_t id, InodeId object, uint64_t fragment, int times) {
  rpc::OutMessage out;
  out.envelope().setId(id);
  auto list = out.init_body<sp::Request>().initDropFragments(static_cast<unsigned>(times));
  for (int i = 0; i < times; ++i) {
    list[i].initObject().setIno(object.value);
    list[i].setFragment(fragment);
  }
  auto words = capnp::messageToFlatArray(out.builder());
  auto message = std::as_bytes(std::span(words.begin(), words.size()));
  auto header = rpc::encode_header({static_cast<uint32_t>(message.size()), 0});
  Bytes frame(header.begin(), header.end());
  frame.insert(frame.end(), message.begin(), message.end());
  return frame;
}

}  // namespace

TEST_CASE("the same fragment dropped twice in one send leaves the server up and its bytes counted once") {
  TestCluster cluster(with_servers(2));
  const Config& config = cluster.config();
  auto key = load_secret(config.secret_file);
  REQUIRE(key.ok());
  const int pid = daemon_pid(cluster.cluster(), "server0");
  REQUIRE(pid > 0);
  const InodeId object(0x7777);
  const std::vector<uint64_t> fragments = {0xf1, 0xf2};
  const uint64_t kFragmentBytes = 256 * 1024;

  RawConn c(config.servers[0].address);
  REQUIRE(c.handshake(*key));
  uint64_t id = 1;
  // Two fragments held for another server's object, as a redirected write leaves them.
  for (uint64_t fragment : fragments) {
    rpc::OutMessage out;
    auto w = out.init_body<sp::Request>().initWrite();
    w.initObject().setIno(object.value);
    w.setFragment(fragment);
    Bytes data(kFragmentBytes, std::byte{0x5a});
    REQUIRE(c.send_request(out, ++id, data));
    REQUIRE(outcome(c, id) == "ok");
  }
  Held before = held_on(config, 0);
  CHECK(before.fragments == 2);
  CHECK(before.bytes == 2 * kFragmentBytes);

  // Both drops in one send, each naming the first fragment twice, as the
  // collectors of two servers (or one resumed after a stall) send them.
  Bytes both = drop_request(100, object, fragments[0], 2);
  Bytes second = drop_request(101, object, fragments[0], 2);
  both.insert(both.end(), second.begin(), second.end());
  REQUIRE(c.send(both));
  CHECK(outcome(c, 100) == "ok");
  CHECK(outcome(c, 101) == "ok");

  CHECK(process_alive(pid));
  CHECK(daemon_pid(cluster.cluster(), "server0") == pid);
  Held after = held_on(config, 0);
  CHECK(after.fragments == 1);
  CHECK(after.bytes == kFragmentBytes);
  // Dropping what is gone is success, and changes nothing.
  REQUIRE(c.send(drop_request(102, object, fragments[0], 1)));
  CHECK(outcome(c, 102) == "ok");
  after = held_on(config, 0);
  CHECK(after.fragments == 1);
  CHECK(after.bytes == kFragmentBytes);

  // The database agrees: after a restart the server holds the same.
  c.close();
  REQUIRE(cluster.cluster().kill_daemon("server0", SIGKILL).ok());
  REQUIRE(cluster.cluster().restart_daemon("server0").ok());
  after = held_on(config, 0);
  CHECK(after.fragments == 1);
  CHECK(after.bytes == kFragmentBytes);
}

}  // namespace pvfs::test
