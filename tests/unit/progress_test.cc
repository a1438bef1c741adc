// Unit tests of utils/common/progress: the bar, amounts, rates and ETA text, and
// when ProgressMeter shows a line on a terminal and elsewhere, with an
// injected clock. Pure: no output, no sleeps.
#include "utils/common/progress.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace pvfs {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

ProgressClock::time_point at(int64_t ms) { return ProgressClock::time_point{} + milliseconds(ms); }

ProgressOptions items(bool terminal) {
  ProgressOptions o;
  o.label = "fsck: files";
  o.terminal = terminal;
  o.bar_width = 10;
  return o;
}

}  // namespace

TEST_CASE("the bar fills in proportion, clamps when over and stays empty without a total") {
  CHECK(progress_bar(0, 100, 10) == "[----------]");
  CHECK(progress_bar(25, 100, 10) == "[##--------]");
  CHECK(progress_bar(50, 100, 10) == "[#####-----]");
  CHECK(progress_bar(100, 100, 10) == "[##########]");
  CHECK(progress_bar(150, 100, 10) == "[##########]");
  CHECK(progress_bar(5, 0, 4) == "[----]");
}

TEST_CASE("amounts, rates and ETAs read as a person would write them") {
  CHECK(format_amount(1234, ProgressUnit::items) == "1234");
  CHECK(format_amount(512, ProgressUnit::bytes) == "512 B");
  CHECK(format_amount(1536, ProgressUnit::bytes) == "1.5 KiB");
  CHECK(format_amount(uint64_t{3} << 30, ProgressUnit::bytes) == "3.0 GiB");
  CHECK(format_amount(uint64_t{5} << 50, ProgressUnit::bytes) == "5120.0 TiB");
  CHECK(format_rate(4.21, ProgressUnit::items) == "4.2/s");
  CHECK(format_rate(410.4, ProgressUnit::items) == "410/s");
  CHECK(format_rate(512.0 * 1024 * 1024, ProgressUnit::bytes) == "512.0 MiB/s");
  CHECK(format_eta(seconds(0)) == "0s");
  CHECK(format_eta(seconds(42)) == "42s");
  CHECK(format_eta(seconds(125)) == "2m05s");
  CHECK(format_eta(seconds(3720)) == "1h02m");
  CHECK(format_eta(seconds(-3)) == "0s");
}

TEST_CASE("a terminal line has the bar, done/total, rate and ETA; a plain one the percentage") {
  CHECK(progress_line(items(true), 250, 1000, seconds(5)) == "fsck: files [##--------] 250/1000  50/s  ETA 15s");
  CHECK(progress_line(items(false), 250, 1000, seconds(5)) == "fsck: files 250/1000 (25%)  50/s  ETA 15s");
  CHECK(progress_line(items(true), 250, std::nullopt, seconds(5)) == "fsck: files 250  50/s");
  CHECK(progress_line(items(true), 0, 1000, seconds(5)) == "fsck: files [----------] 0/1000  0.0/s  ETA ?");
  CHECK(progress_line(items(true), 1000, 1000, seconds(5)) == "fsck: files [##########] 1000/1000  200/s  ETA 0s");
  CHECK(progress_line(items(true), 0, 1000, seconds(0)) == "fsck: files [----------] 0/1000");
  ProgressOptions b;
  b.label = "pvfs-bench: write";
  b.unit = ProgressUnit::bytes;
  b.terminal = true;
  b.bar_width = 4;
  CHECK(progress_line(b, uint64_t{1} << 30, uint64_t{4} << 30, seconds(2)) ==
        "pvfs-bench: write [#---] 1.0 GiB/4.0 GiB  512.0 MiB/s  ETA 6s");
}

TEST_CASE("on a terminal the line is redrawn at most every redraw interval, after show_after") {
  ProgressOptions o = items(true);
  o.show_after = milliseconds(1000);
  ProgressMeter m(o);
  m.start(100, at(0));
  CHECK_FALSE(m.update(10, at(500)));
  auto first = m.update(20, at(1000));
  REQUIRE(first);
  CHECK(*first == "fsck: files [##--------] 20/100  20/s  ETA 4s");
  CHECK_FALSE(m.update(21, at(1100)));
  CHECK(m.update(30, at(1250)));
  CHECK_FALSE(m.finish(100, at(2000)));  // the caller wipes the line
  CHECK(m.shown());
}

TEST_CASE("elsewhere a plain line comes at each quarter and at least every plain_every") {
  ProgressMeter m(items(false));
  m.start(100, at(0));
  std::vector<std::string> lines;
  auto feed = [&](uint64_t done, int64_t ms) {
    if (auto line = m.update(done, at(ms))) lines.push_back(*line);
  };
  feed(10, 1000);
  feed(24, 2000);
  CHECK(lines.empty());
  feed(26, 3000);  // 25 %
  feed(30, 4000);
  feed(49, 13000);  // 10 s since the last line
  feed(80, 14000);  // past 50 % and 75 % at once: one line
  feed(100, 15000);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "fsck: files 26/100 (26%)  8.7/s  ETA 9s");
  CHECK(lines[1].find("49/100 (49%)") != std::string::npos);
  CHECK(lines[2].find("80/100 (80%)") != std::string::npos);
  CHECK(lines[3].find("100/100 (100%)") != std::string::npos);
  CHECK_FALSE(m.finish(100, at(15500)));  // the last line said it all
}

TEST_CASE("a plain meter ends with the final count when its last line did not, and says nothing if never shown") {
  ProgressMeter m(items(false));
  m.start(std::nullopt, at(0));
  CHECK_FALSE(m.update(5, at(1000)));
  CHECK(m.update(7, at(10000)));
  auto last = m.finish(9, at(10000));
  REQUIRE(last);
  CHECK(*last == "fsck: files 9  0.9/s");

  ProgressOptions quiet = items(false);
  quiet.show_after = milliseconds(2000);
  ProgressMeter q(quiet);
  q.start(10, at(0));
  CHECK_FALSE(q.update(10, at(100)));
  CHECK_FALSE(q.finish(10, at(200)));
}

}  // namespace pvfs
