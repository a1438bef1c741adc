// The metadata server's namespace store alone, without RPC or FUSE: the
// cost per operation of what pvfs-mds does for a create (mknod), a stat
// (lookup, getattr), an unlink and the orphan collector's purge, each in
// its own LMDB transaction as the daemon runs them. Creates N files in one
// directory of a fresh store in DIR (put it on tmpfs to see the CPU cost,
// on a disk to see the flush), then looks them up, stats, unlinks and
// purges them. Prints "OP us/op" lines. Not a test; see docs/benchmarks.md.
//
//   mds_store_bench DIR [N]   (DIR must not exist yet; it is removed after)
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "mds/namespace_store.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace pvfs;
using namespace pvfs::mds;

void report(const char* op, Clock::time_point since, size_t n) {
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - since).count();
  std::printf("%-8s %8.2f us/op\n", op, us / static_cast<double>(n));
}

int fail(const char* what, const Status& st) {
  std::fprintf(stderr, "mds_store_bench: %s: %s\n", what, st.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s DIR [N]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const long n = argc == 3 ? std::strtol(argv[2], nullptr, 10) : 20000;
  if (n <= 0 || n > 10000000) {
    std::fprintf(stderr, "mds_store_bench: bad count '%s'\n", argv[2]);
    return 2;
  }
  if (std::filesystem::exists(dir)) {
    std::fprintf(stderr, "mds_store_bench: %s exists; give a new folder\n", dir.c_str());
    return 2;
  }
  int rc = 0;
  {
    auto opened = NamespaceStore::open(dir, FileSetId(0), Timespec{1, 0});
    if (!opened) return fail("open", opened.status());
    NamespaceStore& s = **opened;
    const Caller root{0, 0, {}};
    Layout layout;  // 4 objects, as a file on 4 storage servers
    layout.servers = {ServerId(1), ServerId(2), ServerId(3), ServerId(4)};
    std::vector<std::string> names;
    for (long i = 0; i < n; ++i) {
      char name[16];
      std::snprintf(name, sizeof name, "f%07ld", i);
      names.emplace_back(name);
    }
    std::vector<InodeId> inos;
    auto t = Clock::now();
    for (const auto& name : names) {
      auto made = s.mknod(root, s.root(), name, S_IFREG | 0644, 0, layout, Timespec{2, 0});
      if (!made) return fail("mknod", made.status());
      inos.push_back(made->ino);
    }
    report("mknod", t, names.size());
    t = Clock::now();
    for (const auto& name : names)
      if (auto found = s.lookup(root, s.root(), name); !found) return fail("lookup", found.status());
    report("lookup", t, names.size());
    t = Clock::now();
    for (InodeId ino : inos)
      if (auto attr = s.getattr(ino); !attr) return fail("getattr", attr.status());
    report("getattr", t, inos.size());
    t = Clock::now();
    for (const auto& name : names)
      if (auto gone = s.unlink(root, s.root(), name, false, Timespec{3, 0}); !gone)
        return fail("unlink", gone.status());
    report("unlink", t, names.size());
    // As the orphan collector does: batches of 1024, one commit each.
    t = Clock::now();
    size_t purged = 0;
    for (;;) {
      auto orphans = s.list_orphans(1024);
      if (!orphans) return fail("list_orphans", orphans.status());
      if (orphans->empty()) break;
      std::vector<InodeId> batch;
      for (const auto& o : *orphans) batch.push_back(o.ino);
      auto done = s.purge_many(batch);
      if (!done) return fail("purge_many", done.status());
      purged += *done;
    }
    report("purge", t, purged);
    if (purged != names.size()) {
      std::fprintf(stderr, "mds_store_bench: purged %zu of %zu files\n", purged, names.size());
      rc = 1;
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return rc;
}
