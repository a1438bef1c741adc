// pvfs-server: parses options, opens the object store, serves the storage
// protocol and heartbeats to the metadata server. Wiring only.
#include <cstdio>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <asio.hpp>
#include <fmt/format.h>

#include "server/calibration.h"
#include "server/maintainer.h"
#include "server/object_store.h"
#include "server/qos_agent.h"
#include "server/registration.h"
#include "server/storage_service.h"
#include "config/config.h"
#include "daemon/daemon.h"
#include "shared/rpc/io_context.h"
#include "shared/rpc/rpc_server.h"
#include "shared/usage_error.h"

int main(int argc, char** argv) {
  CLI::App app{"pvfs-server: a pvfs storage server (objects on local disk).\n"
               "See pvfs-server(8) and pvfs.toml(5).",
               "pvfs-server"};
  app.set_version_flag("--version", PVFS_VERSION);
  std::string config_path, ready_file;
  uint32_t id = 0;
  unsigned disk_threads = 4;
  bool verbose = false;
  bool calibrate = false;
  double delay_factor = 1.0;
  uint32_t delay_for_s = 0;
  app.add_option("-c,--config", config_path, "cluster config file (TOML)")->required();
  auto* id_option = app.add_option(
      "-i,--id", id,
      "this server's id: its [[server]] entry in the config [the one entry on this machine]");
  app.add_option("--ready-file", ready_file, "write the bound port here once serving");
  app.add_option("--disk-threads", disk_threads, "threads doing disk I/O")
      ->capture_default_str()->check(CLI::Range(1, 256));
  app.add_option("--delay-factor", delay_factor,
                 "straggler injection: serve data requests this many times slower (see pvfs-server(8))")
      ->check(CLI::Range(1.0, 1000.0));
  app.add_option("--delay-for", delay_for_s, "end the injected delay after this many seconds (0: never)");
  app.add_flag("--calibrate", calibrate,
               "measure the data directory's write bandwidth per record size (for the elevator's "
               "deadlines), store it in DATA_DIR/bandwidth, print it and exit");
  app.add_flag("-v,--verbose", verbose, "log debug messages");
  if (auto code = pvfs::parse_command_line<CLI::ParseError>(app, argc, argv, "pvfs-server")) return *code;

  auto boot = pvfs::daemon::boot("pvfs-server", pvfs::daemon::Role::server, config_path,
                                 id_option->count() ? std::optional<uint32_t>(id) : std::nullopt, verbose);
  if (!boot) return 1;
  id = boot->id;
  const pvfs::Config& config = boot->config;
  const pvfs::DaemonEntry& self = boot->self;
  const pvfs::Secret& key = boot->key;
  auto store = pvfs::ObjectStore::open(self.data_dir);
  if (!store) {
    std::fprintf(stderr, "pvfs-server: %s\n", store.status().to_string().c_str());
    return 1;
  }

  if (calibrate) {
    auto table = pvfs::load_or_calibrate(self.data_dir, true);
    if (!table) {
      std::fprintf(stderr, "pvfs-server: calibration: %s\n", table.status().to_string().c_str());
      return 1;
    }
    std::printf("%s\n", table->to_text().c_str());
    return 0;
  }

  pvfs::rpc::IoContext io(1);
  pvfs::daemon::Loop loop("pvfs-server", io);
  asio::thread_pool disk_pool(disk_threads);
  auto service = pvfs::StorageService::open(id, config, self.data_dir, **store, disk_pool,
                                            disk_threads, io.get_executor());
  if (!service) {
    std::fprintf(stderr, "pvfs-server: %s\n", service.status().to_string().c_str());
    return 1;
  }
  if (delay_factor > 1.0)
    (*service)->straggler().set(delay_factor, std::chrono::seconds(delay_for_s));
  auto server = pvfs::rpc::RpcServer::listen(
      io, self.address,
      pvfs::rpc::Auth(key, {pvfs::rpc::Kind::server, id}, config.encrypt),
      [&service](auto conn, auto msg) { return (*service)->handle(std::move(conn), std::move(msg)); },
      std::chrono::milliseconds(config.connect_timeout_ms), config.local_sockets);
  if (!server) {
    std::fprintf(stderr, "pvfs-server: %s\n", server.status().to_string().c_str());
    return 1;
  }
  (*server)->start();
  pvfs::Endpoint advertised = self.address;
  advertised.port = (*server)->port();
  pvfs::Registration registration(io.get_executor(), config, key, id, advertised, **store,
                                  disk_pool);
  registration.start();
  pvfs::Maintainer maintainer(io.get_executor(), config, key, id, **service);
  maintainer.start();
  pvfs::QosAgent qos(io.get_executor(), config, key, id, (*service)->io_queue());
  qos.start();
  if (!loop.serve_metrics(self.metrics, [&service] { return (*service)->metrics(); })) return 1;
  loop.on_shutdown([&] {
    registration.stop();
    maintainer.stop();
    qos.stop();
    (*server)->stop();
  });
  const int rc = loop.run(ready_file, advertised.port,
                          fmt::format("serving {} on {}", self.data_dir.string(), advertised.to_string()));
  // Disk work still queued finishes against a live store; its completions
  // land in the stopped io_context, whose suspended requests then unwind
  // before the service they use is destroyed.
  disk_pool.join();
  io.drop_suspended();
  return rc;
}
