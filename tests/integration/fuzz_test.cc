// Hostile and broken peers against the real daemons (pvfs-mds and a
// pvfs-server) over raw TCP: cut-off frames, absurd lengths, garbage where
// the handshake belongs, garbage messages after it, well-formed nonsense,
// and floods nobody reads. Each daemon must answer with an error or drop
// that one connection: never crash, never balloon, and keep serving a
// well-behaved client. Randomness is seeded; iterations are bounded.
#include <fcntl.h>
#include <sys/stat.h>

#include <optional>
#include <random>
#include <variant>
#include <vector>

#include <capnp/any.h>
#include <capnp/schema.h>
#include <capnp/serialize.h>
#include <doctest/doctest.h>

#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/frame.h"
#include "shared/rpc/message.h"
#include "tests/integration/raw_conn.h"
#include "tests/integration/session.h"

namespace pvfs::test::fuzz_test {
namespace {

namespace mp = proto::mds;
namespace sp = proto::storage;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kRssLimit = 512 * kMiB;

Bytes random_bytes_of(std::mt19937_64& rng, size_t n) {
  Bytes out(n);
  for (auto& b : out) b = std::byte(rng());
  return out;
}

struct Target {
  std::string name;  // "mds0" or "server0"
  bool is_mds = false;
  Endpoint address;
  int pid = 0;
};

// A harmless request the daemon answers: its status.
void status_request(rpc::OutMessage& out, bool is_mds) {
  if (is_mds) out.init_body<mp::Request>().setStatus();
  else out.init_body<sp::Request>().setStatus();
}

// Overwrites the union discriminant of a request with a value past the schema.
template <typename Request>
void set_unknown_discriminant(typename Request::Builder req, uint16_t value) {
  const uint32_t offset = capnp::Schema::from<Request>().getProto().getStruct().getDiscriminantOffset();
  capnp::AnyStruct::Builder any(std::move(req));
  auto data = any.getDataSection();
  REQUIRE(data.size() >= offset * 2 + 2);
  data[offset * 2] = static_cast<kj::byte>(value & 0xff);
  data[offset * 2 + 1] = static_cast<kj::byte>(value >> 8);
}

// Everything the daemons hold up against, in one place.
class Fixture {
 public:
  Fixture() : cluster_(with_servers(2)), client_(cluster_.config()) {
    auto key = load_secret(cluster_.config().secret_file);
    REQUIRE(key.ok());
    key_ = *key;
    targets_.push_back({"mds0", true, cluster_.config().mds[0].address,
                        daemon_pid(cluster_.cluster(), "mds0")});
    targets_.push_back({"server0", false, cluster_.config().servers[0].address,
                        daemon_pid(cluster_.cluster(), "server0")});
    for (const auto& t : targets_) REQUIRE(t.pid > 0);
  }

  std::vector<Target>& targets() { return targets_; }
  const Secret& key() const { return key_; }
  TestCluster& cluster() { return cluster_; }
  Session& client() { return client_; }

  // An authenticated raw connection to `t`.
  std::unique_ptr<RawConn> authed(const Target& t) {
    auto c = std::make_unique<RawConn>(t.address);
    REQUIRE(c->handshake(key_));
    return c;
  }

  // The daemon is the same process, holds less than kRssLimit, and a
  // well-behaved client still creates, writes and reads a file that spans
  // both storage servers.
  void check_healthy(const Target& t) {
    CAPTURE(t.name);
    CHECK(process_alive(t.pid));
    CHECK(daemon_pid(cluster_.cluster(), t.name) == t.pid);
    CHECK(rss_bytes(t.pid) < kRssLimit);
    const std::string name = fmt::format("probe{}", probes_++);
    auto made = client_.run(client_->create(kRoot, kRootInode, name, 0644, O_RDWR));
    REQUIRE_MESSAGE(made.ok(), made.status().to_string());
    auto file = made->second;
    AlignedBuffer buf(kMiB + 4096);
    fill_pattern(buf.span(), probes_, 0);
    CHECK(client_.write(*file, 0, buf.span()).ok());
    std::memset(buf.data(), 0, buf.size());
    auto got = client_.read(*file, 0, buf.span());
    REQUIRE_MESSAGE(got.ok(), got.status().to_string());
    CHECK(*got == buf.size());
    CHECK(pattern_mismatch(buf.span(), probes_, 0) == std::nullopt);
    CHECK(client_.release(file).ok());
  }

 private:
  TestCluster cluster_;
  Session client_;
  Secret key_{};
  std::vector<Target> targets_;
  uint64_t probes_ = 0;
};

rpc::HeaderBytes header_of(uint32_t message_bytes, uint64_t data_bytes) {
  return rpc::encode_header({message_bytes, data_bytes});
}

}  // namespace

TEST_CASE("frames and hellos cut short are dropped without harm to the daemon") {
  Fixture fx;
  std::mt19937_64 rng(1);
  for (auto& t : fx.targets()) {
    CAPTURE(t.name);
    std::vector<std::unique_ptr<RawConn>> left_open;
    for (int i = 0; i < 150; ++i) {
      const int kind = i % 5;
      std::unique_ptr<RawConn> c;
      if (kind == 0) {
        // Part of a hello, then hang up.
        c = std::make_unique<RawConn>(t.address);
        rpc::Nonce n{};
        auto hello = rpc::make_hello({}, false, n);
        c->send(hello.data(), rng() % hello.size());
      } else {
        c = fx.authed(t);
        rpc::OutMessage out;
        status_request(out, t.is_mds);
        out.envelope().setId(1);
        auto words = capnp::messageToFlatArray(out.builder());
        auto msg = std::as_bytes(std::span(words.begin(), words.size()));
        auto header = header_of(static_cast<uint32_t>(msg.size()), kind == 3 ? 4096 : 0);
        if (kind == 1) {
          c->send(header.data(), rng() % rpc::kFrameHeaderBytes);  // part of a header
        } else if (kind == 2) {
          c->send(header);
          c->send(msg.first(rng() % msg.size()));  // header, part of the message
        } else if (kind == 3) {
          c->send(header);
          c->send(msg);
          c->send(random_bytes_of(rng, rng() % 4096));  // part of the bulk data
        } else {
          c->send(header.data(), 1 + rng() % (rpc::kFrameHeaderBytes - 1));
        }
      }
      // Most hang up at once; some stay half-sent while others are served.
      if (i % 10 == 9) left_open.push_back(std::move(c));
    }
    fx.check_healthy(t);
    left_open.clear();
    fx.check_healthy(t);
  }
}

TEST_CASE("frames announcing absurd lengths are refused without allocating them") {
  Fixture fx;
  for (auto& t : fx.targets()) {
    CAPTURE(t.name);
    struct Case {
      uint32_t message_bytes;
      uint64_t data_bytes;
    };
    for (Case bad : {Case{0xFFFFFFF8u, uint64_t{1} << 63}, Case{0xFFFFFFF8u, 0},
                     Case{8, uint64_t{1} << 63}, Case{8, ~uint64_t{0}},
                     Case{rpc::kMaxMessageBytes + 8, 0}, Case{8, rpc::kMaxDataBytes + 1},
                     Case{0, 0}, Case{13, 0}}) {
      CAPTURE(bad.message_bytes);
      CAPTURE(bad.data_bytes);
      auto c = fx.authed(t);
      c->send(header_of(bad.message_bytes, bad.data_bytes));
      CHECK(c->wait_closed() == RawConn::Got::closed);
    }
    {
      // A wrong magic after the handshake.
      auto c = fx.authed(t);
      auto header = header_of(64, 0);
      header[0] = std::byte{'X'};
      c->send(header);
      CHECK(c->wait_closed() == RawConn::Got::closed);
    }
    // The largest lengths the protocol allows, announced on many connections
    // and never sent: the daemon may wait for them, but must not fill them in.
    std::vector<std::unique_ptr<RawConn>> waiting;
    for (int i = 0; i < 16; ++i) {
      auto c = fx.authed(t);
      c->send(header_of(rpc::kMaxMessageBytes, rpc::kMaxDataBytes));
      c->send(Bytes(4096, std::byte{0}));
      waiting.push_back(std::move(c));
    }
    fx.check_healthy(t);
    waiting.clear();
    fx.check_healthy(t);
  }
}

TEST_CASE("random bytes instead of the handshake are refused and logged") {
  Fixture fx;
  std::mt19937_64 rng(3);
  for (auto& t : fx.targets()) {
    CAPTURE(t.name);
    for (int i = 0; i < 150; ++i) {
      RawConn c(t.address);
      const size_t n = i % 3 == 0 ? rpc::kHelloBytes : 1 + rng() % 512;
      c.send(random_bytes_of(rng, n));
      if (n >= rpc::kHelloBytes) CHECK(c.wait_closed() == RawConn::Got::closed);
    }
    {
      // A valid hello followed by a random proof.
      RawConn c(t.address);
      rpc::Nonce n{};
      auto hello = rpc::make_hello({}, false, n);
      c.send(hello.data(), hello.size());
      c.send(random_bytes_of(rng, 32));
      CHECK(c.wait_closed() == RawConn::Got::closed);
    }
    {
      // A frame where the hello belongs (a client that skips the handshake).
      RawConn c(t.address);
      rpc::OutMessage out;
      status_request(out, t.is_mds);
      c.send_request(out, 1);
      c.send(Bytes(64, std::byte{0}));
      CHECK(c.wait_closed() == RawConn::Got::closed);
    }
    const auto log = fx.cluster().cluster().dir() / "logs" / (t.name + ".log");
    CHECK(eventually([&] { return read_text(log).find("rejected") != std::string::npos; }));
    fx.check_healthy(t);
  }
}

TEST_CASE("random bytes as a message after a valid handshake get an error or a dropped connection") {
  Fixture fx;
  std::mt19937_64 rng(4);
  for (auto& t : fx.targets()) {
    CAPTURE(t.name);
    // Valid requests about objects and inodes nobody uses, to mutate.
    std::vector<Bytes> seeds;
    for (int k = 0; k < 3; ++k) {
      rpc::OutMessage out;
      out.envelope().setId(7);
      out.envelope().setJobId("fuzz");
      if (t.is_mds) {
        auto req = out.init_body<mp::Request>();
        if (k == 0) req.initGetattr().setIno(0x7777);
        if (k == 1) {
          auto l = req.initLookup();
          l.setParent(0x7777);
          l.setName("some-name");
        }
        if (k == 2) req.initReaddir().setIno(0x7777);
      } else {
        auto req = out.init_body<sp::Request>();
        if (k == 0) req.initStat().setIno(0x7777);
        if (k == 1) {
          auto rd = req.initRead();
          rd.getObject().setIno(0x7777);
          rd.setLength(4096);
        }
        if (k == 2) req.initWrite().getObject().setIno(0x7777);
      }
      auto words = capnp::messageToFlatArray(out.builder());
      auto bytes = std::as_bytes(std::span(words.begin(), words.size()));
      seeds.emplace_back(bytes.begin(), bytes.end());
    }
    int served = 0, dropped = 0;
    for (int i = 0; i < 300; ++i) {
      auto c = fx.authed(t);
      Bytes msg;
      if (i % 3 == 2) {
        // A valid request with a few bytes changed.
        msg = seeds[rng() % seeds.size()];
        for (int flips = 1 + rng() % 6; flips > 0; --flips) msg[rng() % msg.size()] = std::byte(rng());
      } else {
        const size_t words = 1 + rng() % 64;
        msg = random_bytes_of(rng, words * 8);
        if (i % 3 == 1) {
          // A plausible segment table, so the garbage reaches the pointers.
          const uint32_t one_segment = 0, size = static_cast<uint32_t>(words - 1);
          std::memcpy(msg.data(), &one_segment, 4);
          std::memcpy(msg.data() + 4, &size, 4);
        }
      }
      c->send_frame(msg, random_bytes_of(rng, rng() % 3 == 0 ? rng() % 8192 : 0));
      // Then a real request, to see whether the connection is still served.
      rpc::OutMessage out;
      status_request(out, t.is_mds);
      c->send_request(out, 0x5eed0000 + i);
      const std::string got = outcome(*c, 0x5eed0000 + i);
      CHECK_MESSAGE(got != "hung", "iteration ", i);
      (got == "closed" ? dropped : served)++;
      if (i % 100 == 99) fx.check_healthy(t);
    }
    MESSAGE(t.name, ": ", served, " connections served on, ", dropped, " dropped");
    // Most mutated requests still parse: the daemon answered them and went on.
    CHECK(served > 0);
    fx.check_healthy(t);
  }
}

TEST_CASE("the metadata server answers well-formed nonsense with errors and keeps its namespace clean") {
  Fixture fx;
  const Target& t = fx.targets()[0];
  REQUIRE(t.is_mds);
  auto scratch = fx.client().run(fx.client()->mkdir(kRoot, kRootInode, "scratch", 0755));
  REQUIRE(scratch.ok());
  auto c = fx.authed(t);
  uint64_t id = 100;
  const std::string long_name(10000, 'n');
  const uint64_t huge = uint64_t{1} << 63;
  // Sends one request built by `fill` and returns the reply's status name.
  auto ask = [&](auto fill, std::span<const std::byte> data = {}) {
    rpc::OutMessage out;
    auto req = out.init_body<mp::Request>();
    fill(req);
    REQUIRE(c->send_request(out, ++id, data));
    return outcome(*c, id);
  };

  for (uint64_t ino : {uint64_t{0}, uint64_t{2} << 40, huge, ~uint64_t{0}}) {
    CAPTURE(ino);
    CHECK(ask([&](auto r) { r.initGetattr().setIno(ino); }) == "not found");
    CHECK(ask([&](auto r) { r.initReaddir().setIno(ino); }) != "ok");
    CHECK(ask([&](auto r) { r.initReadlink().setIno(ino); }) != "ok");
    CHECK(ask([&](auto r) {
            auto m = r.initMknod();
            m.setParent(ino);
            m.setName("x");
            m.setMode(S_IFREG | 0644);
          }) != "ok");
    CHECK(ask([&](auto r) {
            auto s = r.initSetattr();
            s.setIno(ino);
            s.setMask(0x1ff);
            s.setSize(huge);
          }) != "ok");
    CHECK(ask([&](auto r) {
            auto u = r.initUpdateSize();
            u.setIno(ino);
            u.setSize(~uint64_t{0});
          }) != "ok");
    CHECK(ask([&](auto r) { r.initReleaseOrphan().setIno(ino); }) != "ok");
  }
  for (const std::string& bad : {std::string(), std::string("a/b"), std::string("/"),
                                 std::string("."), std::string(".."), std::string("a\0b", 3)}) {
    CAPTURE(bad);
    CHECK(ask([&](auto r) {
            auto l = r.initLookup();
            l.setParent(scratch->ino.value);
            l.setName(capnp::Text::Reader(bad.data(), bad.size()));
          }) == "invalid argument");
    CHECK(ask([&](auto r) {
            auto m = r.initMknod();
            m.setParent(scratch->ino.value);
            m.setName(capnp::Text::Reader(bad.data(), bad.size()));
            m.setMode(S_IFREG | 0644);
          }) == "invalid argument");
    CHECK(ask([&](auto r) {
            auto m = r.initMkdir();
            m.setParent(scratch->ino.value);
            m.setName(capnp::Text::Reader(bad.data(), bad.size()));
            m.setMode(0755);
          }) == "invalid argument");
  }
  CHECK(ask([&](auto r) {
          auto m = r.initMknod();
          m.setParent(scratch->ino.value);
          m.setName(long_name);
          m.setMode(S_IFREG | 0644);
        }) == "name too long");
  CHECK(ask([&](auto r) {
          auto l = r.initLookup();
          l.setParent(scratch->ino.value);
          l.setName(long_name);
        }) == "name too long");
  CHECK(ask([&](auto r) {
          auto s = r.initSymlink();
          s.setParent(scratch->ino.value);
          s.setName("s");
          s.setTarget(long_name);
        }) == "name too long");
  CHECK(ask([&](auto r) {
          auto n = r.initRename();
          n.setParent(scratch->ino.value);
          n.setName("missing");
          n.setNewParent(huge);
          n.setNewName("x");
          n.setFlags(0xffffffff);
        }) != "ok");
  CHECK(ask([&](auto r) {
          auto x = r.initSetxattr();
          x.setIno(scratch->ino.value);
          x.setName(long_name);
          x.setFlags(0xffffffff);
        }) != "ok");
  {
    Bytes big(70000, std::byte{'v'});
    CHECK(ask([&](auto r) {
            auto x = r.initSetxattr();
            x.setIno(scratch->ino.value);
            x.setName("user.big");
            x.setValue(kj::arrayPtr(reinterpret_cast<const kj::byte*>(big.data()), big.size()));
          }) != "ok");
  }
  // Readdir far past the end and asking for four billion entries: an empty page.
  CHECK(ask([&](auto r) {
          auto d = r.initReaddir();
          d.setIno(scratch->ino.value);
          d.setCookie(huge);
          d.setMaxEntries(0xffffffff);
          d.setPlus(true);
        }) == "ok");
  // A caller claiming 100000 groups.
  CHECK(ask([&](auto r) {
          auto caller = r.initCaller();
          caller.setUid(0xffffffff);
          caller.initGroups(100000);
          auto l = r.initLookup();
          l.setParent(scratch->ino.value);
          l.setName("missing");
        }) != "ok");
  // A union member this schema does not have.
  const uint16_t first_unknown =
      static_cast<uint16_t>(capnp::Schema::from<mp::Request>().getUnionFields().size());
  for (uint16_t which : {first_unknown, uint16_t{999}, uint16_t{0xffff}}) {
    CAPTURE(which);
    CHECK(ask([&](auto r) {
            r.initGetattr().setIno(1);
            set_unknown_discriminant<mp::Request>(r, which);
          }) == "not supported");
  }
  // A storage request sent to the metadata server.
  {
    rpc::OutMessage out;
    auto rd = out.init_body<sp::Request>().initRead();
    rd.getObject().setIno(1);
    rd.setLength(0xffffffff);
    REQUIRE(c->send_request(out, ++id));
    CHECK(outcome(*c, id) != "hung");
  }
  // An empty body.
  {
    rpc::OutMessage out;
    REQUIRE(c->send_request(out, ++id));
    CHECK(outcome(*c, id) != "hung");
  }

  // Sizes no file can have (off_t is signed) are refused for a real file,
  // which keeps the size it had.
  {
    auto [sized, handle] = fx.client().create(kRootInode, "sized");
    REQUIRE(fx.client().release(handle).ok());
    for (uint64_t size : {huge, ~uint64_t{0}}) {
      CAPTURE(size);
      CHECK(ask([&](auto r) {
              auto s = r.initSetattr();
              s.setIno(sized.ino.value);
              s.setMask(mp::SET_SIZE);
              s.setSize(size);
            }) != "ok");
      CHECK(ask([&](auto r) {
              auto u = r.initUpdateSize();
              u.setIno(sized.ino.value);
              u.setSize(size);
            }) != "ok");
    }
    auto now = fx.client().getattr(sized.ino);
    REQUIRE(now.ok());
    CHECK(now->size == 0);
  }
  // Layouts no file could use: stripes that are not whole pages or that one
  // storage request cannot carry. The directory keeps a layout that works.
  {
    auto odd = fx.client().run(fx.client()->mkdir(kRoot, kRootInode, "odd-layout", 0755));
    REQUIRE(odd.ok());
    for (uint64_t stripe : {uint64_t{3}, uint64_t{4097}, rpc::kMaxDataBytes + 4096, uint64_t{1} << 40, huge}) {
      CAPTURE(stripe);
      CHECK(ask([&](auto r) {
              auto l = r.initSetLayout();
              l.setIno(odd->ino.value);
              auto p = l.initPolicy();
              p.setStripeSize(stripe);
              p.setStripeCount(0xffffffff);
            }) == "invalid argument");
    }
    auto [attr, handle] = fx.client().create(odd->ino, "f");
    CHECK(attr.layout.stripe_size == fx.cluster().config().stripe_size);
    AlignedBuffer buf(kMiB);
    fill_pattern(buf.span(), 1, 0);
    CHECK(fx.client().write(*handle, 0, buf.span()).ok());
    CHECK(fx.client().release(handle).ok());
  }

  // Nothing of the above became a name.
  auto page = fx.client().run(fx.client()->readdir(kRoot, scratch->ino, 0, 1000, false));
  REQUIRE(page.ok());
  CHECK(page->entries.empty());
  fx.check_healthy(t);
}

TEST_CASE("a storage server answers well-formed nonsense with errors") {
  Fixture fx;
  const Target& t = fx.targets()[1];
  REQUIRE_FALSE(t.is_mds);
  auto c = fx.authed(t);
  uint64_t id = 100;
  const uint64_t huge = uint64_t{1} << 63;
  const InodeId junk(0x00ff00000000abcdULL);
  auto ask = [&](auto fill, std::span<const std::byte> data = {}) {
    rpc::OutMessage out;
    auto req = out.init_body<sp::Request>();
    fill(req);
    REQUIRE(c->send_request(out, ++id, data));
    return outcome(*c, id);
  };
  auto object = [&](auto b, uint32_t index = 0) {
    b.setIno(junk.value);
    b.setIndex(index);
  };
  Bytes page(4096, std::byte{0x5a});

  for (uint64_t offset : {huge, ~uint64_t{0} - 100, (uint64_t{1} << 62) - 10}) {
    CAPTURE(offset);
    CHECK(ask([&](auto r) {
            auto w = r.initWrite();
            object(w.initObject());
            w.setOffset(offset);
          }, page) == "invalid argument");
    CHECK(ask([&](auto r) {
            auto rd = r.initRead();
            object(rd.initObject());
            rd.setOffset(offset);
            rd.setLength(4096);
          }) == "invalid argument");
  }
  for (uint32_t length : {uint32_t{1} << 31, ~uint32_t{0}}) {
    CAPTURE(length);
    CHECK(ask([&](auto r) {
            auto rd = r.initRead();
            object(rd.initObject());
            rd.setLength(length);
          }) == "invalid argument");
  }
  for (uint64_t size : {huge, ~uint64_t{0}}) {
    CHECK(ask([&](auto r) {
            auto tr = r.initTruncate();
            object(tr.initObject(), 7);
            tr.setSize(size);
          }) == "invalid argument");
  }
  // Objects that do not exist: empty reads, no errors, nothing created.
  CHECK(ask([&](auto r) {
          auto rd = r.initRead();
          object(rd.initObject(), 0xffffffff);
          rd.setLength(4096);
        }) == "ok");
  CHECK(ask([&](auto r) { object(r.initStat(), 3); }) == "ok");
  CHECK(ask([&](auto r) { object(r.initFsync(), 3); }) == "ok");
  CHECK(object_count(fx.cluster().config(), junk) == 0);
  {
    std::mt19937_64 rng(5);
    CHECK(ask([&](auto r) {
            auto list = r.initRemove().initObjects(5000);
            for (auto o : list) {
              o.setIno(rng());
              o.setIndex(static_cast<uint32_t>(rng()));
            }
          }) == "ok");
  }
  // Bulk data on a request that takes none.
  CHECK(ask([&](auto r) { object(r.initStat(), 4); }, page) == "ok");
  // The first discriminant past the schema's, and far ones.
  const auto first_unknown =
      static_cast<uint16_t>(capnp::Schema::from<sp::Request>().getUnionFields().size());
  for (uint16_t which : {first_unknown, uint16_t{999}, uint16_t{0xffff}}) {
    CAPTURE(which);
    CHECK(ask([&](auto r) {
            object(r.initStat());
            set_unknown_discriminant<sp::Request>(r, which);
          }) == "not supported");
  }
  // A metadata request sent to the storage server.
  {
    rpc::OutMessage out;
    auto m = out.init_body<mp::Request>().initMknod();
    m.setParent(1);
    m.setName("x");
    REQUIRE(c->send_request(out, ++id));
    CHECK(outcome(*c, id) != "hung");
  }
  {
    rpc::OutMessage out;
    REQUIRE(c->send_request(out, ++id));
    CHECK(outcome(*c, id) != "hung");
  }
  fx.check_healthy(t);
}

TEST_CASE("a peer that pipelines the largest reads and takes no replies does not balloon a storage server") {
  Fixture fx;
  const Target& t = fx.targets()[1];
  REQUIRE_FALSE(t.is_mds);
  const InodeId ino(0x00ee000000001234ULL);
  constexpr uint32_t kRead = rpc::kMaxDataBytes;
  {
    auto c = fx.authed(t);
    AlignedBuffer big(kRead);
    fill_pattern(big.span(), 13, 0);
    rpc::OutMessage out;
    out.init_body<sp::Request>().initWrite().getObject().setIno(ino.value);
    REQUIRE(c->send_request(out, 1, big.span()));
    REQUIRE(outcome(*c, 1) == "ok");
  }
  // Sixteen replies of 64 MiB: a gigabyte if the server filled them all at once.
  constexpr int kReads = 16;
  auto c = fx.authed(t);
  for (int id = 1; id <= kReads; ++id) {
    rpc::OutMessage out;
    auto rd = out.init_body<sp::Request>().initRead();
    rd.getObject().setIno(ino.value);
    rd.setLength(kRead);
    REQUIRE(c->send_request(out, id));
  }
  // Watch the server while the replies sit unread (a window to look in, not
  // a speed expectation: a slower machine can only make this pass more easily).
  uint64_t peak = 0;
  eventually([&] {
    peak = std::max(peak, rss_bytes(t.pid));
    return false;
  }, std::chrono::seconds(2));
  CHECK(peak < kRssLimit);
  // Held back is not lost: every reply arrives, whole and right.
  for (int id = 1; id <= kReads; ++id) {
    auto frame = c->read_frame();
    auto* r = std::get_if<RawConn::Reply>(&frame);
    REQUIRE(r != nullptr);
    CHECK(r->status == Errc::ok);
    CHECK(r->data.size() == kRead);
    CHECK(pattern_mismatch(r->data, 13, 0) == std::nullopt);
  }
  fx.check_healthy(t);
}

TEST_CASE("a peer that floods requests and reads no replies neither stalls others nor bloats the daemon") {
  Fixture fx;
  // Something real to read, so replies carry data.
  auto [attr, file] = fx.client().create(kRootInode, "flood-source");
  {
    AlignedBuffer buf(2 * kMiB);
    fill_pattern(buf.span(), 12, 0);
    REQUIRE(fx.client().write(*file, 0, buf.span()).ok());
    REQUIRE(fx.client().flush(*file).ok());
  }
  const uint32_t index_on_server0 = attr.layout.servers[0].value == 0 ? 0 : 1;
  for (auto& t : fx.targets()) {
    CAPTURE(t.name);
    std::vector<std::unique_ptr<RawConn>> floods;
    for (int n = 0; n < 3; ++n) {
      auto c = fx.authed(t);
      c->set_timeouts(10000, 1000);  // stop sending once the daemon stops reading
      uint64_t sent = 0;
      for (uint64_t id = 1; id <= 200000; ++id) {
        rpc::OutMessage out;
        if (t.is_mds) {
          out.init_body<mp::Request>().initGetattr().setIno(attr.ino.value);
        } else {
          auto rd = out.init_body<sp::Request>().initRead();
          rd.getObject().setIno(attr.ino.value);
          rd.getObject().setIndex(index_on_server0);
          rd.setLength(256 << 10);
        }
        if (!c->send_request(out, id)) break;
        ++sent;
      }
      MESSAGE(t.name, ": flood ", n, ": ", sent, " requests sent, none of the replies read");
      floods.push_back(std::move(c));
      // Served while the floods sit unread.
      fx.check_healthy(t);
    }
    floods.clear();
    fx.check_healthy(t);
  }
  REQUIRE(fx.client().release(file).ok());
}

}  // namespace pvfs::test::fuzz_test
