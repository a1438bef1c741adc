#include "fs/job_io_clock.h"

#include <doctest/doctest.h>

namespace pvfs {
namespace {

using std::chrono::milliseconds;
using Ns = JobIoClock::Nanos;

uint64_t ms_of(uint64_t ns) { return ns / 1'000'000; }

}  // namespace

TEST_CASE("a job's I/O time counts only the spans with a request outstanding") {
  JobIoClock c;
  CHECK(c.begin("j", Ns(milliseconds(1000))) == 0u);
  c.end("j", Ns(milliseconds(1040)));
  // Computing for a second: not I/O time.
  CHECK(ms_of(c.so_far("j", Ns(milliseconds(2040)))) == 40);
  CHECK(ms_of(*c.begin("j", Ns(milliseconds(2040)))) == 40);
  c.end("j", Ns(milliseconds(2100)));
  CHECK(ms_of(c.so_far("j", Ns(milliseconds(5000)))) == 100);
}

TEST_CASE("back-to-back requests are one stretch of I/O; a longer gap is not I/O") {
  JobIoClock c;
  const auto us = [](int n) { return Ns(std::chrono::microseconds(n)); };
  c.begin("j", us(0));
  c.end("j", us(3000));
  // 2 ms later: the kernel copying the next request's data.
  CHECK(*c.begin("j", us(5000)) == 5'000'000u);
  c.end("j", us(8000));
  // 50 ms later: the program computed in between.
  CHECK(*c.begin("j", us(58000)) == 8'000'000u);
  c.end("j", us(59000));
  CHECK(c.so_far("j", us(90000)) == 9'000'000u);
}

TEST_CASE("overlapping requests of one job count their union, once") {
  JobIoClock c;
  c.begin("j", Ns(milliseconds(0)));
  c.begin("j", Ns(milliseconds(10)));
  // A request starting while others are outstanding sees the time so far.
  CHECK(ms_of(*c.begin("j", Ns(milliseconds(30)))) == 30);
  c.end("j", Ns(milliseconds(40)));
  c.end("j", Ns(milliseconds(50)));
  c.end("j", Ns(milliseconds(60)));
  CHECK(ms_of(c.so_far("j", Ns(milliseconds(100)))) == 60);
}

TEST_CASE("jobs are timed apart, and requests without a job are not timed") {
  JobIoClock c;
  c.begin("a", Ns(milliseconds(0)));
  c.begin("b", Ns(milliseconds(50)));
  c.end("a", Ns(milliseconds(100)));
  c.end("b", Ns(milliseconds(60)));
  CHECK(ms_of(c.so_far("a", Ns(milliseconds(200)))) == 100);
  CHECK(ms_of(c.so_far("b", Ns(milliseconds(200)))) == 10);
  CHECK_FALSE(c.begin("", Ns(milliseconds(0))).has_value());
  CHECK(c.so_far("nobody", Ns(milliseconds(200))) == 0);
  // An end without a begin changes nothing.
  c.end("a", Ns(milliseconds(300)));
  CHECK(ms_of(c.so_far("a", Ns(milliseconds(400)))) == 100);
}

TEST_CASE("past the job limit, long-idle jobs make room and busy ones keep their time") {
  JobIoClock c;
  for (size_t i = 0; i < JobIoClock::kMaxJobs; ++i) {
    const std::string job = "j" + std::to_string(i);
    c.begin(job, Ns(milliseconds(0)));
    if (i != 0) c.end(job, Ns(milliseconds(5)));  // j0 stays busy
  }
  // Full, and nobody idle for an hour yet: a new job is not timed.
  CHECK_FALSE(c.begin("new", Ns(milliseconds(10))).has_value());
  const Ns later = Ns(milliseconds(5)) + JobIoClock::kForgetAfter + milliseconds(1);
  CHECK(c.begin("new", later) == 0u);
  CHECK(c.jobs() == 2);  // j0, still outstanding, and the new one
  CHECK(c.so_far("j0", later) == static_cast<uint64_t>(later.count()));
}

}  // namespace pvfs
