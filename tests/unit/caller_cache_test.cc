#include "fs/caller_cache.h"

#include <doctest/doctest.h>

using namespace pvfs;
using namespace std::chrono_literals;

namespace {
const CallerCache::Clock::time_point caller_t0{100s};
CallerInfo info(std::string job, std::vector<uint32_t> groups) { return {std::move(groups), std::move(job)}; }
}  // namespace

TEST_CASE("a thread's groups and job id are reused within the lifetime, then read again") {
  CallerCache cache(1s);
  CHECK(cache.find(42, 1000, 100, caller_t0) == nullptr);
  cache.store(42, 1000, 100, info("job7", {100, 200}), caller_t0);
  const CallerInfo* hit = cache.find(42, 1000, 100, caller_t0 + 999ms);
  REQUIRE(hit != nullptr);
  CHECK(hit->job_id == "job7");
  CHECK(hit->groups == std::vector<uint32_t>{100, 200});
  CHECK(cache.find(42, 1000, 100, caller_t0 + 1s) == nullptr);  // expired: a setgroups() shows now
}

TEST_CASE("a thread that changed uid or gid is not given the old groups") {
  CallerCache cache(1s);
  cache.store(42, 1000, 100, info("job7", {100, 200}), caller_t0);
  CHECK(cache.find(42, 0, 100, caller_t0) == nullptr);
  CHECK(cache.find(42, 1000, 0, caller_t0) == nullptr);
  CHECK(cache.find(43, 1000, 100, caller_t0) == nullptr);
}

TEST_CASE("a clock that went backwards does not keep an entry alive") {
  CallerCache cache(1s);
  cache.store(42, 1000, 100, info("job7", {}), caller_t0);
  CHECK(cache.find(42, 1000, 100, caller_t0 - 1ms) == nullptr);
}

TEST_CASE("a full cache drops expired entries first, and stays bounded") {
  CallerCache cache(1s, 3);
  cache.store(1, 0, 0, info("a", {}), caller_t0);
  cache.store(2, 0, 0, info("b", {}), caller_t0 + 500ms);
  cache.store(3, 0, 0, info("c", {}), caller_t0 + 600ms);
  cache.store(4, 0, 0, info("d", {}), caller_t0 + 1200ms);  // 1 expired and goes; 2, 3 stay
  CHECK(cache.size() == 3);
  CHECK(cache.find(2, 0, 0, caller_t0 + 1200ms) != nullptr);
  CHECK(cache.find(4, 0, 0, caller_t0 + 1200ms) != nullptr);
  for (uint32_t tid = 10; tid < 100; ++tid) cache.store(tid, 0, 0, info("x", {}), caller_t0 + 1300ms);
  CHECK(cache.size() <= 3);
  CHECK(cache.find(99, 0, 0, caller_t0 + 1300ms) != nullptr);
}

TEST_CASE("a full cache where entries expire one by one is swept rarely, not at every store") {
  CallerCache cache(1s, 8);
  for (uint32_t tid = 1; tid <= 8; ++tid) cache.store(tid, 0, 0, info("x", {}), caller_t0 + tid * 100ms);
  // Only tid 1 has expired: freeing one entry would leave the cache full for
  // the next store, so everything goes and the newest is kept.
  cache.store(100, 0, 0, info("y", {}), caller_t0 + 1150ms);
  CHECK(cache.size() == 1);
  CHECK(cache.find(100, 0, 0, caller_t0 + 1150ms) != nullptr);
}
