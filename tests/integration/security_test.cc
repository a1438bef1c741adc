// Integrity on the wire and trust, against real daemons: a keyless relay
// that changes bytes in transit is caught (the request fails, nothing
// changed is returned or written, the daemon keeps serving others); the
// responder proves itself only to a peer that proved itself first; a
// storage server cannot be impersonated at registration; an encrypted
// cluster works; daemon state files are private; root is squashed through a
// real mount when the config says so.
#include <sys/socket.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include "shared/proto/mds.capnp.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/frame_seal.h"
#include "shared/rpc/run_sync.h"
#include "tests/integration/raw_conn.h"
#include "tests/integration/session.h"

namespace pvfs::test::security_test {
namespace {

namespace sp = proto::storage;
namespace mp = proto::mds;
constexpr size_t kMiB = 1 << 20;

// A TCP relay that holds no key: it passes the handshake through and then,
// reading frames as they go, changes the first byte of the bulk data of
// every frame in one direction (or of none, only recording what it saw).
class Relay {
 public:
  enum class Flip { none, replies, requests };

  Relay(const Endpoint& target, Flip flip) : target_(target), flip_(flip) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listen_fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listen_fd_, 8) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~Relay() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    acceptor_.join();
    {
      std::lock_guard lock(mu_);
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : pumps_) t.join();
    for (int fd : fds_) ::close(fd);
  }

  Endpoint address() const { return {"127.0.0.1", port_}; }
  int flipped() const { return flipped_; }
  // Every byte the daemon sent after the handshake (Flip::none only).
  std::string seen_from_daemon() {
    std::lock_guard lock(mu_);
    return seen_;
  }

 private:
  void accept_loop() {
    while (!stopping_) {
      int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) return;
      int daemon = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(target_.port);
      ::inet_pton(AF_INET, target_.host.c_str(), &to.sin_addr);
      if (::connect(daemon, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
        ::close(client);
        ::close(daemon);
        continue;
      }
      std::lock_guard lock(mu_);
      fds_.push_back(client);
      fds_.push_back(daemon);
      pumps_.emplace_back([this, client, daemon] { pump(client, daemon, flip_ == Flip::requests, false); });
      pumps_.emplace_back([this, client, daemon] { pump(daemon, client, flip_ == Flip::replies, true); });
    }
  }

  static bool read_exact(int fd, std::byte* p, size_t n) {
    for (size_t done = 0; done < n;) {
      ssize_t got = ::recv(fd, p + done, n - done, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      done += static_cast<size_t>(got);
    }
    return true;
  }
  static bool write_all(int fd, const std::byte* p, size_t n) {
    for (size_t done = 0; done < n;) {
      ssize_t put = ::send(fd, p + done, n - done, MSG_NOSIGNAL);
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) return false;
      done += static_cast<size_t>(put);
    }
    return true;
  }

  // Copies from `from` to `to`: the hello and proof as they are, then frame
  // by frame, changing the data when `flip`.
  void pump(int from, int to, bool flip, bool from_daemon) {
    // Hello, then proof, each passed on as it comes (each side waits for the other's).
    std::vector<std::byte> buf(rpc::kHelloBytes);
    bool ok = read_exact(from, buf.data(), rpc::kHelloBytes) &&
              write_all(to, buf.data(), rpc::kHelloBytes) &&
              read_exact(from, buf.data(), sizeof(Mac)) && write_all(to, buf.data(), sizeof(Mac));
    while (ok) {
      rpc::HeaderBytes hb{};
      if (!read_exact(from, hb.data(), hb.size())) break;
      auto header = rpc::decode_header(hb);
      if (!header) break;
      const size_t rest = header->message_bytes + header->data_bytes + rpc::kFrameTagBytes;
      buf.resize(rest);
      if (!read_exact(from, buf.data(), rest)) break;
      if (flip && header->data_bytes > 0) {
        buf[header->message_bytes] ^= std::byte{0x01};
        ++flipped_;
      }
      if (from_daemon && flip_ == Flip::none) {
        std::lock_guard lock(mu_);
        seen_.append(reinterpret_cast<const char*>(buf.data()), rest);
      }
      ok = write_all(to, hb.data(), hb.size()) && write_all(to, buf.data(), rest);
    }
    ::shutdown(to, SHUT_RDWR);
    ::shutdown(from, SHUT_RDWR);
  }

  Endpoint target_;
  Flip flip_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> flipped_{0};
  std::thread acceptor_;
  std::mutex mu_;  // guards fds_, pumps_ (while accepting) and seen_
  std::vector<int> fds_;
  std::vector<std::thread> pumps_;
  std::string seen_;
};

// One request on a connection of its own to `at`, as `auth`, synchronously.
Result<std::unique_ptr<rpc::InMessage>> call_at(const Endpoint& at, const rpc::Auth& auth,
                                                const std::function<void(rpc::OutMessage&)>& fill,
                                                std::span<const std::byte> data = {}) {
  auto ask = [&]() -> asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> {
    auto conn = co_await rpc::Connection::connect(at, auth, std::chrono::milliseconds(3000));
    if (!conn) co_return conn.status();
    (*conn)->start({});
    rpc::OutMessage msg;
    fill(msg);
    auto reply = co_await (*conn)->call(msg, data, std::chrono::milliseconds(5000));
    (*conn)->close();
    co_return reply;
  };
  return rpc::run_sync(ask());
}

Secret key_of(const Config& config) {
  auto key = load_secret(config.secret_file);
  REQUIRE_MESSAGE(key.ok(), key.status().to_string());
  return *key;
}

// The file `name` of `size` bytes of pattern `seed`, written through `s`.
InodeId write_file(Session& s, const std::string& name, size_t size, uint64_t seed) {
  auto [attr, file] = s.create(kRootInode, name);
  AlignedBuffer buf(size);
  fill_pattern(buf.span(), seed, 0);
  REQUIRE(s.write(*file, 0, buf.span()).ok());
  REQUIRE(s.release(file).ok());
  return attr.ino;
}

// Empty when `ino` reads back as `size` bytes of pattern `seed` through `s`.
std::string check_contents(Session& s, InodeId ino, size_t size, uint64_t seed) {
  auto file = s.open(ino, O_RDONLY);
  if (!file) return file.status().to_string();
  AlignedBuffer buf(size);
  auto n = s.read(**file, 0, buf.span());
  (void)s.release(*file);
  if (!n) return n.status().to_string();
  if (*n != size) return fmt::format("read {} of {} bytes", *n, size);
  if (auto at = pattern_mismatch(buf.span(), seed, 0)) return fmt::format("wrong byte at {}", *at);
  return {};
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void fill_read(rpc::OutMessage& out, InodeId ino, uint32_t length) {
  auto rd = out.init_body<sp::Request>().initRead();
  rpc::to_wire(ObjectId{ino, 0}, rd.initObject());
  rd.setOffset(0);
  rd.setLength(length);
}

// A local cluster whose pvfs.toml gets `edit` before the daemons that read
// it start: up once (which writes the config), down, edit, up again.
// Torn down on destruction.
class EditedCluster {
 public:
  explicit EditedCluster(uint32_t servers)
      : dir_("pvfs-security"), on_signal_([dir = dir_.path()] { pvfs::test::undo_test_folder(dir); }) {
    options_ = with_servers(servers);
    options_.dir = dir_.path() / "cluster";
    start();
  }
  ~EditedCluster() {
    if (cluster_) (void)cluster_->down();
  }
  // Stops the cluster, replaces `from` by `to` in its config, starts it again.
  void restart_with(const std::string& from, const std::string& to) {
    REQUIRE(cluster_->down().ok());
    cluster_.reset();
    const auto file = options_.dir / "pvfs.toml";
    std::string text = read_text(file);
    const auto at = text.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from, " is not in ", file.string());
    text.replace(at, from.size(), to);
    std::ofstream(file, std::ios::trunc) << text;
    start();
  }
  LocalCluster& cluster() { return *cluster_; }
  const Config& config() const { return cluster_->config(); }
  std::filesystem::path mnt() const { return dir_.path() / "mnt"; }
  void mount() {
    Status st = cluster_->mount(mnt());
    REQUIRE_MESSAGE(st.ok(), st.to_string());
  }

 private:
  void start() {
    auto up = LocalCluster::up(options_);
    REQUIRE_MESSAGE(up.ok(), up.status().to_string());
    cluster_.emplace(std::move(*up));
  }
  TempDir dir_;
  pvfs::test::CleanupOnSignal on_signal_;
  ClusterOptions options_;
  std::optional<LocalCluster> cluster_;
};

}  // namespace

TEST_CASE("a keyless relay that changes read data is caught: the read fails with EIO and the server serves on") {
  TestCluster cluster(with_servers(1));
  const Config& config = cluster.config();
  Session s(config);
  const InodeId ino = write_file(s, "relayed", kMiB, 21);
  const int pid = daemon_pid(cluster.cluster(), "server0");

  Relay relay(config.servers[0].address, Relay::Flip::replies);
  auto reply = call_at(relay.address(), key_of(config),
                       [&](rpc::OutMessage& out) { fill_read(out, ino, kMiB); });
  CHECK(relay.flipped() >= 1);
  if (reply.ok()) {
    auto& data = (*reply)->data();
    FAIL_CHECK("the read through the relay succeeded; changed bytes: ",
               pattern_mismatch(data.span().first(std::min<size_t>(data.size(), kMiB)), 21, 0)
                   .value_or(~uint64_t{0}));
  }
  CHECK(reply.code() == Errc::io);
  CHECK(reply.status().detail().find("integrity") != std::string::npos);

  // The same daemon, untouched, still serves honest clients.
  CHECK(daemon_pid(cluster.cluster(), "server0") == pid);
  CHECK(check_contents(s, ino, kMiB, 21) == "");
  auto direct = call_at(config.servers[0].address, key_of(config),
                        [&](rpc::OutMessage& out) { fill_read(out, ino, kMiB); });
  REQUIRE_MESSAGE(direct.ok(), direct.status().to_string());
  CHECK(pattern_mismatch((*direct)->data().span(), 21, 0) == std::nullopt);
}

TEST_CASE("a keyless relay that changes written data is caught by the server: nothing is written, one log line") {
  TestCluster cluster(with_servers(1));
  const Config& config = cluster.config();
  Session s(config);
  const InodeId ino = write_file(s, "target", kMiB, 31);

  Relay relay(config.servers[0].address, Relay::Flip::requests);
  AlignedBuffer other(64 * 1024);
  fill_pattern(other.span(), 32, 0);
  auto reply = call_at(
      relay.address(), key_of(config),
      [&](rpc::OutMessage& out) {
        auto w = out.init_body<sp::Request>().initWrite();
        rpc::to_wire(ObjectId{ino, 0}, w.initObject());
        w.setOffset(0);
      },
      other.span());
  CHECK(relay.flipped() == 1);
  CHECK_FALSE(reply.ok());
  CHECK(check_contents(s, ino, kMiB, 31) == "");
  const auto log = cluster.cluster().dir() / "logs" / "server0.log";
  CHECK(eventually([&] { return count_of(read_text(log), "failed its integrity check") == 1; }));
  CHECK(daemon_pid(cluster.cluster(), "server0") != 0);
}

TEST_CASE("daemons send their proof only after checking the initiator's, and never for a wrong one") {
  TestCluster cluster(with_servers(1));
  for (const Endpoint& at : {cluster.config().mds[0].address, cluster.config().servers[0].address}) {
    CAPTURE(at.to_string());
    RawConn c(at, 1000);
    rpc::Nonce n{};
    random_bytes(n);
    auto hello = rpc::make_hello({}, false, n);
    REQUIRE(c.send(hello.data(), hello.size()));
    rpc::Hello theirs{};
    REQUIRE(c.recv_exact(std::as_writable_bytes(std::span(theirs))) == RawConn::Got::ok);
    auto fields = rpc::parse_hello(theirs);
    REQUIRE(fields.has_value());
    CHECK(fields->who.kind != rpc::Kind::client);
    // Nothing more comes until we prove ourselves...
    std::byte one[1];
    CHECK(c.recv_exact(one) == RawConn::Got::hung);
    // ...and a wrong proof gets no proof back, only a closed connection.
    Mac wrong{};
    random_bytes(wrong);
    REQUIRE(c.send(wrong.data(), wrong.size()));
    c.set_timeouts(5000, 5000);
    CHECK(c.recv_exact(one) == RawConn::Got::closed);
  }
}

TEST_CASE("a storage server cannot be impersonated at registration") {
  TestCluster cluster(with_servers(1));
  const Config& config = cluster.config();
  const Secret key = key_of(config);
  const Endpoint mds = config.mds[0].address;
  auto register_as = [&](rpc::Identity who, uint32_t id, const std::string& address) {
    return call_at(mds, rpc::Auth(key, who), [&](rpc::OutMessage& out) {
             auto info = out.init_body<mp::Request>().initRegisterServer();
             info.setId(id);
             info.setAddress(address);
             info.setAlive(true);
           }).code();
  };
  const std::string real = config.servers[0].address.to_string();
  // A client claiming to be server 0, a server at another address, an unknown server.
  CHECK(register_as({}, 0, real) == Errc::not_permitted);
  CHECK(register_as({rpc::Kind::server, 0}, 0, "127.0.0.1:1") == Errc::not_permitted);
  CHECK(register_as({rpc::Kind::server, 7}, 7, "127.0.0.1:1") == Errc::not_permitted);
  CHECK(register_as({rpc::Kind::server, 0}, 0, real) == Errc::ok);
  auto servers = call_at(mds, rpc::Auth(key), [](rpc::OutMessage& out) {
    out.init_body<mp::Request>().setGetServers();
  });
  REQUIRE(servers.ok());
  auto list = (*servers)->body<mp::Reply>().getServers();
  REQUIRE(list.size() == 1);
  CHECK(std::string(list[0].getAddress().cStr()) == real);
  const auto log = cluster.cluster().dir() / "logs" / "mds0.log";
  CHECK(count_of(read_text(log), "refused registration") == 3);
  // The real server's data path is unaffected.
  Session s(config);
  const InodeId ino = write_file(s, "after", kMiB, 41);
  CHECK(check_contents(s, ino, kMiB, 41) == "");
}

TEST_CASE("daemon state files are readable by their owner only") {
  TestCluster cluster(with_servers(1));
  Session s(cluster.config());
  write_file(s, "some", kMiB, 51);
  size_t files = 0;
  for (const auto& dir : {cluster.config().mds[0].data_dir, cluster.config().servers[0].data_dir}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      struct stat st {};
      REQUIRE(::lstat(e.path().c_str(), &st) == 0);
      if (!S_ISREG(st.st_mode)) continue;
      ++files;
      CAPTURE(e.path().string());
      CHECK((st.st_mode & 077) == 0);
    }
  }
  CHECK(files >= 4);  // at least the namespace's and the server's LMDB files and an object
}

TEST_CASE("with encrypt = true reads and writes work and file data does not cross the wire in the clear") {
  EditedCluster cluster(1);
  const InodeId plain_ino = [&] {
    Session s(cluster.config());
    return write_file(s, "plain", kMiB, 61);
  }();
  // Without encryption a relay sees the file's bytes; that is the baseline.
  AlignedBuffer pattern(4096);
  fill_pattern(pattern.span(), 61, 0);
  const std::string needle(reinterpret_cast<const char*>(pattern.data()) + 1024, 64);
  {
    Relay relay(cluster.config().servers[0].address, Relay::Flip::none);
    auto reply = call_at(relay.address(), key_of(cluster.config()),
                         [&](rpc::OutMessage& out) { fill_read(out, plain_ino, 64 * 1024); });
    REQUIRE(reply.ok());
    CHECK(relay.seen_from_daemon().find(needle) != std::string::npos);
  }
  cluster.restart_with("encrypt = false", "encrypt = true");
  REQUIRE(cluster.config().encrypt);
  Session s(cluster.config());
  CHECK(check_contents(s, plain_ino, kMiB, 61) == "");
  const InodeId ino = write_file(s, "secret", kMiB, 62);
  CHECK(check_contents(s, ino, kMiB, 62) == "");
  // A client that does not ask for encryption gets it from the daemon.
  Relay relay(cluster.config().servers[0].address, Relay::Flip::none);
  auto reply = call_at(relay.address(), key_of(cluster.config()),
                       [&](rpc::OutMessage& out) { fill_read(out, plain_ino, 64 * 1024); });
  REQUIRE_MESSAGE(reply.ok(), reply.status().to_string());
  CHECK(pattern_mismatch((*reply)->data().span(), 61, 0) == std::nullopt);
  CHECK(relay.seen_from_daemon().size() > 64 * 1024);
  CHECK(relay.seen_from_daemon().find(needle) == std::string::npos);
}

TEST_CASE("daemons refuse a key file open to group or others, naming it and its mode") {
  TempDir dir("pvfs-keymode");
  Config c;
  c.secret_file = dir.path() / "cluster.key";
  c.mds = {{0, {"127.0.0.1", 0}, dir.path() / "mds0"}};
  c.servers = {{0, {"127.0.0.1", 0}, dir.path() / "server0"}};
  std::ofstream(dir.path() / "pvfs.toml") << c.render();
  REQUIRE(generate_secret(c.secret_file).ok());
  REQUIRE(::chmod(c.secret_file.c_str(), 0644) == 0);
  const char* root = std::getenv("PVFS_BUILD_ROOT");
  REQUIRE_MESSAGE(root, "PVFS_BUILD_ROOT is not set: run this test through meson test");
  for (const char* daemon : {"mds/pvfs-mds", "server/pvfs-server"}) {
    CAPTURE(daemon);
    const auto err = dir.path() / "stderr";
    const std::string command = fmt::format("'{}/{}' --config '{}' --id 0 2>'{}' >/dev/null", root,
                                            daemon, (dir.path() / "pvfs.toml").string(), err.string());
    const int raw = std::system(command.c_str());
    REQUIRE(WIFEXITED(raw));
    CHECK(WEXITSTATUS(raw) == 1);
    const std::string text = read_text(err);
    CAPTURE(text);
    CHECK(text.find("UNPROTECTED KEY FILE") != std::string::npos);
    CHECK(text.find(c.secret_file.string()) != std::string::npos);
    CHECK(text.find("0644") != std::string::npos);
    CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  }
}

TEST_CASE("with root_squash, root through a mount is nobody unless its address is exempt") {
  if (skip_without_fuse()) return;
  EditedCluster cluster(1);
  const auto mnt = cluster.mnt();
  cluster.mount();
  // Set up as root, before squashing: a directory anyone may write in and a
  // file that belongs to someone else.
  REQUIRE(::mkdir((mnt / "shared").c_str(), 0777) == 0);
  REQUIRE(::chmod((mnt / "shared").c_str(), 0777) == 0);
  int fd = ::open((mnt / "theirs").c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(fd >= 0);
  ::close(fd);
  REQUIRE(::chown((mnt / "theirs").c_str(), 1000, 1000) == 0);

  cluster.restart_with("root_squash = false", "root_squash = true");
  cluster.mount();
  errno = 0;
  CHECK(::chmod((mnt / "theirs").c_str(), 0666) == -1);
  CHECK(errno == EPERM);
  fd = ::open((mnt / "shared" / "mine").c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE_MESSAGE(fd >= 0, std::strerror(errno));
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  ::close(fd);
  CHECK(st.st_uid == 65534);
  CHECK(st.st_gid == 65534);
  // The root directory is root's and 0755: nobody may not create there.
  errno = 0;
  CHECK(::open((mnt / "in-root").c_str(), O_CREAT | O_WRONLY, 0644) == -1);
  CHECK(errno == EACCES);

  cluster.restart_with("root_squash_except = []", "root_squash_except = [\"127.0.0.1\"]");
  cluster.mount();
  CHECK(::chmod((mnt / "theirs").c_str(), 0666) == 0);
  fd = ::open((mnt / "shared" / "root-made").c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::fstat(fd, &st) == 0);
  ::close(fd);
  CHECK(st.st_uid == 0);
}

}  // namespace pvfs::test::security_test
