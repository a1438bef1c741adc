// The data path end to end on a real cluster (pvfs-mds and four
// pvfs-server processes on loopback) through the client library: striping,
// concurrent writers, holes, truncation, close-to-open visibility, and
// unlinked files' objects being collected.
#include <fcntl.h>

#include <barrier>
#include <random>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "shared/rpc/fan_out.h"
#include "tests/integration/session.h"

namespace pvfs::test::data_path_test {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// Reads [offset, offset+length) in pieces of at most `chunk` bytes and checks
// every byte against `expect(span, file offset)`, which returns the offset of
// the first wrong byte. Returns a description of the first problem, or "".
template <typename Expect>
std::string verify_range(Session& s, OpenFile& file, uint64_t offset, uint64_t length,
                         uint64_t chunk, Expect expect) {
  AlignedBuffer buf(chunk);
  for (uint64_t done = 0; done < length;) {
    const uint64_t n = std::min(chunk, length - done);
    auto got = s.read(file, offset + done, buf.span(0, n));
    if (!got) return fmt::format("read at {}: {}", offset + done, got.status().to_string());
    if (*got != n) return fmt::format("read at {} returned {} of {} bytes", offset + done, *got, n);
    if (auto bad = expect(buf.span(0, n), offset + done))
      return fmt::format("wrong byte at file offset {}", *bad);
    done += n;
  }
  return "";
}

auto pattern(uint64_t seed) {
  return [seed](std::span<const std::byte> got, uint64_t at) { return pattern_mismatch(got, seed, at); };
}
auto zeros() {
  return [](std::span<const std::byte> got, uint64_t at) { return nonzero_at(got, at); };
}

}  // namespace

TEST_CASE("a 1 GiB file written to 4 servers reads back bit-identical and is spread evenly") {
  TestCluster cluster(with_servers(4));
  constexpr uint64_t kFileBytes = uint64_t{1} << 30;
  constexpr uint64_t kChunk = 8 * kMiB;
  constexpr uint64_t kSeed = 0x1618;
  InodeId ino;
  {
    Session writer(cluster.config());
    auto [attr, file] = writer.create(kRootInode, "big");
    ino = attr.ino;
    REQUIRE(attr.layout.stripe_count() == 4);
    AlignedBuffer buf(kChunk);
    for (uint64_t off = 0; off < kFileBytes; off += kChunk) {
      fill_pattern(buf.span(), kSeed, off);
      Status st = writer.write(*file, off, buf.span());
      REQUIRE_MESSAGE(st.ok(), "write at ", off, ": ", st.to_string());
    }
    REQUIRE(writer.release(file).ok());
  }

  // Two-choice may have sent a few pieces away from a busy home server
  // (a loaded CI machine does); the idle servers pull them back, and then
  // each home object holds its quarter.
  const auto even = [&] {
    for (uint32_t s = 0; s < 4; ++s)
      if (object_bytes_on(cluster.config(), s, ino) != kFileBytes / 4) return false;
    return true;
  };
  CHECK(eventually(even, std::chrono::seconds(30)));
  for (uint32_t s = 0; s < 4; ++s) {
    CAPTURE(s);
    CHECK(object_bytes_on(cluster.config(), s, ino) == kFileBytes / 4);
  }

  Session reader(cluster.config());
  auto attr = reader.getattr(ino);
  REQUIRE(attr.ok());
  CHECK(attr->size == kFileBytes);
  auto file = reader.open(ino, O_RDONLY);
  REQUIRE(file.ok());
  CHECK(verify_range(reader, **file, 0, kFileBytes, kChunk, pattern(kSeed)) == "");
  // Nothing past the end.
  AlignedBuffer tail(4096);
  auto past = reader.read(**file, kFileBytes, tail.span());
  REQUIRE(past.ok());
  CHECK(*past == 0);
  CHECK(reader.release(*file).ok());
}

TEST_CASE("writers in four clients and several coroutines each fill disjoint ranges of one file") {
  TestCluster cluster(with_servers(4));
  constexpr uint64_t kPiece = 100003;  // unaligned: pieces straddle stripe boundaries
  constexpr int kWriters = 4;
  constexpr uint64_t kPieces = 240;
  constexpr uint64_t kSeed = 77;
  InodeId ino;
  {
    Session s(cluster.config());
    auto [attr, file] = s.create(kRootInode, "shared");
    ino = attr.ino;
    REQUIRE(s.release(file).ok());
  }

  std::vector<std::string> errors(kWriters);
  std::barrier start(kWriters);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      Session s{Session::Deferred{}};
      Status st = s.connect(cluster.config());
      start.arrive_and_wait();
      if (!st.ok()) {
        errors[w] = "connect: " + st.to_string();
        return;
      }
      auto file = s.open(ino);
      if (!file) {
        errors[w] = "open: " + file.status().to_string();
        return;
      }
      // Each writer owns pieces w, w+4, w+8, ...; four of them in flight at once.
      std::vector<std::unique_ptr<AlignedBuffer>> bufs;
      for (uint64_t first = w; first < kPieces && errors[w].empty(); first += 4 * kWriters) {
        std::vector<asio::awaitable<Status>> batch;
        for (uint64_t p = first; p < std::min(kPieces, first + 4 * kWriters); p += kWriters) {
          auto buf = std::make_unique<AlignedBuffer>(kPiece);
          fill_pattern(buf->span(), kSeed, p * kPiece);
          batch.push_back([](Client& c, OpenFile& f, uint64_t off,
                             std::span<const std::byte> data) -> asio::awaitable<Status> {
            auto n = co_await c.write(kRoot, f, off, data);
            co_return n.status();
          }(s.client(), **file, p * kPiece, buf->span()));
          bufs.push_back(std::move(buf));
        }
        Status batch_st = s.run(rpc::run_all(std::move(batch)));
        if (!batch_st.ok()) errors[w] = "write: " + batch_st.to_string();
        bufs.clear();
      }
      Status released = s.release(*file);
      if (errors[w].empty() && !released.ok()) errors[w] = "release: " + released.to_string();
    });
  }
  for (auto& t : threads) t.join();
  for (int w = 0; w < kWriters; ++w) CHECK_MESSAGE(errors[w] == "", "writer ", w);

  Session reader(cluster.config());
  auto attr = reader.getattr(ino);
  REQUIRE(attr.ok());
  CHECK(attr->size == kPieces * kPiece);
  auto file = reader.open(ino, O_RDONLY);
  REQUIRE(file.ok());
  CHECK(verify_range(reader, **file, 0, kPieces * kPiece, 3 * kMiB, pattern(kSeed)) == "");
  CHECK(reader.release(*file).ok());
}

TEST_CASE("a hole between two writes reads as zeros and the size ends at the last byte") {
  TestCluster cluster(with_servers(4));
  constexpr uint64_t kFar = 100 * kMiB;
  Session s(cluster.config());
  auto [attr, file] = s.create(kRootInode, "sparse");
  AlignedBuffer buf(4096);
  fill_pattern(buf.span(), 1, 0);
  REQUIRE(s.write(*file, 0, buf.span()).ok());
  fill_pattern(buf.span(), 1, kFar);
  REQUIRE(s.write(*file, kFar, buf.span()).ok());
  REQUIRE(s.release(file).ok());

  Session other(cluster.config());
  auto now = other.getattr(attr.ino);
  REQUIRE(now.ok());
  CHECK(now->size == kFar + 4096);
  auto f = other.open(attr.ino, O_RDONLY);
  REQUIRE(f.ok());
  CHECK(verify_range(other, **f, 0, 4096, 4096, pattern(1)) == "");
  CHECK(verify_range(other, **f, 4096, kFar - 4096, 8 * kMiB, zeros()) == "");
  CHECK(verify_range(other, **f, kFar, 4096, 4096, pattern(1)) == "");
  // A read that runs past the end is short.
  auto got = other.read(**f, kFar + 4000, buf.span());
  REQUIRE(got.ok());
  CHECK(*got == 96);
  CHECK(other.release(*f).ok());
}

TEST_CASE("tiny unaligned writes across stripe boundaries land exactly where they were aimed") {
  ClusterOptions options = with_servers(4);
  options.stripe_size = 64 * 1024;
  TestCluster cluster(options);
  constexpr uint64_t kStripe = 64 * 1024;
  constexpr uint64_t kSpan = 12 * kStripe;  // three rounds over the four servers
  std::vector<std::byte> model(kSpan + 64, std::byte{0});
  uint64_t model_size = 0;
  std::mt19937_64 rng(20240601);

  Session s(cluster.config());
  auto [attr, file] = s.create(kRootInode, "tiny");
  REQUIRE(attr.layout.stripe_size == kStripe);
  for (int i = 0; i < 300; ++i) {
    // Aim at a stripe boundary, a few bytes either side.
    const uint64_t boundary = (1 + rng() % 11) * kStripe;
    const uint64_t len = 1 + rng() % 13;
    const uint64_t off = boundary - std::min<uint64_t>(boundary, rng() % (len + 2));
    std::vector<std::byte> data(len);
    for (auto& b : data) b = std::byte(rng() | 1);  // never zero, so a lost write shows
    REQUIRE(s.write(*file, off, data).ok());
    std::copy(data.begin(), data.end(), model.begin() + off);
    model_size = std::max(model_size, off + len);
  }
  REQUIRE(s.release(file).ok());

  Session other(cluster.config());
  auto f = other.open(attr.ino, O_RDONLY);
  REQUIRE(f.ok());
  CHECK((*f)->inode->size == model_size);
  AlignedBuffer buf(model_size);
  auto got = other.read(**f, 0, buf.span());
  REQUIRE(got.ok());
  REQUIRE(*got == model_size);
  for (uint64_t i = 0; i < model_size; ++i) {
    if (buf.data()[i] != model[i]) {
      FAIL_CHECK("byte ", i, " differs");
      break;
    }
  }
  CHECK(other.release(*f).ok());
}

TEST_CASE("truncating a file and extending it again shows zeros where the cut bytes were") {
  TestCluster cluster(with_servers(4));
  constexpr uint64_t kOriginal = 3 * kMiB + 5;
  constexpr uint64_t kCut = kMiB + 4097;  // inside the second stripe
  constexpr uint64_t kSeed = 3;
  Session s(cluster.config());
  auto [attr, file] = s.create(kRootInode, "trunc");
  AlignedBuffer buf(kOriginal);
  fill_pattern(buf.span(), kSeed, 0);
  REQUIRE(s.write(*file, 0, buf.span()).ok());
  REQUIRE(s.flush(*file).ok());

  SetAttr cut;
  cut.mask = kSetSize;
  cut.size = kCut;
  auto after_cut = s.run(s->setattr(kRoot, attr.ino, cut));
  REQUIRE(after_cut.ok());
  CHECK(after_cut->size == kCut);
  auto short_read = s.read(*file, 0, buf.span());
  REQUIRE(short_read.ok());
  CHECK(*short_read == kCut);

  SetAttr extend;
  extend.mask = kSetSize;
  extend.size = kOriginal;
  auto after_extend = s.run(s->setattr(kRoot, attr.ino, extend));
  REQUIRE(after_extend.ok());
  CHECK(after_extend->size == kOriginal);
  CHECK(verify_range(s, *file, 0, kCut, kMiB, pattern(kSeed)) == "");
  CHECK(verify_range(s, *file, kCut, kOriginal - kCut, kMiB, zeros()) == "");

  // Extending by writing further on: the gap reads as zeros too.
  const uint64_t far = 5 * kMiB;
  fill_pattern(buf.span(0, 10), kSeed, far);
  REQUIRE(s.write(*file, far, buf.span(0, 10)).ok());
  REQUIRE(s.release(file).ok());

  Session other(cluster.config());
  auto f = other.open(attr.ino, O_RDONLY);
  REQUIRE(f.ok());
  CHECK((*f)->inode->size == far + 10);
  CHECK(verify_range(other, **f, 0, kCut, kMiB, pattern(kSeed)) == "");
  CHECK(verify_range(other, **f, kCut, far - kCut, kMiB, zeros()) == "");
  CHECK(verify_range(other, **f, far, 10, 10, pattern(kSeed)) == "");
  CHECK(other.release(*f).ok());
}

TEST_CASE("a layout whose stripes one request cannot carry is refused, and files keep working") {
  ClusterOptions options = with_servers(2);
  options.rpc_timeout_ms = 3000;
  TestCluster cluster(options);
  Session s(cluster.config());
  auto dir = s.run(s->mkdir(kRoot, kRootInode, "d", 0755));
  REQUIRE(dir.ok());
  // 128 MiB stripes: past the 64 MiB a storage request may carry.
  CHECK(s.run(s->setxattr(kRoot, dir->ino, kLayoutXattr, "stripe_size=134217728", 0)).code() ==
        Errc::invalid_argument);
  REQUIRE(s.run(s->setxattr(kRoot, dir->ino, kLayoutXattr, "stripe_size=65536", 0)).ok());
  auto [attr, file] = s.create(dir->ino, "f");
  CHECK(attr.layout.stripe_size == 65536);
  AlignedBuffer buf(3 * kMiB);
  fill_pattern(buf.span(), 21, 0);
  REQUIRE(s.write(*file, 0, buf.span()).ok());
  CHECK(verify_range(s, *file, 0, 3 * kMiB, kMiB, pattern(21)) == "");
  CHECK(s.release(file).ok());
}

TEST_CASE("a file closed by one client shows its new size and bytes when another opens it") {
  TestCluster cluster(with_servers(4));
  constexpr uint64_t kBytes = 2 * kMiB + 17;
  Session a(cluster.config());
  Session b(cluster.config());
  auto [attr, fa] = a.create(kRootInode, "c2o");

  // B has seen the file empty before A writes.
  auto fb = b.open(attr.ino, O_RDONLY);
  REQUIRE(fb.ok());
  AlignedBuffer buf(kBytes);
  auto empty = b.read(**fb, 0, buf.span());
  REQUIRE(empty.ok());
  CHECK(*empty == 0);
  REQUIRE(b.release(*fb).ok());

  fill_pattern(buf.span(), 9, 0);
  REQUIRE(a.write(*fa, 0, buf.span()).ok());
  REQUIRE(a.release(fa).ok());

  auto seen = b.lookup(kRootInode, "c2o");
  REQUIRE(seen.ok());
  CHECK(seen->size == kBytes);
  fb = b.open(attr.ino, O_RDONLY);
  REQUIRE(fb.ok());
  std::memset(buf.data(), 0, kBytes);
  auto got = b.read(**fb, 0, buf.span());
  REQUIRE(got.ok());
  CHECK(*got == kBytes);
  CHECK(pattern_mismatch(buf.span(), 9, 0) == std::nullopt);
  CHECK(b.release(*fb).ok());
}

TEST_CASE("an unlinked file's objects disappear from every storage server") {
  TestCluster cluster(with_servers(4));
  Session s(cluster.config());
  auto [attr, file] = s.create(kRootInode, "doomed");
  AlignedBuffer buf(4 * kMiB + 1);
  fill_pattern(buf.span(), 5, 0);
  REQUIRE(s.write(*file, 0, buf.span()).ok());
  REQUIRE(s.release(file).ok());
  // Once any piece sent away by two-choice is back home: one object per server.
  REQUIRE(eventually([&] { return object_count(cluster.config(), attr.ino) == 4; }, std::chrono::seconds(30)));

  REQUIRE(s.run(s->unlink(kRoot, kRootInode, "doomed")).ok());
  CHECK(s.lookup(kRootInode, "doomed").code() == Errc::not_found);
  CHECK(eventually([&] { return object_count(cluster.config(), attr.ino) == 0; }));
}

TEST_CASE("an unlinked file stays readable through an open handle until its last release") {
  TestCluster cluster(with_servers(4));
  Session s(cluster.config());
  auto [held_attr, held] = s.create(kRootInode, "held");
  AlignedBuffer buf(4 * kMiB);
  fill_pattern(buf.span(), 6, 0);
  REQUIRE(s.write(*held, 0, buf.span()).ok());
  REQUIRE(s.flush(*held).ok());
  auto [victim_attr, victim] = s.create(kRootInode, "victim");
  REQUIRE(s.write(*victim, 0, buf.span()).ok());
  REQUIRE(s.release(victim).ok());

  REQUIRE(s.run(s->unlink(kRoot, kRootInode, "held")).ok());
  REQUIRE(s.run(s->unlink(kRoot, kRootInode, "victim")).ok());
  // Once the closed file's objects are gone, the collector has run since
  // both unlinks; the open one must have been spared.
  REQUIRE(eventually([&] { return object_count(cluster.config(), victim_attr.ino) == 0; }));
  CHECK(s.lookup(kRootInode, "held").code() == Errc::not_found);
  // Four once any piece two-choice sent away is back home.
  CHECK(eventually([&] { return object_count(cluster.config(), held_attr.ino) == 4; }));
  std::memset(buf.data(), 0, buf.size());
  auto got = s.read(*held, 0, buf.span());
  REQUIRE(got.ok());
  CHECK(*got == 4 * kMiB);
  CHECK(pattern_mismatch(buf.span(), 6, 0) == std::nullopt);

  REQUIRE(s.release(held).ok());
  CHECK(eventually([&] { return object_count(cluster.config(), held_attr.ino) == 0; }));
}

}  // namespace pvfs::test::data_path_test

