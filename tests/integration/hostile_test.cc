// Requests that once hurt the daemons, sent by hand over raw connections to
// a real cluster: the same drop sent twice at once (a crash), oversized job
// ids (memory and scrape size without bound), a flood of failed handshakes
// (a log line each). Each case checks what an operator would see: the
// daemon is the same process, answers, stays small, and its log stays short.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <map>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include <capnp/serialize.h>
#include <doctest/doctest.h>

#include "tests/support/http_client.h"

#include "shared/request_limits.h"
#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"
#include "tests/integration/raw_conn.h"
#include "tests/integration/session.h"

namespace pvfs::test::hostile_test {
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
// A dropFragments request naming `fragment` of `object` `times` times, as
// the message of a frame (RawConn::frame() seals it).
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
  return Bytes(message.begin(), message.end());
}

// The body of GET /metrics from 127.0.0.1:`port` (empty when nothing came
// back within 5 s).
std::string scrape(uint16_t port) { return http_get(port, "/metrics").body; }

// Lines of `text` that contain `what`.
size_t lines_with(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
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
  Bytes both = c.frame(drop_request(100, object, fragments[0], 2));
  Bytes second = c.frame(drop_request(101, object, fragments[0], 2));
  both.insert(both.end(), second.begin(), second.end());
  REQUIRE(c.send(both));
  // Either may finish first: take the replies in the order they come.
  std::map<uint64_t, Errc> answers;
  while (answers.size() < 2) {
    auto frame = c.read_frame();
    auto* reply = std::get_if<RawConn::Reply>(&frame);
    REQUIRE_MESSAGE(reply, "the server closed or stopped answering after ", answers.size(), " replies");
    if (reply->is_reply) answers[reply->id] = reply->status;
  }
  CHECK(answers.count(100) == 1);
  CHECK(answers[100] == Errc::ok);
  CHECK(answers.count(101) == 1);
  CHECK(answers[101] == Errc::ok);

  CHECK(process_alive(pid));
  CHECK(daemon_pid(cluster.cluster(), "server0") == pid);
  Held after = held_on(config, 0);
  CHECK(after.fragments == 1);
  CHECK(after.bytes == kFragmentBytes);
  // Dropping what is gone is success, and changes nothing.
  REQUIRE(c.send(c.frame(drop_request(102, object, fragments[0], 1))));
  CHECK(outcome(c, 102) == "ok");
  after = held_on(config, 0);
  CHECK(after.fragments == 1);
  CHECK(after.bytes == kFragmentBytes);

  // The database agrees: after a restart the server holds the same.
  c.close();
  REQUIRE(cluster.cluster().kill_daemon("server0", SIGKILL).ok());
  const Status restarted = cluster.cluster().restart_daemon("server0");
  REQUIRE_MESSAGE(restarted.ok(), restarted.to_string());  // what the daemon said, if it did not come back
  after = held_on(config, 0);
  CHECK(after.fragments == 1);
  CHECK(after.bytes == kFragmentBytes);
}

TEST_CASE("requests with oversized job ids are refused naming the field and the daemons stay small") {
  TestCluster cluster(with_servers(1));
  const Config& config = cluster.config();
  auto key = load_secret(config.secret_file);
  REQUIRE(key.ok());
  struct Target {
    std::string name;
    bool is_mds;
    Endpoint address;
    uint16_t metrics_port;
  };
  const std::vector<Target> targets = {
      {"mds0", true, config.mds[0].address, config.mds[0].metrics->port},
      {"server0", false, config.servers[0].address, config.servers[0].metrics->port}};
  const std::string huge(kMiB, 'j');
  for (const auto& t : targets) {
    CAPTURE(t.name);
    const int pid = daemon_pid(cluster.cluster(), t.name);
    REQUIRE(pid > 0);
    const uint64_t rss_before = rss_bytes(pid);
    RawConn c(t.address);
    REQUIRE(c.handshake(*key));
    // 300 requests of distinct 1 MiB job ids, as in the report that took a
    // server from 25 to 320 MB and its scrapes to 297 MB.
    for (int i = 0; i < 300; ++i) {
      std::string job = huge;
      job.replace(0, 8, fmt::format("{:08x}", i));
      rpc::OutMessage out;
      out.envelope().setJobId(job);
      if (t.is_mds) out.init_body<mp::Request>().setStatus();
      else out.init_body<sp::Request>().setStatus();
      REQUIRE(c.send_request(out, 1000 + i));
      auto frame = c.reply_to(1000 + i);
      auto* reply = std::get_if<RawConn::Reply>(&frame);
      REQUIRE_MESSAGE(reply, "no reply to request ", i);
      CHECK(reply->status == Errc::invalid_argument);
    }
    // The same connection goes on, and a job id at the limit is counted.
    const std::string at_limit(kMaxJobIdBytes, 'k');
    {
      rpc::OutMessage out;
      out.envelope().setJobId(at_limit);
      if (t.is_mds) out.init_body<mp::Request>().setStatus();
      else out.init_body<sp::Request>().setStatus();
      REQUIRE(c.send_request(out, 5000));
      CHECK(outcome(c, 5000) == "ok");
    }
    CHECK(process_alive(pid));
    CHECK(daemon_pid(cluster.cluster(), t.name) == pid);
    const uint64_t rss_after = rss_bytes(pid);
    MESSAGE(t.name, ": resident ", rss_before / kMiB, " MiB before, ", rss_after / kMiB, " MiB after");
    CHECK(rss_after < rss_before + 64 * kMiB);
    const std::string body = scrape(t.metrics_port);
    MESSAGE(t.name, ": /metrics is ", body.size(), " bytes");
    CHECK(body.size() < 256 * 1024);
    CHECK(body.find(at_limit) != std::string::npos);
    CHECK(body.find(std::string(kMaxJobIdBytes + 1, 'j')) == std::string::npos);
  }
}

TEST_CASE("a flood of failed handshakes writes a few log lines with counts, not a line each") {
  TestCluster cluster(with_servers(1));
  const Config& config = cluster.config();
  std::mt19937_64 rng(14);
  const auto log = cluster.cluster().dir() / "logs" / "server0.log";
  const size_t lines_before = lines_with(read_text(log), "rejected");
  constexpr int kAttempts = 300;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < kAttempts; ++i) {
    RawConn c(config.servers[0].address);
    Bytes junk(rpc::kHelloBytes);
    for (auto& b : junk) b = std::byte(rng());
    c.send(junk);
    CHECK(c.wait_closed() == RawConn::Got::closed);
  }
  // The held-back ones are reported within a second or so after the flood.
  CHECK(eventually([&] { return read_text(log).find("more connections since the last line") != std::string::npos; },
                   std::chrono::seconds(5)));
  const std::string text = read_text(log);
  const size_t lines = lines_with(text, "rejected") - lines_before;
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started).count();
  MESSAGE(kAttempts, " failed handshakes in about ", seconds, " s made ", lines, " log lines");
  CHECK(lines >= 1);
  // One line a second and one summary a second at most, whatever the pace.
  CHECK(lines <= static_cast<size_t>(2 * (seconds + 2)));
  CHECK(lines < kAttempts / 10);
  // The daemon still serves.
  Session client(config);
  auto servers = client.run(client->servers());
  CHECK(servers.ok());
}

TEST_CASE("a layout policy naming more servers than the limit is refused and not stored") {
  TestCluster cluster(with_servers(2));
  const Config& config = cluster.config();
  auto key = load_secret(config.secret_file);
  REQUIRE(key.ok());
  Session client(config);
  auto dir = client.run(client->mkdir(kRoot, kRootInode, "striped", 0755));
  REQUIRE(dir.ok());
  RawConn c(config.mds[0].address);
  REQUIRE(c.handshake(*key));
  // Sends setLayout on the directory naming servers 0, 1, 2, ... (`count` of them).
  auto set_layout = [&](uint64_t id, unsigned count) {
    rpc::OutMessage out;
    auto req = out.init_body<mp::Request>();
    req.initCaller();
    auto s = req.initSetLayout();
    s.setIno(dir->ino.value);
    auto servers = s.initPolicy().initServers(count);
    for (unsigned i = 0; i < count; ++i) servers.set(i, i);
    REQUIRE(c.send_request(out, id));
    return outcome(c, id);
  };
  // Half a million entries: 2 MB stored with the directory and copied into
  // every file made in it, before.
  CHECK(set_layout(1, 500000) == "invalid argument");
  CHECK(set_layout(2, kMaxStripeCount + 1) == "invalid argument");
  CHECK(set_layout(3, 2) == "ok");
  auto file = client.create(dir->ino, "f");
  CHECK(file.first.layout.servers.size() == 2);
  CHECK(client.release(file.second).ok());
}

}  // namespace pvfs::test::hostile_test
