// Tests of policy/qos/finish.h: when the QoS coordinator calls a job with
// declared bytes done, and when it says the job finished.
#include <doctest/doctest.h>

#include "policy/qos/finish.h"

namespace pvfs::qos {

TEST_CASE("a job is done in the period its count reaches the declared bytes, and stays done") {
  JobFinish f;
  f.period(1000, 400, true, 1000);
  f.period(1000, 900, true, 2000);
  CHECK(f.done_ms() == 0);
  f.period(1000, 1000, true, 3000);
  CHECK(f.done_ms() == 3000);
  f.period(1000, 1200, true, 4000);  // more I/O than it declared
  f.period(1000, 1200, false, 5000);
  CHECK(f.done_ms() == 3000);
}

TEST_CASE("a job counted at 99% that stops doing I/O is done at its last period with I/O") {
  JobFinish f;
  f.period(1000, 500, true, 1000);
  f.period(1000, 996, true, 2000);  // 4 bytes served before the servers knew of the goal
  f.period(1000, 996, false, 3000);
  CHECK(f.done_ms() == 0);  // one quiet period may be a pause
  f.period(1000, 996, false, 4000);
  CHECK(f.done_ms() == 2000);
}

TEST_CASE("a job taken for done at 99% that does I/O again is not done until it is") {
  JobFinish f;
  f.period(1000, 995, true, 1000);
  f.period(1000, 995, false, 2000);
  f.period(1000, 995, false, 3000);
  REQUIRE(f.done_ms() == 1000);
  f.period(1000, 998, true, 4000);
  CHECK(f.done_ms() == 0);
  f.period(1000, 1000, true, 5000);
  CHECK(f.done_ms() == 5000);
}

TEST_CASE("a job short of 99% of its bytes, or with none declared, is never done by going quiet") {
  JobFinish short_of;
  short_of.period(1000, 950, true, 1000);
  for (uint64_t t = 2000; t < 10000; t += 1000) short_of.period(1000, 950, false, t);
  CHECK(short_of.done_ms() == 0);
  JobFinish undeclared;
  undeclared.period(0, 5000, true, 1000);
  for (uint64_t t = 2000; t < 10000; t += 1000) undeclared.period(0, 5000, false, t);
  CHECK(undeclared.done_ms() == 0);
}

}  // namespace pvfs::qos
