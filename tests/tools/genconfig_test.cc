// pvfs-ctl genconfig as code: parsing the daemon lists, planning the config
// (every refusal is one line naming what was wrong), writing the config and
// key (read back by Config::load and load_secret; never overwritten without
// force), and the documentation promise: every key a rendered config holds
// is described in man/pvfs.toml.5 ($PVFS_SOURCE_ROOT, set by meson).
#include "utils/ctl/genconfig.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "shared/secret.h"
#include "tests/support/temp_dir.h"

namespace pvfs::ctl::genconfig_test {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

GenconfigOptions four_servers(const fs::path& dir) {
  GenconfigOptions o;
  o.mds = "10.20.0.1:7000";
  o.servers = "10.20.0.11:7100,10.20.0.12:7100,node13:7100,[fd00::14]:7100";
  o.data_dir = "/srv/pvfs";
  o.out = dir / "pvfs.toml";
  return o;
}

// The detail of a failed plan for `o`, or "" when it did not fail.
std::string plan_error(const GenconfigOptions& o) {
  auto plan = plan_config(o, "secret.key");
  if (plan.ok()) return "";
  CHECK(plan.status().code() == Errc::invalid_argument);
  CHECK(plan.status().detail().find('\n') == std::string::npos);
  return plan.status().detail();
}

TEST_CASE("entries without ids are numbered by position; ID= entries keep theirs") {
  auto list = parse_daemon_list("a:1, 5=b:2 ,[::1]:3", "--servers");
  REQUIRE(list.ok());
  REQUIRE(list->size() == 3);
  CHECK((*list)[0].id == 0);
  CHECK((*list)[0].address == Endpoint{"a", 1});
  CHECK((*list)[1].id == 5);
  CHECK((*list)[1].address == Endpoint{"b", 2});
  CHECK((*list)[2].id == 2);
  CHECK((*list)[2].address == Endpoint{"::1", 3});
}

TEST_CASE("bad daemon lists are refused naming the list and the entry") {
  auto error_of = [](const char* text) {
    auto list = parse_daemon_list(text, "--servers");
    REQUIRE_FALSE(list.ok());
    CHECK(list.status().detail().find("--servers") == 0);
    return list.status().detail();
  };
  CHECK(error_of("a:0").find("port 0 in 'a:0'") != std::string::npos);
  CHECK(error_of("a:7100,b").find("'b'") != std::string::npos);
  CHECK(error_of("a:70000").find("bad port") != std::string::npos);
  CHECK(error_of("a:1,,b:1").find("empty entry") != std::string::npos);
  CHECK(error_of("").find("no addresses") != std::string::npos);
  CHECK(error_of("x=a:1").find("bad id") != std::string::npos);
  CHECK(error_of("1=a:1,b:2").find("id 1 given twice") != std::string::npos);
}

TEST_CASE("a plan gives each daemon its own data folder under --data-dir") {
  test::TempDir dir;
  auto plan = plan_config(four_servers(dir.path()), "secret.key");
  REQUIRE(plan.ok());
  REQUIRE(plan->mds.size() == 1);
  REQUIRE(plan->servers.size() == 4);
  CHECK(plan->mds[0].data_dir == "/srv/pvfs/mds0");
  CHECK(plan->servers[3].data_dir == "/srv/pvfs/server3");
  CHECK(plan->servers[3].address == Endpoint{"fd00::14", 7100});
}

TEST_CASE("plans with a repeated address, a relative data dir or a bad layout are refused") {
  test::TempDir dir;
  auto o = four_servers(dir.path());
  o.servers = "10.20.0.11:7100,NODE13:7100,node13:7100";
  CHECK(plan_error(o).find("node13:7100 is given twice") != std::string::npos);
  o = four_servers(dir.path());
  o.mds = "10.20.0.11:7100";
  CHECK(plan_error(o).find("10.20.0.11:7100 is given twice") != std::string::npos);
  o = four_servers(dir.path());
  o.data_dir = "srv/pvfs";
  CHECK(plan_error(o).find("--data-dir 'srv/pvfs' must be an absolute path") != std::string::npos);
  o = four_servers(dir.path());
  o.stripe_size = 1000;
  CHECK(plan_error(o).find("--stripe-size 1000") != std::string::npos);
  o = four_servers(dir.path());
  o.stripe_count = 5;
  CHECK(plan_error(o).find("--stripe-count 5 is more than the 4 storage servers") !=
        std::string::npos);
}

TEST_CASE("the written config loads back with every daemon, the layout and the key") {
  test::TempDir dir;
  auto o = four_servers(dir.path());
  o.stripe_size = 256 << 10;
  o.stripe_count = 2;
  REQUIRE(genconfig(o) == 0);
  auto loaded = Config::load(dir.path() / "pvfs.toml");
  REQUIRE(loaded.ok());
  CHECK(loaded->secret_file == dir.path() / "secret.key");
  CHECK(slurp(dir.path() / "pvfs.toml").find("secret_file = 'secret.key'") != std::string::npos);
  auto plan = plan_config(o, "secret.key");
  REQUIRE(plan.ok());
  REQUIRE(loaded->mds.size() == 1);
  CHECK(loaded->mds[0].address == plan->mds[0].address);
  CHECK(loaded->mds[0].data_dir == plan->mds[0].data_dir);
  REQUIRE(loaded->servers.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(loaded->servers[i].id == i);
    CHECK(loaded->servers[i].address == plan->servers[i].address);
    CHECK(loaded->servers[i].data_dir == plan->servers[i].data_dir);
  }
  CHECK(loaded->stripe_size == 256u << 10);
  CHECK(loaded->stripe_count == 2);
  CHECK(load_secret(loaded->secret_file).ok());
  struct stat st {};
  REQUIRE(::stat(loaded->secret_file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("existing files are kept unless --force, which writes a new key") {
  test::TempDir dir;
  auto o = four_servers(dir.path());
  REQUIRE(genconfig(o) == 0);
  const std::string config_before = slurp(dir.path() / "pvfs.toml");
  const std::string key_before = slurp(dir.path() / "secret.key");
  o.servers = "10.20.0.11:7100";
  CHECK(genconfig(o) == 1);
  CHECK(slurp(dir.path() / "pvfs.toml") == config_before);
  CHECK(slurp(dir.path() / "secret.key") == key_before);

  fs::remove(dir.path() / "pvfs.toml");
  CHECK(genconfig(o) == 1);  // the key alone is still there
  CHECK_FALSE(fs::exists(dir.path() / "pvfs.toml"));

  o.force = true;
  REQUIRE(genconfig(o) == 0);
  auto loaded = Config::load(dir.path() / "pvfs.toml");
  REQUIRE(loaded.ok());
  CHECK(loaded->servers.size() == 1);
  CHECK(slurp(dir.path() / "secret.key") != key_before);
  CHECK(load_secret(loaded->secret_file).ok());
}

TEST_CASE("a key elsewhere is named by its absolute path") {
  test::TempDir dir;
  fs::create_directories(dir.path() / "keys");
  auto o = four_servers(dir.path());
  o.key = dir.path() / "keys" / "cluster.key";
  REQUIRE(genconfig(o) == 0);
  auto loaded = Config::load(dir.path() / "pvfs.toml");
  REQUIRE(loaded.ok());
  CHECK(loaded->secret_file == dir.path() / "keys" / "cluster.key");
  CHECK(slurp(dir.path() / "pvfs.toml").find((dir.path() / "keys" / "cluster.key").string()) !=
        std::string::npos);
}

// The text of man page section `title` (".SH title" up to the next ".SH").
std::string man_section(const std::string& man, const std::string& title) {
  const size_t start = man.find("\n.SH " + title + "\n");
  if (start == std::string::npos) return {};
  const size_t end = man.find("\n.SH ", start + 1);
  return man.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST_CASE("every key of a rendered config is described in pvfs.toml(5)") {
  const char* root = std::getenv("PVFS_SOURCE_ROOT");
  REQUIRE_MESSAGE(root, "PVFS_SOURCE_ROOT is not set: run this test through meson test");
  const std::string man = slurp(fs::path(root) / "man" / "pvfs.toml.5");
  REQUIRE_FALSE(man.empty());
  test::TempDir dir;
  auto plan = plan_config(four_servers(dir.path()), "secret.key");
  REQUIRE(plan.ok());
  std::istringstream rendered(plan->render());
  std::string section = "TOP-LEVEL KEYS";
  std::set<std::string> checked;
  for (std::string line; std::getline(rendered, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line.starts_with("[[")) {
      CHECK_MESSAGE(man_section(man, "TOP-LEVEL KEYS").find(".BR " + line) != std::string::npos,
                    line, " is not described");
      section = "DAEMON ENTRIES";
      continue;
    }
    if (line[0] == '[') {
      section = line;
      CHECK_MESSAGE(!man_section(man, section).empty(), "no section ", section, " in pvfs.toml.5");
      continue;
    }
    const std::string key = line.substr(0, line.find(" = "));
    CHECK_MESSAGE(man_section(man, section).find(".BR " + key + " ") != std::string::npos,
                  "key '", key, "' of ", section, " is not described in pvfs.toml.5");
    checked.insert(section + " " + key);
  }
  CHECK(checked.size() > 20);  // the render really was read
}

}  // namespace
}  // namespace pvfs::ctl::genconfig_test
