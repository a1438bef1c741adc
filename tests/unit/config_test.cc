// Unit tests of config/config: render/load round trip, path resolution,
// defaults, one error per wrong or missing key (each naming the key), and
// parse_endpoint. Config files go into a mkdtemp directory under /tmp.
#include "config/config.h"

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

#include <stdlib.h>

#include <fstream>
#include <string>

namespace pvfs {
namespace {

// A temporary folder that can hold config files.
class ConfigDir : public pvfs::test::TempDir {
 public:
  // Writes `text` to `name` under the directory and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto file = path() / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file;
  }
};

constexpr const char* kMinimal =
    "secret_file = \"secret.key\"\n"
    "[[mds]]\n"
    "address = \"127.0.0.1:7000\"\n";

// Loads `text` and expects failure with a detail mentioning `key`.
void expect_error_naming(const std::string& text, const std::string& key) {
  ConfigDir dir;
  auto cfg = Config::load(dir.write("pvfs.toml", text));
  REQUIRE_FALSE(cfg.ok());
  CHECK(cfg.code() == Errc::invalid_argument);
  INFO("detail: ", cfg.status().detail());
  CHECK(cfg.status().detail().find(key) != std::string::npos);
}

void check_same_daemons(const std::vector<DaemonEntry>& a, const std::vector<DaemonEntry>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].id == b[i].id);
    CHECK(a[i].address == b[i].address);
    CHECK(a[i].data_dir == b[i].data_dir);
    CHECK(a[i].metrics == b[i].metrics);
  }
}

}  // namespace

TEST_CASE("a full config round-trips through render and load") {
  ConfigDir dir;
  Config c;
  c.secret_file = dir.path() / "keys" / "cluster.key";
  c.mds = {{0, {"10.0.0.1", 7000}, dir.path() / "mds0"}, {5, {"::1", 7001}, dir.path() / "mds5"}};
  c.servers = {{1, {"node-a", 7100}, dir.path() / "s1", Endpoint{"10.9.0.1", 9101}},
               {2, {"node-b.example.org", 0}, dir.path() / "s 2"},
               {9, {"fe80::2", 65535}, {}}};
  c.stripe_size = 4 << 20;
  c.stripe_count = 2;
  c.full_percent = 80;
  c.rpc_timeout_ms = 1234;
  c.rpc_busy_limit_ms = 45678;
  c.connect_timeout_ms = 567;
  c.heartbeat_interval_ms = 89;
  c.heartbeat_timeout_ms = 4321;
  c.mds_sync_interval_ms = 250;
  c.attr_timeout_s = 0.123456789;
  c.entry_timeout_s = 2.0;
  c.write_behind_bytes = 4 << 20;
  c.dispatch_min_bytes = 4096;
  c.redirect_margin_bytes = 3 << 20;
  c.redirect_skew_factor = 1.5;
  c.anu.backlog = false;
  c.anu.busy = true;  // the daemons' default is false
  c.anu.overload_guard = false;
  c.anu.floor_share = 0.125;
  c.probe_timeout_ms = 7;
  c.load_ttl_ms = 11;
  c.maintainer_threads = 0;
  c.maintainer_interval_ms = 13;
  c.fragment_gc_grace_ms = 17;

  const std::string text = c.render();
  const auto file = dir.write("pvfs.toml", text);
  auto back = Config::load(file);
  REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  CHECK(back->path == file);
  CHECK(back->secret_file == c.secret_file);
  check_same_daemons(back->mds, c.mds);
  check_same_daemons(back->servers, c.servers);
  CHECK(back->stripe_size == c.stripe_size);
  CHECK(back->stripe_count == c.stripe_count);
  CHECK(back->full_percent == 80);
  CHECK(back->rpc_timeout_ms == c.rpc_timeout_ms);
  CHECK(back->rpc_busy_limit_ms == c.rpc_busy_limit_ms);
  CHECK(back->connect_timeout_ms == c.connect_timeout_ms);
  CHECK(back->heartbeat_interval_ms == c.heartbeat_interval_ms);
  CHECK(back->heartbeat_timeout_ms == c.heartbeat_timeout_ms);
  CHECK(back->mds_sync_interval_ms == c.mds_sync_interval_ms);
  CHECK(back->attr_timeout_s == c.attr_timeout_s);
  CHECK(back->entry_timeout_s == c.entry_timeout_s);
  CHECK(back->write_behind_bytes == c.write_behind_bytes);
  CHECK(back->dispatch_min_bytes == c.dispatch_min_bytes);
  CHECK(back->redirect_margin_bytes == c.redirect_margin_bytes);
  CHECK(back->redirect_skew_factor == c.redirect_skew_factor);
  CHECK(back->anu.backlog == c.anu.backlog);
  CHECK(back->anu.busy == c.anu.busy);
  CHECK(back->anu.overload_guard == c.anu.overload_guard);
  CHECK(back->anu.floor_share == c.anu.floor_share);
  CHECK(back->probe_timeout_ms == c.probe_timeout_ms);
  CHECK(back->load_ttl_ms == c.load_ttl_ms);
  CHECK(back->maintainer_threads == c.maintainer_threads);
  CHECK(back->maintainer_interval_ms == c.maintainer_interval_ms);
  CHECK(back->fragment_gc_grace_ms == c.fragment_gc_grace_ms);
  // Rendering what was loaded gives the same text: render is a fixed point.
  CHECK(back->render() == text);
}

TEST_CASE("a minimal config gets the documented defaults") {
  ConfigDir dir;
  auto c = Config::load(dir.write("pvfs.toml", kMinimal));
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  REQUIRE(c->mds.size() == 1);
  CHECK(c->mds[0].id == 0);  // the entry's position when no id is given
  CHECK(c->mds[0].address == Endpoint{"127.0.0.1", 7000});
  CHECK(c->mds[0].data_dir.empty());
  CHECK(c->servers.empty());
  CHECK(c->stripe_size == uint64_t{1} << 20);
  CHECK(c->stripe_count == 0);
  CHECK(c->full_percent == 95);
  CHECK(c->rpc_timeout_ms == 10000);
  CHECK(c->rpc_busy_limit_ms == 300000);
  CHECK(c->connect_timeout_ms == 3000);
  CHECK(c->heartbeat_interval_ms == 1000);
  CHECK(c->heartbeat_timeout_ms == 5000);
  CHECK(c->mds_sync_interval_ms == 1000);
  CHECK(c->attr_timeout_s == 1.0);
  CHECK(c->entry_timeout_s == 1.0);
  CHECK(c->write_behind_bytes == 0);
  CHECK(c->dispatch_min_bytes == 64 * 1024);
  CHECK(c->redirect_margin_bytes == 1024 * 1024);
  CHECK(c->probe_timeout_ms == 100);
  CHECK(c->load_ttl_ms == 300);
  CHECK(c->maintainer_threads == 2);
  CHECK(c->maintainer_interval_ms == 100);
  CHECK(c->fragment_gc_grace_ms == 2000);
}

TEST_CASE("[elevator] and [emulated_disk] are read, and bad values name their key") {
  ConfigDir dir;
  auto c = Config::load(dir.write("pvfs.toml", std::string(kMinimal) +
                                                   "[elevator]\npolicy = \"fcfs\"\nquantum = 4\n"
                                                   "quantum_unit = \"bytes\"\nlambda = 2.5\n"
                                                   "[emulated_disk]\nseek_ms = 2.5\nbandwidth_bytes = 450000000\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  CHECK(c->elevator.policy == elevator::Policy::fcfs);
  CHECK(c->elevator.quantum == 4);
  CHECK(c->elevator.quantum_unit == elevator::QuantumUnit::bytes);
  CHECK(c->elevator.lambda == 2.5);
  CHECK(c->emulated_seek_ms == 2.5);
  CHECK(c->emulated_bandwidth_bytes == 450000000);
  auto back = Config::load(dir.write("back.toml", c->render()));
  REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  CHECK(back->elevator.policy == elevator::Policy::fcfs);
  CHECK(back->elevator.quantum_unit == elevator::QuantumUnit::bytes);
  expect_error_naming(std::string(kMinimal) + "[elevator]\npolicy = \"cscan\"\n", "elevator.policy");
  expect_error_naming(std::string(kMinimal) + "[elevator]\nlambda = 0.5\n", "elevator.lambda");
  expect_error_naming(std::string(kMinimal) + "[elevator]\nquantum = 0\n", "elevator.quantum");
}

TEST_CASE("[qos] policy is off by default, read, rendered back, and a bad value names its key") {
  ConfigDir dir;
  auto plain = Config::load(dir.write("plain.toml", kMinimal));
  REQUIRE(plain.ok());
  CHECK(plain->qos_policy == qos::QosPolicy::off);
  auto c = Config::load(dir.write("q.toml", std::string(kMinimal) + "[qos]\npolicy = \"ushape\"\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  CHECK(c->qos_policy == qos::QosPolicy::ushape);
  CHECK(Config::load(dir.write("back.toml", c->render()))->qos_policy == qos::QosPolicy::ushape);
  expect_error_naming(std::string(kMinimal) + "[qos]\npolicy = \"fast\"\n", "qos.policy");
  expect_error_naming(std::string(kMinimal) + "[qos]\npolicy = 3\n", "qos.policy");
}

TEST_CASE("[qos] period, epoch and minimum window are read, rendered back, and out-of-range values name their key") {
  ConfigDir dir;
  auto plain = Config::load(dir.write("plain.toml", kMinimal));
  REQUIRE(plain.ok());
  CHECK(plain->qos_period_ms == 1000);
  CHECK(plain->qos_epoch_ms == 100);
  CHECK(plain->qos_min_window_ms == 20);
  CHECK(plain->qos_train_max_error == 0.10);
  auto c = Config::load(dir.write(
      "q.toml", std::string(kMinimal) + "[qos]\nperiod_ms = 2000\nepoch_ms = 50\nmin_window_ms = 100\ntrain_max_error = 0.25\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  auto back = Config::load(dir.write("back.toml", c->render()));
  REQUIRE(back.ok());
  CHECK(back->qos_period_ms == 2000);
  CHECK(back->qos_epoch_ms == 50);
  CHECK(back->qos_min_window_ms == 100);
  CHECK(back->qos_train_max_error == 0.25);
  expect_error_naming(std::string(kMinimal) + "[qos]\ntrain_max_error = 0\n", "qos.train_max_error");
  expect_error_naming(std::string(kMinimal) + "[qos]\nperiod_ms = 10\n", "qos.period_ms");
  expect_error_naming(std::string(kMinimal) + "[qos]\nepoch_ms = 5000\n", "qos.epoch_ms");
  expect_error_naming(std::string(kMinimal) + "[qos]\nmin_window_ms = 300\n", "qos.min_window_ms");
}

TEST_CASE("[mds_cluster] placement and tuning are read as the policy's own options and rendered back") {
  ConfigDir dir;
  auto c = Config::load(dir.write("pvfs.toml", std::string(kMinimal) +
                                                   "[mds_cluster]\nplacement = \"round-robin\"\n"
                                                   "threshold = 0.25\ndivergent = false\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  CHECK(c->mds_placement == placement::Policy::round_robin);
  CHECK(c->anu.threshold == 0.25);
  CHECK_FALSE(c->anu.divergent);
  CHECK(c->anu.top_off);
  auto back = Config::load(dir.write("back.toml", c->render()));
  REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  CHECK(back->mds_placement == placement::Policy::round_robin);
  CHECK(back->anu.threshold == 0.25);
  CHECK_FALSE(back->anu.divergent);
  CHECK(c->anu.floor_share == 0.25);  // the default
  expect_error_naming(std::string(kMinimal) + "[mds_cluster]\nfloor_share = 1.5\n", "mds_cluster.floor_share");
  expect_error_naming(std::string(kMinimal) + "[mds_cluster]\nfloor_share = -0.1\n", "mds_cluster.floor_share");
}

TEST_CASE("a policy name no policy has is an error that lists the valid names") {
  ConfigDir dir;
  auto detail = [&](const std::string& extra) {
    auto cfg = Config::load(dir.write("pvfs.toml", std::string(kMinimal) + extra));
    REQUIRE_FALSE(cfg.ok());
    CHECK(cfg.code() == Errc::invalid_argument);
    return cfg.status().detail();
  };
  CHECK(detail("[mds_cluster]\nplacement = \"random\"\n") ==
        "config key 'mds_cluster.placement': must be anu, hash or round-robin, not 'random'");
  CHECK(detail("[elevator]\npolicy = \"cscan\"\n") ==
        "config key 'elevator.policy': must be obrr or fcfs, not 'cscan'");
  CHECK(detail("[elevator]\nquantum_unit = \"pages\"\n") ==
        "config key 'elevator.quantum_unit': must be requests or bytes, not 'pages'");
  CHECK(detail("[mds_cluster]\nplacement = 2\n") ==
        "config key 'mds_cluster.placement': must be a string (anu, hash or round-robin)");
}

TEST_CASE("[storage] inline limits are read, rendered back, and a bad value names its key") {
  ConfigDir dir;
  auto defaults = Config::load(dir.write("a.toml", kMinimal));
  REQUIRE(defaults.ok());
  CHECK(defaults->storage_inline.max_bytes == 1048576);
  CHECK(defaults->storage_inline.max_latency == std::chrono::microseconds(200));
  auto c = Config::load(dir.write("b.toml", std::string(kMinimal) +
                                                "[storage]\ninline_max_bytes = 0\ninline_max_latency_us = 50\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  CHECK(c->storage_inline.max_bytes == 0);
  CHECK(c->storage_inline.max_latency == std::chrono::microseconds(50));
  auto back = Config::load(dir.write("back.toml", c->render()));
  REQUIRE(back.ok());
  CHECK(back->storage_inline.max_bytes == 0);
  CHECK(back->storage_inline.max_latency == std::chrono::microseconds(50));
  expect_error_naming(std::string(kMinimal) + "[storage]\ninline_max_bytes = -1\n", "storage.inline_max_bytes");
}

TEST_CASE("the MDS lease lies between the heartbeat interval and dead_after, or is an error naming it") {
  ConfigDir dir;
  auto defaults = Config::load(dir.write("a.toml", kMinimal));
  REQUIRE(defaults.ok());
  CHECK(defaults->mds_lease() > defaults->heartbeat_interval_ms);
  CHECK(defaults->mds_lease() < defaults->mds_dead_after_ms);
  auto set = Config::load(dir.write("b.toml", std::string(kMinimal) + "[mds_cluster]\nlease_ms = 1500\n"));
  REQUIRE(set.ok());
  CHECK(set->mds_lease() == 1500);
  CHECK(Config::load(dir.write("c.toml", set->render()))->mds_lease_ms == 1500);
  expect_error_naming(std::string(kMinimal) + "[mds_cluster]\nlease_ms = 3000\n", "mds_cluster.lease_ms");
  expect_error_naming(std::string(kMinimal) + "[mds_cluster]\nlease_ms = 900\n", "mds_cluster.lease_ms");
}

TEST_CASE("the leases on open and unlinked open files are 15 s and 5 minutes unless set, and are bounded") {
  ConfigDir dir;
  auto defaults = Config::load(dir.write("a.toml", kMinimal));
  REQUIRE(defaults.ok());
  CHECK(defaults->orphan_lease_ms == 300000);
  auto set = Config::load(dir.write("b.toml", std::string(kMinimal) + "[mds_tuning]\norphan_lease_ms = 2000\n"));
  REQUIRE(set.ok());
  CHECK(set->orphan_lease_ms == 2000);
  CHECK(Config::load(dir.write("c.toml", set->render()))->orphan_lease_ms == 2000);
  expect_error_naming(std::string(kMinimal) + "[mds_tuning]\norphan_lease_ms = 50\n", "mds_tuning.orphan_lease_ms");
  expect_error_naming(std::string(kMinimal) + "[mds_tuning]\norphan_lease_ms = 90000000\n",
                      "mds_tuning.orphan_lease_ms");
  CHECK(defaults->open_lease_ms == 15000);
  expect_error_naming(std::string(kMinimal) + "[mds_tuning]\nopen_lease_ms = 0\n", "mds_tuning.open_lease_ms");
}

TEST_CASE("a zero probe timeout or maintainer interval is an error naming the key") {
  expect_error_naming(std::string(kMinimal) + "[scheduling]\nprobe_timeout_ms = 0\n",
                      "scheduling.probe_timeout_ms");
  expect_error_naming(std::string(kMinimal) + "[scheduling]\nmaintainer_interval_ms = 0\n",
                      "scheduling.maintainer_interval_ms");
}

TEST_CASE("relative data_dir and secret_file resolve against the config's folder") {
  ConfigDir dir;
  const auto file = dir.write("etc/pvfs/pvfs.toml",
                              "secret_file = \"secret.key\"\n"
                              "[[mds]]\n"
                              "address = \"127.0.0.1:7000\"\n"
                              "data_dir = \"data/mds0\"\n"
                              "[[server]]\n"
                              "address = \"127.0.0.1:7100\"\n"
                              "data_dir = \"../store\"\n"
                              "[[server]]\n"
                              "address = \"127.0.0.1:7101\"\n"
                              "data_dir = \"/srv/pvfs/s1\"\n");
  auto c = Config::load(file);
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  const auto base = dir.path() / "etc" / "pvfs";
  CHECK(c->secret_file == base / "secret.key");
  CHECK(c->mds[0].data_dir == base / "data/mds0");
  CHECK(c->servers[0].data_dir == base / "../store");
  CHECK(c->servers[1].data_dir == "/srv/pvfs/s1");
  CHECK(c->servers[0].id == 0);
  CHECK(c->servers[1].id == 1);

  auto abs = Config::load(dir.write("b.toml",
                                    "secret_file = \"/etc/pvfs/secret\"\n"
                                    "[[mds]]\naddress = \"h:1\"\n"));
  REQUIRE(abs.ok());
  CHECK(abs->secret_file == "/etc/pvfs/secret");
}

TEST_CASE("find_mds and find_server look entries up by id") {
  ConfigDir dir;
  auto c = Config::load(dir.write("pvfs.toml",
                                  "secret_file = \"k\"\n"
                                  "[[mds]]\nid = 3\naddress = \"a:1\"\n"
                                  "[[server]]\nid = 7\naddress = \"b:2\"\n"
                                  "[[server]]\nid = 4\naddress = \"c:3\"\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  REQUIRE(c->find_mds(3) != nullptr);
  CHECK(c->find_mds(3)->address.host == "a");
  CHECK(c->find_mds(0) == nullptr);
  REQUIRE(c->find_server(4) != nullptr);
  CHECK(c->find_server(4)->address == Endpoint{"c", 3});
  CHECK(c->find_server(7)->address.port == 2);
  CHECK(c->find_server(3) == nullptr);
}

TEST_CASE("a missing secret_file is an error naming the key") {
  expect_error_naming("[[mds]]\naddress = \"h:1\"\n", "secret_file");
  expect_error_naming("secret_file = 42\n[[mds]]\naddress = \"h:1\"\n", "secret_file");
}

TEST_CASE("a config without any [[mds]] entry is an error naming mds") {
  expect_error_naming("secret_file = \"k\"\n[[server]]\naddress = \"h:1\"\n", "mds");
  expect_error_naming("secret_file = \"k\"\n[mds]\naddress = \"h:1\"\n", "[[mds]]");
}

TEST_CASE("a bad or missing address is an error naming the entry's address key") {
  expect_error_naming(std::string(kMinimal) + "[[server]]\naddress = \"nonsense\"\n",
                      "server[0].address");
  expect_error_naming(std::string(kMinimal) + "[[server]]\naddress = \"h:1\"\n"
                      "[[server]]\naddress = \"h:70000\"\n", "server[1].address");
  expect_error_naming(std::string(kMinimal) + "[[server]]\ndata_dir = \"d\"\n",
                      "server[0].address");
  expect_error_naming("secret_file = \"k\"\n[[mds]]\naddress = \"fe80::1\"\n", "mds[0].address");
  expect_error_naming(std::string(kMinimal) + "[[server]]\naddress = 7100\n", "server[0].address");
}

TEST_CASE("a data_dir that is not a string is an error, not silently ignored") {
  expect_error_naming(std::string(kMinimal) + "[[server]]\naddress = \"h:1\"\ndata_dir = 5\n",
                      "server[0].data_dir");
}

TEST_CASE("a duplicate id is an error naming the id key") {
  expect_error_naming(std::string(kMinimal) + "[[server]]\nid = 4\naddress = \"h:1\"\n"
                      "[[server]]\nid = 4\naddress = \"h:2\"\n", "server[1].id");
  // An explicit id may also collide with a position-derived one.
  expect_error_naming("secret_file = \"k\"\n[[mds]]\naddress = \"h:1\"\n"
                      "[[mds]]\nid = 0\naddress = \"h:2\"\n", "mds[1].id");
}

TEST_CASE("negative or non-integer numbers are errors naming the key") {
  expect_error_naming(std::string(kMinimal) + "[timeouts]\nrpc_ms = -5\n", "timeouts.rpc_ms");
  expect_error_naming(std::string(kMinimal) + "[timeouts]\nbusy_limit_ms = -1\n", "timeouts.busy_limit_ms");
  expect_error_naming(std::string(kMinimal) + "[timeouts]\nconnect_ms = 2.5\n",
                      "timeouts.connect_ms");
  expect_error_naming(std::string(kMinimal) + "[layout]\nstripe_count = true\n",
                      "layout.stripe_count");
  expect_error_naming(std::string(kMinimal) + "[layout]\nstripe_count = 4294967296\n",
                      "layout.stripe_count");
  expect_error_naming(std::string(kMinimal) + "[layout]\nfull_percent = 0\n", "layout.full_percent");
  expect_error_naming(std::string(kMinimal) + "[layout]\nfull_percent = 101\n", "layout.full_percent");
  expect_error_naming(std::string(kMinimal) + "[mds_tuning]\nsync_interval_ms = \"1s\"\n",
                      "mds_tuning.sync_interval_ms");
  expect_error_naming(std::string(kMinimal) + "[client]\nattr_timeout_s = -0.5\n",
                      "client.attr_timeout_s");
  expect_error_naming(std::string(kMinimal) + "[client]\nentry_timeout_s = false\n",
                      "client.entry_timeout_s");
  expect_error_naming(std::string(kMinimal) + "[client]\nwrite_behind_bytes = 2147483648\n",
                      "client.write_behind_bytes");
  expect_error_naming(std::string(kMinimal) + "[client]\nwrite_behind_bytes = \"4M\"\n",
                      "client.write_behind_bytes");
  expect_error_naming("secret_file = \"k\"\n[[mds]]\nid = -1\naddress = \"h:1\"\n", "mds[0].id");
  expect_error_naming(std::string(kMinimal) + "[timeouts]\nrpc_ms = 0\n", "timeouts.rpc_ms");
}

TEST_CASE("a stripe_size that is not a multiple of 4096 is an error naming the key") {
  expect_error_naming(std::string(kMinimal) + "[layout]\nstripe_size = 5000\n",
                      "layout.stripe_size");
  expect_error_naming(std::string(kMinimal) + "[layout]\nstripe_size = 2048\n",
                      "layout.stripe_size");
  expect_error_naming(std::string(kMinimal) + "[layout]\nstripe_size = 0\n", "layout.stripe_size");

  ConfigDir dir;
  auto ok = Config::load(dir.write("pvfs.toml", std::string(kMinimal) + "[layout]\nstripe_size = 65536\n"));
  REQUIRE_MESSAGE(ok.ok(), ok.status().to_string());
  CHECK(ok->stripe_size == 65536);
}

TEST_CASE("a TOML syntax error names the file and the line") {
  ConfigDir dir;
  const auto file = dir.write("broken.toml",
                              "secret_file = \"k\"\n"
                              "[[mds]]\n"
                              "address = \"h:1\n");  // unterminated string on line 3
  auto c = Config::load(file);
  REQUIRE_FALSE(c.ok());
  CHECK(c.code() == Errc::invalid_argument);
  INFO("detail: ", c.status().detail());
  CHECK(c.status().detail().find(file.string() + ":3:") != std::string::npos);
}

TEST_CASE("a config file that does not exist is an error naming the file") {
  ConfigDir dir;
  auto c = Config::load(dir.path() / "absent.toml");
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().detail().find("absent.toml") != std::string::npos);
}

TEST_CASE("parse_endpoint accepts host:port and bracketed IPv6") {
  auto a = parse_endpoint("storage-1.example.org:7100");
  REQUIRE(a.ok());
  CHECK(*a == Endpoint{"storage-1.example.org", 7100});
  CHECK(a->to_string() == "storage-1.example.org:7100");

  auto b = parse_endpoint("127.0.0.1:0");
  REQUIRE(b.ok());
  CHECK(*b == Endpoint{"127.0.0.1", 0});

  auto c = parse_endpoint("[::1]:65535");
  REQUIRE(c.ok());
  CHECK(*c == Endpoint{"::1", 65535});
  CHECK(c->to_string() == "[::1]:65535");
  CHECK(*parse_endpoint(c->to_string()) == *c);
}

TEST_CASE("parse_endpoint rejects garbage") {
  for (const char* text : {"", "host", "host:", ":80", "host:65536", "host:99999999999", "host:12a",
                           "host:-1", "host:+1", "[::1]", "[::1]7000", "[::1:7000", "[::1]:",
                           "[]:80", "fe80::1", "::1:80", "a b:1", "host:80 "}) {
    INFO("text: '", text, "'");
    auto ep = parse_endpoint(text);
    CHECK_FALSE(ep.ok());
    CHECK(ep.code() == Errc::invalid_argument);
  }
}

TEST_CASE("a bad metrics address is an error naming the entry's metrics key") {
  expect_error_naming(std::string(kMinimal) + "[[server]]\naddress = \"h:1\"\nmetrics = \"nope\"\n",
                      "server[0].metrics");
  expect_error_naming(std::string(kMinimal) + "metrics = 9100\n", "mds[0].metrics");
}

}  // namespace pvfs


namespace pvfs {

TEST_CASE("[security] is read, round-trips through render, and bad values name their key") {
  ConfigDir dir;
  auto off = Config::load(dir.write("off.toml", kMinimal));
  REQUIRE(off.ok());
  CHECK_FALSE(off->encrypt);
  CHECK_FALSE(off->root_squash);
  CHECK(off->root_squash_except.empty());
  auto c = Config::load(dir.write("pvfs.toml", std::string(kMinimal) +
                                                   "[security]\nencrypt = true\nroot_squash = true\n"
                                                   "root_squash_except = [\"127.0.0.1\", \"::1\"]\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  CHECK(c->encrypt);
  CHECK(c->root_squash);
  CHECK(c->root_squash_except == std::vector<std::string>{"127.0.0.1", "::1"});
  auto back = Config::load(dir.write("back.toml", c->render()));
  REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  CHECK(back->encrypt);
  CHECK(back->root_squash);
  CHECK(back->root_squash_except == c->root_squash_except);
  expect_error_naming(std::string(kMinimal) + "[security]\nencrypt = 1\n", "security.encrypt");
  expect_error_naming(std::string(kMinimal) + "[security]\nroot_squash_except = \"127.0.0.1\"\n",
                      "security.root_squash_except");
  expect_error_naming(std::string(kMinimal) + "[security]\nroot_squash_except = [\"node-a\"]\n",
                      "security.root_squash_except");
}

}  // namespace pvfs

namespace pvfs {

TEST_CASE("[iosched] is read, rendered back, defaults to no scheduling, and bad values name their key") {
  ConfigDir dir;
  auto d = Config::load(dir.write("pvfs.toml", kMinimal));
  REQUIRE(d.ok());
  CHECK(d->iosched_policy == "none");
  CHECK(d->iosched_lease_ms == 5000);
  CHECK(d->iosched_max_wait_s == 0);
  CHECK(d->iosched_idle_ms == 0);
  CHECK_FALSE(d->iosched_reads);
  auto c = Config::load(dir.write("io.toml", std::string(kMinimal) +
                                                 "[iosched]\npolicy = \"sa-sjf\"\nlease_ms = 2000\n"
                                                 "max_wait_s = 30.5\nidle_ms = 500\nreads = true\ngather_ms = 750\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  CHECK(c->iosched_policy == "sa-sjf");
  CHECK(c->iosched_lease_ms == 2000);
  CHECK(c->iosched_max_wait_s == 30.5);
  CHECK(c->iosched_idle_ms == 500);
  CHECK(c->iosched_reads);
  auto back = Config::load(dir.write("back.toml", c->render()));
  REQUIRE(back.ok());
  CHECK(back->iosched_policy == "sa-sjf");
  CHECK(back->iosched_max_wait_s == 30.5);
  CHECK(back->iosched_idle_ms == 500);
  CHECK(back->iosched_reads);
  CHECK(back->iosched_gather_ms == 750);
  CHECK(d->iosched_gather_ms == 0);
  expect_error_naming(std::string(kMinimal) + "[iosched]\npolicy = \"lifo\"\n", "iosched.policy");
  expect_error_naming(std::string(kMinimal) + "[iosched]\nlease_ms = 10\n", "iosched.lease_ms");
  expect_error_naming(std::string(kMinimal) + "[iosched]\nreads = 1\n", "iosched.reads");
  expect_error_naming(std::string(kMinimal) + "[iosched]\ngather_ms = 700000\n", "iosched.gather_ms");
}


TEST_CASE("an unknown section or key is an error naming the file, the key and the likely intended one") {
  ConfigDir dir;
  // `extra` after the minimal config, or `top` before it (top-level keys).
  auto detail = [&](const std::string& extra, const std::string& top = {}) {
    const auto file = dir.write("pvfs.toml", top + kMinimal + extra);
    auto cfg = Config::load(file);
    REQUIRE_FALSE(cfg.ok());
    CHECK(cfg.code() == Errc::invalid_argument);
    const std::string text = cfg.status().detail();
    CHECK(text.rfind(file.string() + ": ", 0) == 0);
    return text.substr(file.string().size() + 2);
  };
  CHECK(detail("[timeout]\nrpc_ms = 100\n") == "unknown section '[timeout]' (did you mean [timeouts]?)");
  CHECK(detail("[layout]\nstripe_sise = 65536\n") ==
        "unknown key 'layout.stripe_sise' (did you mean 'layout.stripe_size'?)");
  CHECK(detail("[client]\nrpc_ms = 100\n") == "unknown key 'client.rpc_ms' (it belongs in [timeouts])");
  CHECK(detail("", "stripe_size = 65536\n") == "unknown key 'stripe_size' (it belongs in [layout])");
  CHECK(detail("", "secret_flie = \"k\"\n") == "unknown key 'secret_flie' (did you mean 'secret_file'?)");
  CHECK(detail("[[mds]]\naddress = \"127.0.0.1:7001\"\nstripe_size = 1\n") ==
        "unknown key 'mds[1].stripe_size' (it belongs in [layout])");
  CHECK(detail("[frobnicate]\nx = 1\n") == "unknown section '[frobnicate]'");
  CHECK(detail("[[server]]\naddress = \"127.0.0.1:7100\"\ndatadir = \"s0\"\n") ==
        "unknown key 'server[0].datadir' (did you mean 'server[0].data_dir'?)");
  CHECK(detail("", "layout = 5\n") == "'layout' must be a section ([layout]), not a value");
}

TEST_CASE("a config file that cannot be read is one line without a position") {
  ConfigDir dir;
  auto c = Config::load(dir.path() / "absent.toml");
  REQUIRE_FALSE(c.ok());
  CHECK(c.code() == Errc::not_found);
  CHECK(c.status().detail() == "cannot read config " + (dir.path() / "absent.toml").string() +
                                   ": No such file or directory");
  auto d = Config::load(dir.path());
  REQUIRE_FALSE(d.ok());
  CHECK(d.status().detail() == "cannot read config " + dir.path().string() + ": Is a directory");
}

}  // namespace pvfs

namespace pvfs {

TEST_CASE("[locks] lease_ms is read, rendered back, and refused out of range") {
  ConfigDir dir;
  auto d = Config::load(dir.write("pvfs.toml", kMinimal));
  REQUIRE(d.ok());
  CHECK(d->lock_lease_ms == 5000);
  auto c = Config::load(dir.write("l.toml", std::string(kMinimal) + "[locks]\nlease_ms = 1500\n"));
  REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  CHECK(c->lock_lease_ms == 1500);
  auto back = Config::load(dir.write("back.toml", c->render()));
  REQUIRE(back.ok());
  CHECK(back->lock_lease_ms == 1500);
  expect_error_naming(std::string(kMinimal) + "[locks]\nlease_ms = 50\n", "locks.lease_ms");
  expect_error_naming(std::string(kMinimal) + "[locks]\nlease_ms = \"x\"\n", "locks.lease_ms");
}

}  // namespace pvfs
