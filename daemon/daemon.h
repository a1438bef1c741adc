// What pvfs-server and pvfs-mds do alike from start to exit: find who they
// are in the config, start logging, read the key (boot), then serve metrics,
// write the ready file, and stop cleanly on SIGINT or SIGTERM (Loop). Their
// main.cc files keep only their own options and objects. Errors are printed
// as one line "<program>: ..." on stderr; the caller then exits with 1.
// Not thread-safe: for main's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <asio.hpp>

#include "config/config.h"
#include "shared/rpc/metrics_http.h"
#include "shared/secret.h"

namespace pvfs::daemon {

enum class Role { server, mds };

// Who this daemon is, as the config says.
struct Identity {
  Config config;
  uint32_t id = 0;
  DaemonEntry self;
  Secret key;
};

// Loads the config at `config_path`; takes the entry `id` of the role's
// table ([[server]] or [[mds]]) or, with no id, the one entry whose host is
// this machine; requires its data_dir; starts logging as "<program>[id]"
// (debug messages with `verbose`); sets the umask to 077, so everything the
// daemon creates is its own (files 0600, folders 0700); reads the secret
// key. nullopt after printing why not.
std::optional<Identity> boot(const char* program, Role role, const std::string& config_path,
                             std::optional<uint32_t> id, bool verbose);

// The rest of a daemon's life on its io_context: SIGPIPE ignored (a peer
// gone is an error value, not a signal), Prometheus metrics served when the
// config says where, and on SIGINT or SIGTERM the stop functions called in
// the order given, then the loop stopped.
class Loop {
 public:
  Loop(const char* program, asio::io_context& io);

  // Serves /metrics at `at` (nothing when unset) from `source`. False after
  // printing why not.
  bool serve_metrics(const std::optional<Endpoint>& at, rpc::MetricsHttpServer::Source source);
  // Called on SIGINT or SIGTERM, after those added before it.
  void on_shutdown(std::function<void()> stop);
  // Writes `port` to `ready_file` (unless empty), logs `serving` and runs
  // the io_context until a signal stops it. 0, or 1 after printing why the
  // ready file could not be written.
  int run(const std::string& ready_file, uint16_t port, const std::string& serving);

 private:
  const char* program_;
  asio::io_context& io_;
  std::unique_ptr<rpc::MetricsHttpServer> metrics_http_;
  std::vector<std::function<void()>> stops_;
};

}  // namespace pvfs::daemon
