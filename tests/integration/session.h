// What the integration tests share: a synchronous client session on its own
// io_context, deterministic file contents that any range of can be made or
// checked on its own, 4 KiB-aligned buffers, and looking at a daemon from
// outside (pid, memory, log, object files). Test-only. A Session belongs to
// the thread that made it; the free functions are thread-safe.
#pragma once

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "fs/client.h"
#include "fs/mount_stats.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/connection.h"
#include "shared/rpc/io_context.h"
#include "shared/rpc/run_sync.h"
#include "tests/support/file_content.h"
#include "tests/support/test_cluster.h"

namespace pvfs::test {

// Options for a cluster of `n` storage servers, everything else default.
inline ClusterOptions with_servers(uint32_t n) {
  ClusterOptions options;
  options.servers = n;
  return options;
}

// uid 0: every permission check passes.
inline const Credentials kRoot{};

// A started Client on a private io_context, driven synchronously.
class Session {
 public:
  // Fails the test (REQUIRE) when the client cannot reach the cluster; use
  // only on the test's main thread. See connect() for other threads.
  explicit Session(const Config& config) {
    Status st = connect(config);
    REQUIRE_MESSAGE(st.ok(), st.to_string());
  }
  // For threads other than the test's: connect() reports instead of failing.
  struct Deferred {};
  explicit Session(Deferred) {}
  // Work still suspended in the io_context (the client's background loops)
  // refers to the client: unwound first, while the client lives.
  ~Session() {
    io_.drop_suspended();
    client_.reset();
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Status connect(const Config& config) {
    auto client = Client::create(io_, config);
    if (!client) return client.status();
    client_ = std::move(*client);
    return run(client_->start());
  }

  template <typename T>
  T run(asio::awaitable<T> task) {
    return rpc::run_sync(io_, std::move(task));
  }
  Client* operator->() { return client_.get(); }
  Client& client() { return *client_; }

  // Creates `name` in `parent` (O_RDWR); REQUIREs success.
  std::pair<Attr, std::shared_ptr<OpenFile>> create(InodeId parent, const std::string& name) {
    auto made = run(client_->create(kRoot, parent, name, 0644, O_RDWR));
    REQUIRE_MESSAGE(made.ok(), name, ": ", made.status().to_string());
    return *made;
  }
  Result<std::shared_ptr<OpenFile>> open(InodeId ino, int flags = O_RDWR) {
    return run(client_->open(kRoot, ino, flags));
  }
  Status write(OpenFile& file, uint64_t offset, std::span<const std::byte> data) {
    auto n = run(client_->write(kRoot, file, offset, data));
    if (!n) return n.status();
    if (*n != data.size()) return Status(Errc::io, fmt::format("short write: {}", *n));
    return {};
  }
  Result<size_t> read(OpenFile& file, uint64_t offset, std::span<std::byte> out) {
    return run(client_->read(kRoot, file, offset, out));
  }
  Status flush(OpenFile& file) { return run(client_->flush(kRoot, file)); }
  Status release(std::shared_ptr<OpenFile> file) {
    return run(client_->release(kRoot, std::move(file)));
  }
  Result<Attr> lookup(InodeId parent, const std::string& name) {
    return run(client_->lookup(kRoot, parent, name));
  }
  Result<Attr> getattr(InodeId ino) { return run(client_->getattr(kRoot, ino)); }
  Result<Attr> setattr(InodeId ino, const SetAttr& change) { return run(client_->setattr(kRoot, ino, change)); }

 private:
  rpc::IoContext io_;
  std::unique_ptr<Client> client_;
};

// 4 KiB-aligned bytes (docs/machines.md: unaligned copies are 3-5x slower here).
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t size)
      : data_(static_cast<std::byte*>(std::aligned_alloc(4096, round_up(size)))), size_(size) {
    REQUIRE(data_ != nullptr);
  }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  std::span<std::byte> span() { return {data_, size_}; }
  std::span<std::byte> span(size_t offset, size_t length) { return {data_ + offset, length}; }
  std::byte* data() { return data_; }
  size_t size() const { return size_; }

 private:
  static size_t round_up(size_t n) { return (std::max<size_t>(n, 1) + 4095) / 4096 * 4096; }
  std::byte* data_;
  size_t size_;
};

// Polls `done` every 20 ms until it holds or `limit` passes; returns whether it held.
template <typename Pred>
bool eventually(Pred done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Creates `file` empty (O_EXCL), as a program's open(O_CREAT) and close do.
inline void create_empty(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  REQUIRE_MESSAGE(fd >= 0, file.string(), ": ", std::strerror(errno));
  REQUIRE(::close(fd) == 0);
}

// Counter `key` of a mount's user.pvfs.client_stats (pvfsmount(8), what
// pvfs-ctl client shows), read from its root `mnt`.
inline uint64_t mount_counter(const std::filesystem::path& mnt, const std::string& key) {
  std::string value(64 * 1024, '\0');
  const ssize_t n = ::getxattr(mnt.c_str(), kClientStatsXattr, value.data(), value.size());
  REQUIRE_MESSAGE(n > 0, std::strerror(errno));
  value.resize(static_cast<size_t>(n));
  auto view = parse_mount_stats(value);
  REQUIRE_MESSAGE(view.ok(), view.status().to_string());
  auto it = view->counters.find(key);
  REQUIRE_MESSAGE(it != view->counters.end(), "no counter ", key);
  return it->second;
}

inline int daemon_pid(LocalCluster& cluster, const std::string& name) {
  for (const auto& d : cluster.daemons())
    if (d.name == name) return d.running ? d.pid : 0;
  return 0;
}

// Resident memory of process `pid` (VmRSS), or 0 when it is gone.
inline uint64_t rss_bytes(int pid) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
  return 0;
}

// The pid of the pvfsmount serving `mountpoint` (it daemonizes), or 0.
inline int pvfsmount_pid(const std::filesystem::path& mountpoint) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = read_text(entry.path() / "cmdline");
    std::vector<std::string> argv;
    for (size_t at = 0; at < cmdline.size();) {
      const size_t end = cmdline.find('\0', at);
      argv.push_back(cmdline.substr(at, end == std::string::npos ? std::string::npos : end - at));
      if (end == std::string::npos) break;
      at = end + 1;
    }
    if (argv.empty() || !argv[0].ends_with("pvfsmount")) continue;
    for (const auto& arg : argv)
      if (arg == mountpoint.string()) return std::stoi(name);
  }
  return 0;
}

// Where storage server `server` keeps object `index` of `ino` (ObjectStore's
// naming, seen from outside: the running server holds the store's lock).
inline std::filesystem::path object_file(const Config& config, uint32_t server, InodeId ino,
                                         uint32_t index) {
  return config.servers.at(server).data_dir / "objects" / fmt::format("{:02x}", ino.value & 0xff) /
         fmt::format("{:016x}.{}", ino.value, index);
}

// Bytes of `ino`'s objects on storage server `server` (file sizes, holes included).
inline uint64_t object_bytes_on(const Config& config, uint32_t server, InodeId ino) {
  namespace fs = std::filesystem;
  const fs::path dir = object_file(config, server, ino, 0).parent_path();
  const std::string prefix = fmt::format("{:016x}.", ino.value);
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) total += e.file_size(ec);
  return total;
}

// How many objects of `ino` exist on any storage server.
inline size_t object_count(const Config& config, InodeId ino) {
  namespace fs = std::filesystem;
  size_t n = 0;
  const std::string prefix = fmt::format("{:016x}.", ino.value);
  for (uint32_t s = 0; s < config.servers.size(); ++s) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(object_file(config, s, ino, 0).parent_path(), ec))
      n += e.path().filename().string().rfind(prefix, 0) == 0;
  }
  return n;
}

// One storage request to server `id`, on a connection of its own, synchronously.
inline Result<std::unique_ptr<rpc::InMessage>> ask_storage(
    const Config& config, uint32_t id, const std::function<void(proto::storage::Request::Builder)>& fill) {
  asio::io_context io(1);
  std::optional<Result<std::unique_ptr<rpc::InMessage>>> out;
  auto key = load_secret(config.secret_file);
  REQUIRE(key.ok());
  // A named lambda: the coroutine refers to its captures, which must
  // outlive io.run().
  auto ask = [&]() -> asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> {
    auto conn = co_await rpc::Connection::connect(config.find_server(id)->address, *key,
                                                  std::chrono::milliseconds(2000));
    if (!conn) co_return conn.status();
    (*conn)->start({});
    rpc::OutMessage msg;
    fill(msg.init_body<proto::storage::Request>());
    auto reply = co_await (*conn)->call(msg, {}, std::chrono::milliseconds(5000));
    (*conn)->close();
    co_return reply;
  };
  asio::co_spawn(io, ask(), [&](std::exception_ptr e, Result<std::unique_ptr<rpc::InMessage>> r) {
    out.emplace(e ? Result<std::unique_ptr<rpc::InMessage>>(Status(Errc::io, "internal error")) : std::move(r));
  });
  io.run();
  return std::move(*out);
}

}  // namespace pvfs::test
