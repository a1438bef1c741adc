// pvfs-mds: parses options, opens the namespace, serves the metadata
// protocol. Wiring only.
#include <cstdio>
#include <ctime>
#include <optional>

#include <CLI/CLI.hpp>
#include <asio.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "mds/mds_service.h"
#include "mds/namespace_store.h"
#include "mds/wall_clock.h"
#include "config/config.h"
#include "daemon/daemon.h"
#include "shared/rpc/io_context.h"
#include "shared/rpc/rpc_server.h"
#include "shared/usage_error.h"

int main(int argc, char** argv) {
  CLI::App app{"pvfs-mds: a pvfs metadata server (the namespace in LMDB).\n"
               "See pvfs-mds(8) and pvfs.toml(5).",
               "pvfs-mds"};
  app.set_version_flag("--version", PVFS_VERSION);
  std::string config_path, ready_file;
  uint32_t id = 0;
  bool verbose = false;
  pvfs::mds::ClusterOptions cluster_options;
  app.add_option("-c,--config", config_path, "cluster config file (TOML)")->required();
  auto* id_option = app.add_option(
      "-i,--id", id,
      "this server's id: its [[mds]] entry in the config [the one entry on this machine]");
  app.add_option("--ready-file", ready_file, "write the bound port here once serving");
  app.add_flag("-v,--verbose", verbose, "log debug messages");
  app.add_option("--slowdown", cluster_options.slowdown,
                 "for experiments: serve client requests one at a time, each taking F times "
                 "--service-us, as a slower machine would (F >= 1; default: off)")
      ->check(CLI::Range(1.0, 1000.0));
  app.add_option("--service-us", cluster_options.service_us,
                 "with --slowdown: the service time of one request at F = 1, in microseconds")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  if (auto code = pvfs::parse_command_line<CLI::ParseError>(app, argc, argv, "pvfs-mds")) return *code;

  auto boot = pvfs::daemon::boot("pvfs-mds", pvfs::daemon::Role::mds, config_path,
                                 id_option->count() ? std::optional<uint32_t>(id) : std::nullopt, verbose);
  if (!boot) return 1;
  id = boot->id;
  const pvfs::Config& config = boot->config;
  const pvfs::DaemonEntry& self = boot->self;
  const pvfs::Secret& key = boot->key;
  // One LMDB environment per file set, in data_dir/fileset-<id>.
  const pvfs::Timespec now = pvfs::mds::wall_now();
  auto filesets = pvfs::mds::FileSetCatalog::open(self.data_dir, now, /*create_root=*/false);
  if (!filesets) {
    std::fprintf(stderr, "pvfs-mds: cannot open namespace in %s: %s\n", self.data_dir.c_str(),
                 filesets.status().to_string().c_str());
    return 1;
  }

  pvfs::rpc::IoContext io(1);
  pvfs::daemon::Loop loop("pvfs-mds", io);
  asio::thread_pool sync_pool(1);
  // The ANU map (saved, or the first one of the configured members) says
  // whether this member makes the namespace root on a fresh data dir.
  pvfs::mds::MdsCluster cluster(io, config, key, pvfs::MdsId(id), **filesets, sync_pool, cluster_options);
  if (auto st = cluster.load(); !st.ok()) {
    std::fprintf(stderr, "pvfs-mds: %s\n", st.to_string().c_str());
    return 1;
  }
  if (cluster.should_create_root() && !(*filesets)->has(pvfs::FileSetId(0))) {
    if (auto made = (*filesets)->create(pvfs::FileSetId(0), now); !made) {
      std::fprintf(stderr, "pvfs-mds: cannot create the namespace root in %s: %s\n",
                   self.data_dir.c_str(), made.status().to_string().c_str());
      return 1;
    }
  }
  pvfs::mds::MdsService service(io, config, key, id, **filesets, cluster, sync_pool);
  auto server = pvfs::rpc::RpcServer::listen(
      io, self.address,
      pvfs::rpc::Auth(key, {pvfs::rpc::Kind::mds, id}, config.encrypt),
      [&service](auto conn, auto msg) { return service.handle(std::move(conn), std::move(msg)); },
      std::chrono::milliseconds(config.connect_timeout_ms), config.local_sockets);
  if (!server) {
    std::fprintf(stderr, "pvfs-mds: %s\n", server.status().to_string().c_str());
    return 1;
  }
  service.start();
  cluster.start();
  (*server)->start();
  if (!loop.serve_metrics(self.metrics, [&service] { return service.metrics(); })) return 1;
  loop.on_shutdown([&] {
    service.stop();
    cluster.stop();
    (*server)->stop();
  });
  const int rc = loop.run(ready_file, (*server)->port(),
                          fmt::format("serving namespace {} ({} file sets) on port {}", self.data_dir.string(),
                                      (*filesets)->size(), (*server)->port()));
  // As in pvfs-server: the sync pool's last work, then the suspended
  // requests unwound while the service and cluster are alive.
  sync_pool.join();
  io.drop_suspended();
  if (rc != 0) return rc;
  for (const auto& store : (*filesets)->stores())
    if (auto st = store->sync(); !st.ok()) spdlog::error("final sync failed: {}", st.to_string());
  return 0;
}
