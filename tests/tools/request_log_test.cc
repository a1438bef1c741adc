// Following one operation through the cluster by its request id: after
// `pvfs-ctl loglevel all debug`, a truncate through a real FUSE mount is
// logged with one id by the metadata server and by every storage server
// whose object it cut. The real pvfs-ctl ($PVFS_CTL) on a real cluster.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include <doctest/doctest.h>

#include "tests/support/run_tool.h"
#include "tests/support/test_cluster.h"

namespace request_log_test {

namespace {

namespace fs = std::filesystem;
using pvfs::test::Outcome;
using pvfs::test::slurp;
using pvfs::test::TestCluster;

using pvfs::test::skip_without_fuse;

// The request ids of the log lines in `log` naming operation `op`.
std::set<std::string> request_ids(const std::string& log, const std::string& op) {
  std::set<std::string> ids;
  const std::regex line("req ([0-9a-f]{16}) job \\S+ " + op + " ");
  for (std::sregex_iterator it(log.begin(), log.end(), line), end; it != end; ++it)
    ids.insert((*it)[1].str());
  return ids;
}

}  // namespace

TEST_CASE("one truncate carries one request id through the MDS and every storage server it touches") {
  if (skip_without_fuse()) return;
  pvfs::ClusterOptions options;
  options.servers = 2;
  TestCluster t(options, true);
  const std::string config = t.cluster().config_path().string();
  const fs::path file = t.mnt() / "f";
  {
    std::ofstream out(file, std::ios::binary);
    out << std::string(3 << 20, 'x');  // 3 stripes of 1 MiB over both servers
  }
  auto logs = [&] {
    std::map<std::string, std::string> text;
    for (const auto& d : t.cluster().daemons())
      if (d.name != "mount") text[d.name] = slurp(d.log);
    return text;
  };
  // At the default level no request is logged.
  for (const auto& [name, text] : logs()) CHECK(request_ids(text, "\\w+").empty());

  Outcome raised = pvfs::test::run_tool("PVFS_CTL", t.dir(), {"loglevel", "-c", config, "all", "debug"});
  CAPTURE(raised);
  REQUIRE(raised.status == 0);
  REQUIRE(::truncate(file.c_str(), 100) == 0);

  auto after = logs();
  const auto mds_ids = request_ids(after["mds0"], "setattr");
  CAPTURE(after["mds0"]);
  REQUIRE(mds_ids.size() == 1);
  const std::string id = *mds_ids.begin();
  for (const char* server : {"server0", "server1"}) {
    CAPTURE(server);
    CAPTURE(after[server]);
    CHECK(request_ids(after[server], "truncate").count(id) == 1);
  }

  // Back to info: the next operation is not logged.
  Outcome lowered = pvfs::test::run_tool("PVFS_CTL", t.dir(), {"loglevel", "-c", config, "all", "info"});
  REQUIRE(lowered.status == 0);
  REQUIRE(::truncate(file.c_str(), 10) == 0);
  CHECK(request_ids(logs()["mds0"], "setattr").size() == 1);
}

}  // namespace request_log_test
