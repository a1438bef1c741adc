// Redirect table micro-benchmark (the two-choice paper's Fig. 12): one
// object's log under a write-heavy stream of redirects over random ranges
// of [0, 100 MB), with local writes and pull-backs mixed in, persisted in
// a real LMDB environment (SchedDb, as pvfs-server does). Prints, as the
// stream grows, the log's length and the latency of create (append +
// commit) and query, and the ratio of create to a bare LMDB commit of one
// key measured in the same run. Not a test; see docs/two-choice.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "policy/redirect/redirect_table.h"
#include "server/sched_db.h"
#include "shared/lmdb/lmdb_env.h"

namespace {

using Clock = std::chrono::steady_clock;
using pvfs::redirect::Entry;
using pvfs::redirect::Location;

double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

struct Stats {
  std::vector<double> samples;
  double mean() const {
    double s = 0;
    for (double x : samples) s += x;
    return samples.empty() ? 0 : s / samples.size();
  }
  double p99() {
    if (samples.empty()) return 0;
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() * 99 / 100];
  }
};

}  // namespace

int main(int argc, char** argv) {
  const uint64_t ops = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  const auto dir = std::filesystem::temp_directory_path() / ("pvfs-redirect-bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto db = pvfs::SchedDb::open(dir);
  if (!db) {
    std::fprintf(stderr, "redirect_table: %s\n", db.status().to_string().c_str());
    return 1;
  }
  // Baseline: one bare LMDB commit of one small key, the floor of any create.
  Stats bare;
  {
    auto env = pvfs::lmdb::Env::open(dir / "bare");
    auto d = (*env)->open_db("x");
    for (int i = 0; i < 2000; ++i) {
      const auto t = Clock::now();
      auto txn = (*env)->begin_write();
      (void)txn->put(*d, "key" + std::to_string(i), std::string(37, 'v'));
      (void)txn->commit();
      bare.samples.push_back(us_since(t));
    }
  }
  pvfs::redirect::RedirectTable table;
  const pvfs::ObjectId object{pvfs::InodeId(42), 0};
  std::mt19937_64 rng(1);
  constexpr uint64_t kSpace = 100'000'000, kPage = 4096;
  Stats create, query;
  std::printf("%10s %10s %14s %14s %14s %14s %16s\n", "ops", "log len", "create mean us",
              "create p99 us", "query mean us", "query p99 us", "create/bare LMDB");
  uint64_t next_report = 1000;
  for (uint64_t op = 1; op <= ops; ++op) {
    const uint64_t len = (16 + rng() % 1008) * kPage;  // 64 KiB .. 4 MiB
    const uint64_t begin = (rng() % ((kSpace - len) / kPage)) * kPage;
    const int kind = static_cast<int>(rng() % 10);
    Entry e{table.next_seq(), begin, begin + len, Location::home()};
    if (kind < 7) e.where = Location::remote(pvfs::ServerId(1 + rng() % 7), rng() | 1, begin);
    if (kind == 9) {  // a maintainer pulls the oldest remote entry home
      const auto* log = table.find(object);
      if (log && log->oldest_remote()) {
        const Entry old = *log->oldest_remote();
        e = Entry{pvfs::redirect::RedirectTable::pulled_seq(old.seq), old.begin, old.end, Location::home()};
      }
    }
    auto t = Clock::now();
    if (!e.where.local || table.overlaps_remote(object, e.begin, e.end)) {
      auto change = table.append(object, e);
      bool kept = false;
      if (const auto* log = table.find(object))
        for (const auto& x : log->entries()) kept = kept || x.seq == e.seq;
      if (auto st = (*db)->apply(object, kept ? &e : nullptr, change); !st.ok()) {
        std::fprintf(stderr, "redirect_table: %s\n", st.to_string().c_str());
        return 1;
      }
      if (kind < 7) create.samples.push_back(us_since(t));
    }
    const uint64_t qbegin = (rng() % ((kSpace - (1 << 20)) / kPage)) * kPage;
    t = Clock::now();
    auto segments = table.query(object, qbegin, qbegin + (1 << 20));
    query.samples.push_back(us_since(t));
    if (segments.empty()) return 1;
    if (op == next_report || op == ops) {
      const auto* log = table.find(object);
      const double ratio = create.mean() / bare.mean();
      std::printf("%10llu %10zu %14.1f %14.1f %14.2f %14.2f %16.2f\n", static_cast<unsigned long long>(op),
                  log ? log->size() : 1, create.mean(), create.p99(), query.mean(), query.p99(), ratio);
      create.samples.clear();
      query.samples.clear();
      next_report *= 10;
    }
  }
  const auto* log = table.find(object);
  std::printf("bare LMDB commit: mean %.1f us\n", bare.mean());
  std::printf("RESULT ops=%llu final_log_len=%zu bare_commit_us=%.1f\n", static_cast<unsigned long long>(ops),
              log ? log->size() : 1, bare.mean());
  std::filesystem::remove_all(dir);
  return 0;
}
