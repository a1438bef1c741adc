// pvfs-ctl's text helpers (utils/ctl/ctl_format.h): pure, no cluster needed.
#include <limits>

#include <doctest/doctest.h>

#include "utils/ctl/ctl_format.h"

namespace ctl_format_test {

using namespace pvfs;
using namespace pvfs::ctl;

TEST_CASE("sizes take K, M, G and T binary suffixes in either case") {
  CHECK(*parse_size("0") == 0);
  CHECK(*parse_size("4096") == 4096);
  CHECK(*parse_size("64k") == 65536);
  CHECK(*parse_size("4M") == 4194304);
  CHECK(*parse_size("1G") == uint64_t{1} << 30);
  CHECK(*parse_size("2t") == uint64_t{2} << 40);
}

TEST_CASE("malformed or overflowing sizes are invalid arguments naming the text") {
  for (const char* bad : {"", "M", "-1", "1.5M", "4MB", "4 M", "4Q", "99999999999999999999",
                          "17179869184G"}) {
    auto r = parse_size(bad);
    CHECK_MESSAGE(r.code() == Errc::invalid_argument, bad);
  }
  CHECK(parse_size("4Q").status().detail().find("'4Q'") != std::string::npos);
}

TEST_CASE("server lists keep their order and reject repeats and junk") {
  auto ids = parse_server_list("3,0,12");
  REQUIRE(ids);
  CHECK(*ids == std::vector<ServerId>{ServerId(3), ServerId(0), ServerId(12)});
  auto named = parse_server_list("server3,0,server12");
  REQUIRE(named);
  CHECK(*named == *ids);
  for (const char* bad : {"", ",", "1,", "1,,2", "a", "1,1", "-1", "1 2", "server", "server1,1", "srv1"})
    CHECK_MESSAGE(parse_server_list(bad).code() == Errc::invalid_argument, bad);
}

TEST_CASE("human sizes use binary units with one decimal") {
  CHECK(human_bytes(0) == "0 B");
  CHECK(human_bytes(1023) == "1023 B");
  CHECK(human_bytes(1024) == "1.0 KiB");
  CHECK(human_bytes(1536) == "1.5 KiB");
  CHECK(human_bytes(1048575) == "1.0 MiB");
  CHECK(human_bytes(uint64_t{1} << 20) == "1.0 MiB");
  CHECK(human_bytes(uint64_t{5} << 40) == "5.0 TiB");
  CHECK(human_bytes(UINT64_MAX) == "16.0 EiB");
}

TEST_CASE("durations keep their two largest units") {
  using std::chrono::milliseconds;
  CHECK(human_duration(milliseconds(0)) == "0s");
  CHECK(human_duration(milliseconds(59999)) == "59s");
  CHECK(human_duration(milliseconds(187000)) == "3m07s");
  CHECK(human_duration(milliseconds((2 * 3600 + 5 * 60) * 1000)) == "2h05m");
  CHECK(human_duration(milliseconds((3 * 86400 + 4 * 3600) * 1000LL)) == "3d04h");
}

TEST_CASE("a file's layout lists one line per object with its server") {
  LayoutPolicy layout{1048576, 2, {ServerId(3), ServerId(0)}};
  CHECK(render_layout("/mnt/f", layout, false) ==
        "/mnt/f\n"
        "stripe_count:  2\n"
        "stripe_size:   1048576\n"
        "  index  server\n"
        "      0       3\n"
        "      1       0\n");
}

TEST_CASE("a directory's zero policy prints as the cluster default") {
  CHECK(render_layout("/mnt/d", LayoutPolicy{}, true) ==
        "/mnt/d\n"
        "stripe_count:  0 (cluster default)\n"
        "stripe_size:   0 (cluster default)\n"
        "servers:       any\n");
  CHECK(render_layout("/mnt/d", LayoutPolicy{4194304, 2, {ServerId(1), ServerId(2)}}, true) ==
        "/mnt/d\n"
        "stripe_count:  2\n"
        "stripe_size:   4194304\n"
        "servers:       1,2\n");
}

TEST_CASE("jobs are summed over daemons and sorted busiest first") {
  DaemonReport mds{.kind = "mds", .id = 0, .version = "0.1.0", .jobs = {{"a", 5, 0, 0}, {"b", 1, 0, 0}}};
  DaemonReport s0{.kind = "server", .id = 0, .version = "0.1.0",
                  .jobs = {{"b", 10, 0, 4096}, {"c", 2, 100, 0}}};
  DaemonReport s1{.kind = "server", .id = 1, .version = "0.1.0",
                  .jobs = {{"b", 10, 1024, 0}, {"c", 3, 0, 0}}};
  auto merged = merge_jobs({mds, s0, s1});
  REQUIRE(merged.size() == 3);
  CHECK(merged[0].job_id == "b");
  CHECK(merged[0].ops == 21);
  CHECK(merged[0].bytes_read == 1024);
  CHECK(merged[0].bytes_written == 4096);
  // a and c both have 5 ops; c moved bytes, so it counts as busier.
  CHECK(merged[1].job_id == "c");
  CHECK(merged[2].job_id == "a");
  CHECK(merge_jobs({s1, mds, s0})[0].ops == 21);
}

TEST_CASE("the jobs table right-aligns numbers and says when there are none") {
  CHECK(render_jobs({{"job42", 12, 0, 1048576}}, std::vector<JobIoTimes>{}) ==
        "JOB    OPS  READ  WRITTEN  I/O-TIME  TOKEN-WAIT  STEP\n"
        "job42   12   0 B  1.0 MiB         -           -  -\n");
  CHECK(render_jobs({}, std::vector<JobIoTimes>{}) == "JOB  OPS  READ  WRITTEN  I/O-TIME  TOKEN-WAIT  STEP\n(no jobs)\n");
}

TEST_CASE("the jobs table gives each job's I/O time and token wait from the scheduler, and its step now") {
  const std::vector<JobStat> jobs = {{"ckpt-a", 40, 0, 4 << 20}, {"ckpt-b", 3, 0, 0}};
  const std::vector<JobIoTimes> io = {{"ckpt-b", 0, 2500, "waiting"}, {"ckpt-a", 1520, 10, "holding"},
                                      {"declared", 0, 120, "waiting"}};
  CHECK(render_jobs(jobs, io) ==
        "JOB       OPS  READ  WRITTEN  I/O-TIME  TOKEN-WAIT  STEP\n"
        "ckpt-a     40   0 B  4.0 MiB    1.52 s      0.01 s  holding\n"
        "ckpt-b      3   0 B      0 B    0.00 s      2.50 s  waiting\n"
        "declared    0   0 B      0 B    0.00 s      0.12 s  waiting\n");
  // The scheduler did not answer: the daemons' counters still show.
  CHECK(render_jobs(jobs, std::nullopt) ==
        "JOB     OPS  READ  WRITTEN  I/O-TIME  TOKEN-WAIT  STEP\n"
        "ckpt-a   40   0 B  4.0 MiB         ?           ?  ?\n"
        "ckpt-b    3   0 B      0 B         ?           ?  ?\n");
}

TEST_CASE("ping fails daemons that are down, refuse the key or are someone else") {
  DaemonTarget s1{"server1", DaemonKind::server, 1, {"127.0.0.1", 7001}};
  CHECK(judge_ping(s1, Result<DaemonReport>(Errc::unavailable, "refused")).state == "down");
  CHECK(judge_ping(s1, Result<DaemonReport>(Errc::timeout, "slow")).state == "timeout");
  auto denied = judge_ping(s1, Result<DaemonReport>(Errc::access_denied, "bad proof"));
  CHECK_FALSE(denied.ok);
  CHECK(denied.state == "denied");
  CHECK(denied.detail.find("secret") != std::string::npos);
  DaemonReport other{.kind = "server", .id = 2, .version = "0.1.0", .uptime_ms = 1000, .requests = 5};
  auto wrong = judge_ping(s1, other);
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.detail == "answers as server 2, the config says server 1");
  DaemonReport right{.kind = "server", .id = 1, .version = "0.1.0", .uptime_ms = 1000, .requests = 5};
  CHECK(judge_ping(s1, right).ok);
}

TEST_CASE("daemon targets name metadata servers first, by config id") {
  Config c;
  c.mds = {{0, {"h", 1}, {}}};
  c.servers = {{4, {"h", 2}, {}}, {1, {"h", 3}, {}}};
  auto targets = daemon_targets(c);
  REQUIRE(targets.size() == 3);
  CHECK(targets[0].name == "mds0");
  CHECK(targets[1].name == "server4");
  CHECK(targets[2].name == "server1");
  CHECK(targets[2].kind == DaemonKind::server);
}

TEST_CASE("servers the metadata server does not know show as unregistered") {
  std::vector<ServerView> known = {{1, "h:2", 1000, 250, true}, {0, "h:1", 0, 0, false}};
  std::vector<DaemonEntry> configured = {{0, {"h", 1}, {}}, {1, {"h", 2}, {}}, {2, {"h", 3}, {}}};
  CHECK(render_servers(known, configured) ==
        "ID  ADDRESS  STATE         CAPACITY   FREE  USED\n"
        " 0  h:1      dead               0 B    0 B     -\n"
        " 1  h:2      alive           1000 B  250 B   75%\n"
        " 2  h:3      unregistered         -      -     -\n");
}

TEST_CASE("the mount holding a path is the longest mount point above it, latest first") {
  const std::string mountinfo =
      "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
      "23 22 0:41 / /tmp rw,nosuid shared:2 - tmpfs tmpfs rw\n"
      "45 23 0:50 / /tmp/pvfs rw,nosuid,nodev,relatime - fuse.pvfs pvfs:10.0.0.5:7000 rw\n"
      "46 23 0:51 / /tmp/with\\040space rw - fuse.pvfs pvfs:h:1 rw\n"
      "47 22 0:52 / /mnt rw - ext4 /dev/sdb1 rw\n"
      "48 22 0:53 / /mnt rw - fuse.pvfs pvfs:h:2 rw\n";
  CHECK(mount_type_of(mountinfo, "/tmp/pvfs") == kPvfsMountType);
  CHECK(mount_type_of(mountinfo, "/tmp/pvfs/a/b") == kPvfsMountType);
  CHECK(mount_type_of(mountinfo, "/tmp/pvfsx") == "tmpfs");
  CHECK(mount_type_of(mountinfo, "/tmp") == "tmpfs");
  CHECK(mount_type_of(mountinfo, "/home") == "ext4");
  CHECK(mount_type_of(mountinfo, "/tmp/with space/f") == kPvfsMountType);
  CHECK(mount_type_of(mountinfo, "/mnt/x") == kPvfsMountType);
  CHECK(mount_type_of("", "/x").empty());
  CHECK(mount_type_of("garbage\n\n1 2 3\n", "/x").empty());
}

TEST_CASE("the mounts of one cluster are the pvfs lines whose source names its MDS, in mount order") {
  const std::string mountinfo =
      "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
      "45 22 0:50 / /tmp/a rw,nosuid,nodev,relatime - fuse.pvfs pvfs:127.0.0.1:7000 rw\n"
      "46 22 0:51 / /tmp/other rw - fuse.pvfs pvfs:127.0.0.1:7100 rw\n"
      "47 22 0:52 / /tmp/with\\040space rw - fuse.pvfs pvfs:127.0.0.1:7000 rw\n"
      "48 22 0:53 / /srv rw - ext4 pvfs:127.0.0.1:7000 rw\n";
  CHECK(mount_points_of(mountinfo, kPvfsMountType, "pvfs:127.0.0.1:7000") ==
        std::vector<std::string>{"/tmp/a", "/tmp/with space"});
  CHECK(mount_points_of(mountinfo, kPvfsMountType, "pvfs:127.0.0.1:70").empty());
  CHECK(mount_points_of("garbage\n", kPvfsMountType, "pvfs:127.0.0.1:7000").empty());
}

TEST_CASE("a mount point has a pvfs mount only when a pvfs line names exactly it") {
  const std::string mountinfo =
      "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
      "45 22 0:50 / /tmp/pvfs rw,nosuid,nodev,relatime - fuse.pvfs pvfs:10.0.0.5:7000 rw\n"
      "46 22 0:51 / /tmp/with\\040space rw - fuse.pvfs pvfs:h:1 rw\n"
      "47 22 0:52 / /mnt rw - ext4 /dev/sdb1 rw\n";
  CHECK(has_mount_at(mountinfo, "/tmp/pvfs", kPvfsMountType));
  CHECK(has_mount_at(mountinfo, "/tmp/with space", kPvfsMountType));
  CHECK_FALSE(has_mount_at(mountinfo, "/tmp/pvfs/sub", kPvfsMountType));  // inside one, not on it
  CHECK_FALSE(has_mount_at(mountinfo, "/tmp", kPvfsMountType));
  CHECK_FALSE(has_mount_at(mountinfo, "/mnt", kPvfsMountType));  // another type
  CHECK_FALSE(has_mount_at("garbage\n", "/mnt", kPvfsMountType));
}

namespace {

// A busy server: redirects, fragments, pull-backs and a delay in force.
SchedView busy_server() {
  SchedView v;
  v.server = 12;
  v.requests = 3;
  v.bytes = 1572864;
  v.preassigned = 262144;
  v.redirect_objects = 2;
  v.redirect_entries = 14;
  v.fragments = 5;
  v.fragment_bytes = 4194304;
  v.pulled_bytes = 8388608;
  v.pulls = 12;
  v.redirects = 31;
  v.fallbacks = 1;
  v.probes = 120;
  v.gc_pending = 3;
  v.delay_factor = 5;
  v.delay_remaining_ms = 29001;
  v.preassign_probability = {0, 0.25, 1};
  return v;
}

}  // namespace

TEST_CASE("the sched table gives one row per server with human sizes and the delay") {
  CHECK(render_sched({SchedView{}, busy_server()}) ==
        "ID         LOAD  PREASSIGNED  REDIR-OBJS  REDIR-ENTRIES    FRAGMENTS        PULLED"
        "  REDIRECTS  FALLBACKS  PROBES  GC  DELAY\n"
        " 0      0 / 0 B          0 B           0              0      0 / 0 B       0 / 0 B"
        "          0          0       0   0  -\n"
        "12  3 / 1.5 MiB    256.0 KiB           2             14  5 / 4.0 MiB  12 / 8.0 MiB"
        "         31          1     120   3  5x, 30s left\n");
}

TEST_CASE("the delay cell shows the factor and the time left rounded up, or a dash") {
  using std::chrono::milliseconds;
  CHECK(delay_cell(1, milliseconds(0)) == "-");
  CHECK(delay_cell(1, milliseconds(5000)) == "-");
  CHECK(delay_cell(5, milliseconds(0)) == "5x, until changed");
  CHECK(delay_cell(2.5, milliseconds(1)) == "2.5x, 1s left");
  CHECK(delay_cell(5, milliseconds(30000)) == "5x, 30s left");
  CHECK(delay_cell(1000, milliseconds(3600000)) == "1000x, 1h00m left");
}

TEST_CASE("sched JSON is an array of one object per server with the raw numbers") {
  CHECK(render_sched_json({}) == "[]\n");
  SchedView idle;
  idle.server = 0;
  CHECK(render_sched_json({idle, busy_server()}) ==
        "[\n"
        "  {\"server\": 0, \"requests\": 0, \"bytes\": 0, \"preassigned\": 0, "
        "\"redirect_objects\": 0, \"redirect_entries\": 0, \"fragments\": 0, "
        "\"fragment_bytes\": 0, \"pulled_bytes\": 0, \"pulls\": 0, \"redirects\": 0, "
        "\"fallbacks\": 0, \"probes\": 0, \"gc_pending\": 0, \"delay_factor\": 1, "
        "\"delay_remaining_ms\": 0, \"preassign_probability\": []},\n"
        "  {\"server\": 12, \"requests\": 3, \"bytes\": 1572864, \"preassigned\": 262144, "
        "\"redirect_objects\": 2, \"redirect_entries\": 14, \"fragments\": 5, "
        "\"fragment_bytes\": 4194304, \"pulled_bytes\": 8388608, \"pulls\": 12, "
        "\"redirects\": 31, \"fallbacks\": 1, \"probes\": 120, \"gc_pending\": 3, "
        "\"delay_factor\": 5, \"delay_remaining_ms\": 29001, "
        "\"preassign_probability\": [0, 0.25, 1]}\n"
        "]\n");
}

TEST_CASE("numbers JSON cannot carry, NaN and infinity, print as null in sched JSON") {
  SchedView odd;
  odd.delay_factor = std::numeric_limits<double>::quiet_NaN();
  odd.preassign_probability = {std::numeric_limits<double>::infinity(), 0.5};
  const std::string json = render_sched_json({odd});
  CHECK(json.find("\"delay_factor\": null,") != std::string::npos);
  CHECK(json.find("\"preassign_probability\": [null, 0.5]}") != std::string::npos);
}

TEST_CASE("inject's confirmation says how much slower and for how long") {
  using std::chrono::seconds;
  CHECK(describe_inject(3, 5, seconds(30)) == "server 3: serving 5x slower for 30 s");
  CHECK(describe_inject(3, 2.5, seconds(0)) == "server 3: serving 2.5x slower until changed");
  CHECK(describe_inject(0, 1, seconds(30)) == "server 0: serving at normal speed");
}

TEST_CASE("service times read in the unit that suits them") {
  CHECK(human_micros(0) == "0us");
  CHECK(human_micros(850) == "850us");
  CHECK(human_micros(1000) == "1.0ms");
  CHECK(human_micros(12345) == "12.3ms");
  CHECK(human_micros(99949) == "99.9ms");
  CHECK(human_micros(99950) == "100ms");
  CHECK(human_micros(450000) == "450ms");
  CHECK(human_micros(1520000) == "1.52s");
}

TEST_CASE("size buckets are labelled by their first byte count") {
  CHECK(bucket_label(0) == "1");
  CHECK(bucket_label(9) == "512");
  CHECK(bucket_label(12) == "4K");
  CHECK(bucket_label(16) == "64K");
  CHECK(bucket_label(20) == "1M");
  CHECK(bucket_label(22) == "4M");
  CHECK(bucket_label(30) == "1G");
  CHECK(bucket_label(63) == "8E");
}

TEST_CASE("the size histogram lists only the buckets that have operations") {
  CHECK(size_histogram({}) == "-");
  CHECK(size_histogram(std::vector<uint64_t>(40, 0)) == "-");
  std::vector<uint64_t> buckets(40, 0);
  buckets[16] = 12;
  buckets[20] = 300;
  buckets[22] = 80;
  CHECK(size_histogram(buckets) == "64K:12 1M:300 4M:80");
}

namespace {

// A server that has been busy on an emulated disk, with urgent traffic.
ElevatorView busy_elevator() {
  ElevatorView v;
  v.server = 3;
  v.policy = "obrr";
  v.queued = {31, 1, 2};
  v.in_service = {4, 0, 0};
  v.completed = {2048, 102, 7};
  v.p50_us = {310000, 4200, 900};
  v.p99_us = {1210000, 61000, 12000};
  v.objects_queued = 30;
  v.dispatches = 1024;
  v.seeks = 75;
  v.dynamic_expiries = 5;
  v.mandatory_expiries = 2;
  v.expiration_us = 950000;
  v.dispatched_sizes.assign(24, 0);
  v.dispatched_sizes[20] = 300;
  v.dispatched_sizes[22] = 80;
  v.emulated_disk = true;
  v.emulated_seeks = 74;
  v.bandwidth = "pvfs-bandwidth-v1 4096:1000 \"odd\"";
  return v;
}

}  // namespace

TEST_CASE("the elevator table gives one row per server with classes, seeks and sizes") {
  ElevatorView idle;
  idle.policy = "fcfs";
  CHECK(render_elevator({idle, busy_elevator()}) ==
        "ID  POLICY  QUEUED N/U/B  OBJECTS  DISPATCHES             SEEKS  EXPIRED DYN/MAND"
        "  NORMAL P50/P99  URGENT P50/P99  BACKGROUND P50/P99  DEADLINE  SIZES\n"
        " 0  fcfs           0/0/0        0           0                 0               0/0"
        "               -               -                   -       0us  -\n"
        " 3  obrr          31/1/2       30        1024  75 (emulated 74)               5/2"
        "     310ms/1.21s    4.2ms/61.0ms        900us/12.0ms     950ms  1M:300 4M:80\n");
}

TEST_CASE("elevator JSON is an array of one object per server with the raw numbers") {
  CHECK(render_elevator_json({}) == "[]\n");
  ElevatorView idle;
  idle.policy = "fcfs";
  CHECK(render_elevator_json({idle, busy_elevator()}) ==
        "[\n"
        "  {\"server\": 0, \"policy\": \"fcfs\", \"queued\": [0, 0, 0], \"in_service\": [0, 0, 0], "
        "\"completed\": [0, 0, 0], \"p50_us\": [0, 0, 0], \"p99_us\": [0, 0, 0], "
        "\"objects_queued\": 0, \"dispatches\": 0, \"seeks\": 0, \"emulated_disk\": false, "
        "\"emulated_seeks\": 0, \"dynamic_expiries\": 0, \"mandatory_expiries\": 0, "
        "\"expiration_us\": 0, \"dispatched_sizes\": {}, \"bandwidth\": \"\"},\n"
        "  {\"server\": 3, \"policy\": \"obrr\", \"queued\": [31, 1, 2], \"in_service\": [4, 0, 0], "
        "\"completed\": [2048, 102, 7], \"p50_us\": [310000, 4200, 900], "
        "\"p99_us\": [1210000, 61000, 12000], \"objects_queued\": 30, \"dispatches\": 1024, "
        "\"seeks\": 75, \"emulated_disk\": true, \"emulated_seeks\": 74, \"dynamic_expiries\": 5, "
        "\"mandatory_expiries\": 2, \"expiration_us\": 950000, "
        "\"dispatched_sizes\": {\"1048576\": 300, \"4194304\": 80}, "
        "\"bandwidth\": \"pvfs-bandwidth-v1 4096:1000 \\\"odd\\\"\"}\n"
        "]\n");
}

}  // namespace ctl_format_test
