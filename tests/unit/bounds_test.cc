// What bounds a daemon against peers that send too much: the envelope check
// every request passes before a service sees it, the per-job counters'
// limits, and the rate limit on log lines peers can cause. Pure code: a
// manual clock, no sockets.
#include <string>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "config/config.h"
#include "shared/log_limiter.h"
#include "shared/rpc/job_counters.h"
#include "shared/rpc/origin.h"

namespace pvfs {
namespace {

Status check_job(const std::string& job) {
  rpc::OutMessage out;
  out.envelope().setJobId(capnp::Text::Reader(job.data(), job.size()));
  return rpc::check_envelope(out.envelope().asReader());
}

bool kept(const rpc::JobCounters& jobs, const std::string& id) {
  for (const auto& j : jobs.busiest(rpc::JobCounters::kMaxJobs))
    if (j.id == id) return true;
  return false;
}

using LimiterClock = LogLimiter::Clock;
using std::chrono::milliseconds;

}  // namespace

TEST_CASE("a job id past the limit is refused naming the field and the limit") {
  CHECK(check_job("").ok());
  CHECK(check_job(std::string(kMaxJobIdBytes, 'j')).ok());
  const Status too_long = check_job(std::string(kMaxJobIdBytes + 1, 'j'));
  CHECK(too_long.code() == Errc::invalid_argument);
  CHECK(too_long.detail().find("jobId") != std::string::npos);
  CHECK(too_long.detail().find(std::to_string(kMaxJobIdBytes)) != std::string::npos);
  const Status megabyte = check_job(std::string(1 << 20, 'j'));
  CHECK(megabyte.code() == Errc::invalid_argument);
  CHECK(megabyte.detail().find("1048576") != std::string::npos);
}

TEST_CASE("a job id with a control character is refused") {
  CHECK(check_job("job\n42").code() == Errc::invalid_argument);
  CHECK(check_job(std::string("job\0x", 5)).code() == Errc::invalid_argument);
  CHECK(check_job("job\x7f").code() == Errc::invalid_argument);
  CHECK(check_job("slurm-4711.array_3").ok());
}

TEST_CASE("an address past kMaxAddressBytes is refused naming the limit") {
  const std::string host(kMaxAddressBytes - 5, 'h');
  CHECK(parse_endpoint(host + ":7100").ok());
  const auto too_long = parse_endpoint(std::string(1 << 20, 'h') + ":7100");
  CHECK(too_long.code() == Errc::invalid_argument);
  CHECK(too_long.status().detail().find(std::to_string(kMaxAddressBytes)) != std::string::npos);
  CHECK(too_long.status().detail().size() < 100);
}

TEST_CASE("job counters keep at most kMaxJobs jobs, each id cut to kMaxJobIdBytes") {
  rpc::JobCounters jobs;
  std::string id(1 << 20, 'x');  // 1 MiB, distinct in its first bytes
  for (uint32_t i = 0; i < 3 * rpc::JobCounters::kMaxJobs; ++i) {
    id.replace(0, 8, fmt::format("{:08x}", i));
    jobs.count(id, 0, 0);
  }
  CHECK(jobs.size() == rpc::JobCounters::kMaxJobs);
  CHECK(jobs.total_requests() == 3 * rpc::JobCounters::kMaxJobs);
  for (const auto& j : jobs.busiest(rpc::JobCounters::kMaxJobs)) CHECK(j.id.size() == kMaxJobIdBytes);
}

TEST_CASE("a new job past the limit replaces the one idle longest, not a busy one") {
  rpc::JobCounters jobs;
  jobs.count("idle", 0, 0);
  jobs.count("busy", 0, 0);
  for (uint32_t i = 2; i < rpc::JobCounters::kMaxJobs; ++i) jobs.count(fmt::format("filler{}", i), 0, 0);
  REQUIRE(jobs.size() == rpc::JobCounters::kMaxJobs);
  jobs.count("busy", 4096, 0);  // busy again: now the most recent
  jobs.count("newcomer", 0, 0);
  CHECK(jobs.size() == rpc::JobCounters::kMaxJobs);
  CHECK_FALSE(kept(jobs, "idle"));
  CHECK(kept(jobs, "busy"));
  CHECK(kept(jobs, "newcomer"));
  const auto top = jobs.busiest(1);
  REQUIRE(top.size() == 1);
  CHECK(top[0].id == "busy");
  CHECK(top[0].ops == 2);
  CHECK(top[0].bytes_read == 4096);
  // The next one goes too: the oldest filler.
  jobs.count("second newcomer", 0, 0);
  CHECK_FALSE(kept(jobs, "filler2"));
  CHECK(kept(jobs, "filler3"));
}

TEST_CASE("3000 failures of one reason in a second make one line, and the rest are counted") {
  LogLimiter limiter(std::chrono::seconds(1));
  const LimiterClock::time_point t0{};
  CHECK(limiter.admit("peer failed the secret check", t0).log);
  int logged = 0;
  for (int i = 1; i < 3000; ++i) logged += limiter.admit("peer failed the secret check", t0 + milliseconds(i / 4)).log;
  CHECK(logged == 0);
  CHECK(limiter.holding());
  CHECK(limiter.drain(t0 + milliseconds(999)).empty());
  auto held = limiter.drain(t0 + milliseconds(1000));
  REQUIRE(held.size() == 1);
  CHECK(held[0].reason == "peer failed the secret check");
  CHECK(held[0].count == 2999);
  CHECK_FALSE(limiter.holding());
  // The summary counts as the reason's line: the next second starts there.
  CHECK_FALSE(limiter.admit("peer failed the secret check", t0 + milliseconds(1500)).log);
  const auto next = limiter.admit("peer failed the secret check", t0 + milliseconds(2000));
  CHECK(next.log);
  CHECK(next.suppressed == 1);
}

TEST_CASE("each reason has a line of its own per second") {
  LogLimiter limiter(std::chrono::seconds(1));
  const LimiterClock::time_point t0{};
  CHECK(limiter.admit("timed out", t0).log);
  CHECK(limiter.admit("not a pvfs hello", t0).log);
  CHECK_FALSE(limiter.admit("timed out", t0 + milliseconds(10)).log);
  CHECK_FALSE(limiter.admit("not a pvfs hello", t0 + milliseconds(10)).log);
  auto held = limiter.drain(t0 + milliseconds(1000));
  CHECK(held.size() == 2);
}

TEST_CASE("reasons past kMaxReasons share one budget, and quiet reasons are forgotten") {
  LogLimiter limiter(std::chrono::seconds(1));
  const LimiterClock::time_point t0{};
  for (size_t i = 0; i < LogLimiter::kMaxReasons; ++i) CHECK(limiter.admit(fmt::format("reason {}", i), t0).log);
  CHECK(limiter.admit("one more", t0).log);
  CHECK_FALSE(limiter.admit("and another", t0).log);
  auto held = limiter.drain(t0 + std::chrono::seconds(1));
  REQUIRE(held.size() == 1);
  CHECK(held[0].count == 1);
  // Everything was quiet for a second after that: all forgotten, room again.
  CHECK(limiter.drain(t0 + std::chrono::seconds(3)).empty());
  CHECK(limiter.admit("a new reason", t0 + std::chrono::seconds(3)).log);
  CHECK(limiter.admit("another new reason", t0 + std::chrono::seconds(3)).log);
}

}  // namespace pvfs
