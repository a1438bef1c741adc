// pvfs-server: parses options, opens the object store, serves the storage
// protocol and heartbeats to the metadata server. Wiring only.
#include <sys/stat.h>

#include <csignal>
#include <cstdio>
#include <thread>

#include <CLI/CLI.hpp>
#include <asio.hpp>

#include "server/calibration.h"
#include "server/maintainer.h"
#include "server/object_store.h"
#include "server/registration.h"
#include "server/storage_service.h"
#include "config/config.h"
#include "shared/log.h"
#include "shared/ready_file.h"
#include "shared/rpc/metrics_http.h"
#include "shared/rpc/rpc_server.h"
#include "shared/self_id.h"

int main(int argc, char** argv) {
  CLI::App app{"pvfs-server: a pvfs storage server (objects on local disk).\n"
               "See pvfs-server(8) and pvfs.toml(5)."};
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
  CLI11_PARSE(app, argc, argv);

  auto config = pvfs::Config::load(config_path);
  if (!config) {
    std::fprintf(stderr, "pvfs-server: %s\n", config.status().to_string().c_str());
    return 1;
  }
  if (!id_option->count()) {
    auto found = pvfs::find_self_id("server", config->servers);
    if (!found) {
      std::fprintf(stderr, "pvfs-server: %s\n", found.status().detail().c_str());
      return 1;
    }
    id = *found;
  }
  const pvfs::DaemonEntry* self = config->find_server(id);
  if (!self) {
    std::fprintf(stderr, "pvfs-server: config %s has no [[server]] with id %u\n", config_path.c_str(), id);
    return 1;
  }
  if (self->data_dir.empty()) {
    std::fprintf(stderr, "pvfs-server: config key 'server[id=%u].data_dir' is missing\n", id);
    return 1;
  }
  pvfs::init_logging(fmt::format("pvfs-server[{}]", id), verbose);
  // Everything this daemon creates (namespace, state, objects) is its own:
  // files 0600, directories 0700.
  ::umask(077);
  auto key = pvfs::load_secret(config->secret_file);
  if (!key) {
    std::fprintf(stderr, "pvfs-server: %s\n", key.status().to_string().c_str());
    return 1;
  }
  auto store = pvfs::ObjectStore::open(self->data_dir);
  if (!store) {
    std::fprintf(stderr, "pvfs-server: %s\n", store.status().to_string().c_str());
    return 1;
  }

  if (calibrate) {
    auto table = pvfs::load_or_calibrate(self->data_dir, true);
    if (!table) {
      std::fprintf(stderr, "pvfs-server: calibration: %s\n", table.status().to_string().c_str());
      return 1;
    }
    std::printf("%s\n", table->to_text().c_str());
    return 0;
  }

  std::signal(SIGPIPE, SIG_IGN);
  asio::io_context io(1);
  asio::thread_pool disk_pool(disk_threads);
  auto service = pvfs::StorageService::open(id, *config, self->data_dir, **store, disk_pool,
                                            disk_threads, io.get_executor());
  if (!service) {
    std::fprintf(stderr, "pvfs-server: %s\n", service.status().to_string().c_str());
    return 1;
  }
  if (delay_factor > 1.0)
    (*service)->straggler().set(delay_factor, std::chrono::seconds(delay_for_s));
  auto server = pvfs::rpc::RpcServer::listen(
      io, self->address,
      pvfs::rpc::Auth(*key, {pvfs::rpc::Kind::server, id}, config->encrypt),
      [&service](auto conn, auto msg) { return (*service)->handle(std::move(conn), std::move(msg)); },
      std::chrono::milliseconds(config->connect_timeout_ms));
  if (!server) {
    std::fprintf(stderr, "pvfs-server: %s\n", server.status().to_string().c_str());
    return 1;
  }
  (*server)->start();
  pvfs::Endpoint advertised = self->address;
  advertised.port = (*server)->port();
  pvfs::Registration registration(io.get_executor(), *config, *key, id, advertised, **store,
                                  disk_pool);
  registration.start();
  pvfs::Maintainer maintainer(io.get_executor(), *config, *key, id, **service);
  maintainer.start();
  std::unique_ptr<pvfs::rpc::MetricsHttpServer> metrics_http;
  if (self->metrics) {
    auto http = pvfs::rpc::MetricsHttpServer::listen(io, *self->metrics,
                                                      [&service] { return (*service)->metrics(); });
    if (!http) {
      std::fprintf(stderr, "pvfs-server: %s\n", http.status().to_string().c_str());
      return 1;
    }
    metrics_http = std::move(*http);
    metrics_http->start();
    spdlog::info("serving Prometheus metrics on http://{}/metrics",
                 pvfs::Endpoint{self->metrics->host, metrics_http->port()}.to_string());
  }

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code&, int sig) {
    spdlog::info("signal {}: shutting down", sig);
    registration.stop();
    maintainer.stop();
    if (metrics_http) metrics_http->stop();
    (*server)->stop();
    io.stop();
  });
  if (!ready_file.empty()) {
    if (auto st = pvfs::write_ready_file(ready_file, advertised.port); !st.ok()) {
      std::fprintf(stderr, "pvfs-server: %s\n", st.to_string().c_str());
      return 1;
    }
  }
  spdlog::info("serving {} on {}", self->data_dir.string(), advertised.to_string());
  io.run();
  disk_pool.join();
  return 0;
}
