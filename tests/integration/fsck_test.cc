// pvfs-ctl fsck end to end: the real binary (path in $PVFS_CTL) against a
// real cluster with a FUSE mount, corrupted on purpose on disk and through
// the storage protocol: a deleted object file, a fragment no redirect names,
// a redirect whose fragment file is deleted, an object of no file and data
// past a file's size. fsck must name each, --repair must fix each so the
// mount shows the result, and a second fsck must be clean. A healthy cluster
// full of redirects must give no finding, and a dead server must be named.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <sstream>

#include "tests/integration/session.h"
#include "tests/support/run_tool.h"

namespace pvfs::test::fsck_test {
namespace {

namespace fs = std::filesystem;
namespace sp = proto::storage;
constexpr uint64_t kMiB = uint64_t{1} << 20;

Outcome fsck(TestCluster& c, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"fsck", "-c", c.cluster().config_path().string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_tool("PVFS_CTL", c.dir(), args);
}

size_t count_lines(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

// Writes `size` bytes of `seed`'s pattern as file `name` with dispatch `policy`.
InodeId write_file(Session& s, const std::string& name, uint64_t size, uint64_t seed, sched::Policy policy) {
  s->set_dispatch_policy(policy);
  auto [attr, file] = s.create(kRootInode, name);
  AlignedBuffer buf(size);
  fill_pattern(buf.span(), seed, 0);
  REQUIRE(s.write(*file, 0, buf.span()).ok());
  REQUIRE(s.release(file).ok());
  return attr.ino;
}

Layout layout_of(Session& s, InodeId ino) {
  auto attr = s.run(s->getattr(kRoot, ino));
  REQUIRE(attr.ok());
  return attr->layout;
}

// The whole file at `path` through the mount; fails the test on a read error.
std::vector<std::byte> read_all(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE_MESSAGE(fd >= 0, path, ": ", std::strerror(errno));
  std::vector<std::byte> out;
  std::vector<std::byte> buf(kMiB);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      FAIL(path, ": read: ", std::strerror(err));
    }
    if (n == 0) break;
    out.insert(out.end(), buf.begin(), buf.begin() + n);
  }
  ::close(fd);
  return out;
}

struct RemoteEntry {
  ObjectId object;
  uint64_t offset, length;
  uint32_t server;
  uint64_t fragment;
};

// The redirected ranges storage server `id` lists (first page is enough here).
std::vector<RemoteEntry> redirects_on(const Config& config, uint32_t id) {
  auto reply = ask_storage(config, id, [](sp::Request::Builder r) { r.initScanRedirects().setMax(4096); });
  REQUIRE_MESSAGE(reply.ok(), reply.status().to_string());
  std::vector<RemoteEntry> out;
  for (auto e : (*reply)->body<sp::Reply>().getRedirects().getEntries())
    if (e.getLength())
      out.push_back({ObjectId{InodeId(e.getObject().getIno()), e.getObject().getIndex()}, e.getOffset(),
                     e.getLength(), e.getServer(), e.getFragment()});
  return out;
}

fs::path fragment_file(const Config& config, uint32_t server, uint64_t fragment) {
  return config.servers.at(server).data_dir / "fragments" / "objects" / fmt::format("{:02x}", fragment & 0xff) /
         fmt::format("{:016x}.0", fragment);
}

// Stores `bytes` bytes on server `id` as object `object` (fragment 0) or as
// that fragment of it.
void store(const Config& config, uint32_t id, ObjectId object, uint64_t offset, size_t bytes, uint64_t fragment) {
  asio::io_context io(1);
  auto key = load_secret(config.secret_file);
  REQUIRE(key.ok());
  std::optional<Status> result;
  auto ask = [&]() -> asio::awaitable<Status> {
    auto conn = co_await rpc::Connection::connect(config.find_server(id)->address, *key,
                                                  std::chrono::milliseconds(2000));
    if (!conn) co_return conn.status();
    (*conn)->start({});
    rpc::OutMessage msg;
    auto w = msg.init_body<sp::Request>().initWrite();
    w.initObject().setIno(object.ino.value);
    w.getObject().setIndex(object.index);
    w.setOffset(offset);
    w.setFragment(fragment);
    AlignedBuffer data(bytes);
    fill_pattern(data.span(), 4242, 0);
    auto reply = co_await (*conn)->call(msg, data.span(), std::chrono::milliseconds(5000));
    (*conn)->close();
    co_return reply.status();
  };
  asio::co_spawn(io, ask(), [&](std::exception_ptr e, Status st) { result = e ? Status(Errc::io, "exception") : st; });
  io.run();
  REQUIRE_MESSAGE(result->ok(), result->to_string());
}

}  // namespace

TEST_CASE("fsck finds a lost object, an orphan fragment, a stale redirect, an orphan object and a short size, "
          "and --repair fixes each") {
  if (skip_without_fuse()) return;
  ClusterOptions options;
  options.servers = 4;
  options.maintainer_threads = 0;  // pull-backs would tidy the redirects up first
  TestCluster c(options, true);
  const Config& config = c.config();
  Session s(config);

  // A: every byte at home; its object 1 file is deleted on disk.
  const uint64_t a_size = 3 * kMiB + 5000;
  const InodeId a = write_file(s, "lost", a_size, 11, sched::Policy::fixed);
  const Layout a_layout = layout_of(s, a);
  const uint32_t a_home1 = a_layout.servers[1].value;
  REQUIRE(fs::remove(object_file(config, a_home1, a, 1)));

  // B: most pieces redirected; one fragment file (of an object whose home
  // also has bytes) is deleted on its holder.
  // Random dispatch leaves no such object about once in 70 files: another
  // file then, as consistent as the first (fsck finds nothing in it).
  const uint64_t b_size = 8 * kMiB + 777;
  InodeId b{};
  std::string b_name;
  int b_files = 0;
  std::optional<std::pair<uint32_t, RemoteEntry>> stale;
  for (int attempt = 0; attempt < 8 && !stale; ++attempt) {
    b_name = attempt == 0 ? "redirected" : fmt::format("redirected.{}", attempt);
    b = write_file(s, b_name, b_size, 22, sched::Policy::random);
    ++b_files;
    for (const auto& server : config.servers)
      for (const auto& e : redirects_on(config, server.id))
        if (!stale && e.object.ino == b && fs::exists(object_file(config, server.id, b, e.object.index)))
          stale = std::make_pair(server.id, e);
  }
  REQUIRE_MESSAGE(stale.has_value(), "no redirected range with bytes at home in 8 files: random dispatch keeps all home?");
  const RemoteEntry gone = stale->second;
  REQUIRE(fs::remove(fragment_file(config, gone.server, gone.fragment)));

  // C: a fragment of B's object 0 nobody recorded, written an hour ago.
  const uint32_t b_home0 = layout_of(s, b).servers[0].value;
  const uint32_t holder = (b_home0 + 1) % 4;
  const uint64_t orphan_fragment = 0x5eed000000000001;
  store(config, holder, ObjectId{b, 0}, 0, 65536, orphan_fragment);
  fs::last_write_time(fragment_file(config, holder, orphan_fragment),
                      fs::file_time_type::clock::now() - std::chrono::hours(1));

  // D: an object of an inode no file has.
  const InodeId nobody(a.value + 100000);
  store(config, 2, ObjectId{nobody, 0}, 0, 8192, 0);

  // E: 100 KiB at the MDS, but 4 KiB of its object 1 (file bytes past 1 MiB) on disk.
  const InodeId e = write_file(s, "short", 100 * 1024, 33, sched::Policy::fixed);
  const uint32_t e_home1 = layout_of(s, e).servers[1].value;
  store(config, e_home1, ObjectId{e, 1}, 0, 4096, 0);
  const uint64_t e_true_size = kMiB + 4096;

  const Outcome found = fsck(c);
  CAPTURE(found);
  CHECK(found.status == 1);
  CHECK(found.out.find(fmt::format("missing object: object 1 of inode {} is not on server {}", a.value,
                                   a_home1)) != std::string::npos);
  CHECK(found.out.find(fmt::format("stale redirect: bytes [{}, {}) of object {} of inode {} on server {} point at "
                                   "fragment {:x} on server {}",
                                   gone.offset, gone.offset + gone.length, gone.object.index, b.value, stale->first,
                                   gone.fragment, gone.server)) != std::string::npos);
  CHECK(found.out.find(fmt::format("orphan fragment: {:x} of object 0 of inode {} on server {}", orphan_fragment,
                                   b.value, holder)) != std::string::npos);
  CHECK(found.out.find(fmt::format("orphan object: object 0 of inode {} on server 2 (8192 bytes)", nobody.value)) !=
        std::string::npos);
  CHECK(found.out.find(fmt::format("size mismatch: inode {} is 102400 bytes at the metadata server, but its data "
                                   "on server {} reaches byte {}",
                                   e.value, e_home1, e_true_size)) != std::string::npos);
  CHECK(found.out.find(fmt::format("{} files, ", 2 + b_files)) != std::string::npos);
  CHECK(found.out.find(": 5 problems (0 repaired)") != std::string::npos);

  const Outcome fixed = fsck(c, {"--repair"});
  CAPTURE(fixed);
  CHECK(fixed.status == 0);
  CHECK(count_lines(fixed.out, "  repaired: ") == 5);
  CHECK(fixed.out.find(fmt::format("  repaired: created object 1 of inode {} on server {} empty", a.value,
                                   a_home1)) != std::string::npos);
  CHECK(fixed.out.find(": 5 problems (5 repaired)") != std::string::npos);

  const Outcome again = fsck(c);
  CAPTURE(again);
  CHECK(again.status == 0);
  CHECK(again.out.find(": 0 problems (0 repaired)") != std::string::npos);

  // What a user sees through the mount.
  const auto a_bytes = read_all(c.mnt() / "lost");
  REQUIRE(a_bytes.size() == a_size);
  CHECK_FALSE(pattern_mismatch(std::span(a_bytes).first(kMiB), 11, 0).has_value());
  CHECK_FALSE(nonzero_at(std::span(a_bytes).subspan(kMiB, kMiB), kMiB).has_value());  // object 1's first stripe: zeros
  CHECK_FALSE(pattern_mismatch(std::span(a_bytes).subspan(2 * kMiB, kMiB), 11, 2 * kMiB).has_value());

  const auto b_bytes = read_all(c.mnt() / b_name);  // the stale range reads without EIO
  CHECK(b_bytes.size() == b_size);

  CHECK(fs::exists(object_file(config, a_home1, a, 1)));
  CHECK_FALSE(fs::exists(object_file(config, 2, nobody, 0)));
  CHECK_FALSE(fs::exists(fragment_file(config, holder, orphan_fragment)));
  struct ::stat st {};
  CHECK(eventually([&] {
    return ::stat((c.mnt() / "short").c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) == e_true_size;
  }, std::chrono::seconds(5)));
  const auto e_bytes = read_all(c.mnt() / "short");
  REQUIRE(e_bytes.size() == e_true_size);
  CHECK_FALSE(pattern_mismatch(std::span(e_bytes).first(100 * 1024), 33, 0).has_value());
  CHECK_FALSE(pattern_mismatch(std::span(e_bytes).subspan(kMiB, 4096), 4242, 0).has_value());
}

TEST_CASE("after heavy redirected writes fsck finds nothing; a dead server is named and nothing invented") {
  if (skip_without_fuse()) return;
  ClusterOptions options;
  options.servers = 4;
  options.maintainer_threads = 0;
  TestCluster c(options, true);
  const Config& config = c.config();
  Session s(config);
  for (int i = 0; i < 6; ++i)
    write_file(s, fmt::format("r{}", i), 6 * kMiB + 4096 * i + 99, 100 + i, sched::Policy::random);
  // Overwrites: newer local and remote entries over older ones.
  {
    s->set_dispatch_policy(sched::Policy::random);
    auto file = s.open(write_file(s, "over", 4 * kMiB, 7, sched::Policy::fixed));
    REQUIRE(file.ok());
    AlignedBuffer buf(2 * kMiB);
    fill_pattern(buf.span(), 8, kMiB);
    REQUIRE(s.write(**file, kMiB, buf.span()).ok());
    REQUIRE(s.release(*file).ok());
  }
  // Sparse (holes inside every object; holes as large as whole objects are
  // in tests/integration/space_test.cc); truncated up; unlinked but open.
  const int sparse = ::open((c.mnt() / "sparse").c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(sparse >= 0);
  for (uint64_t at : {uint64_t{0}, kMiB + 5, 2 * kMiB + 5, 3 * kMiB + 5, 7 * kMiB + 10})
    CHECK(::pwrite(sparse, "data", 4, static_cast<off_t>(at)) == 4);
  ::close(sparse);
  const int grown = ::open((c.mnt() / "grown").c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(grown >= 0);
  CHECK(::ftruncate(grown, 5 * kMiB) == 0);
  ::close(grown);
  const int held = ::open((c.mnt() / "held").c_str(), O_CREAT | O_RDWR, 0644);
  REQUIRE(held >= 0);
  std::vector<char> chunk(kMiB, 'h');
  CHECK(::write(held, chunk.data(), chunk.size()) == static_cast<ssize_t>(chunk.size()));
  CHECK(::fsync(held) == 0);
  REQUIRE(::unlink((c.mnt() / "held").c_str()) == 0);

  size_t remote = 0;
  for (const auto& server : config.servers) remote += redirects_on(config, server.id).size();
  CHECK(remote > 0);  // or this proves nothing about redirects

  const Outcome clean = fsck(c);
  CAPTURE(clean);
  CHECK(clean.status == 0);
  CHECK(clean.out.find(" objects on 4 servers checked: 0 problems (0 repaired)") != std::string::npos);
  CHECK(clean.out.find("10 files, ") != std::string::npos);  // 6 + over + sparse + grown + held

  REQUIRE(c.cluster().kill_daemon("server3", SIGKILL).ok());
  REQUIRE(eventually([&] { return daemon_pid(c.cluster(), "server3") == 0; }));
  const Outcome partial = fsck(c, {"-t", "2000"});
  CAPTURE(partial);
  CHECK(partial.status == 1);
  CHECK(partial.err.find("pvfs-ctl: fsck: server3 (") != std::string::npos);
  CHECK(partial.out.find("on 3 servers checked: 0 problems") != std::string::npos);
  ::close(held);
}

}  // namespace pvfs::test::fsck_test
