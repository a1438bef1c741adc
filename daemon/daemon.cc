#include "daemon/daemon.h"

#include <sys/stat.h>

#include <csignal>
#include <cstdio>

#include <spdlog/spdlog.h>

#include "shared/log.h"
#include "shared/ready_file.h"
#include "shared/self_id.h"

namespace pvfs::daemon {

std::optional<Identity> boot(const char* program, Role role, const std::string& config_path,
                             std::optional<uint32_t> id, bool verbose) {
  const char* table = role == Role::server ? "server" : "mds";
  auto config = Config::load(config_path);
  if (!config) {
    std::fprintf(stderr, "%s: %s\n", program, config.status().detail().c_str());
    return std::nullopt;
  }
  if (!id) {
    auto found = find_self_id(table, role == Role::server ? config->servers : config->mds);
    if (!found) {
      std::fprintf(stderr, "%s: %s\n", program, found.status().detail().c_str());
      return std::nullopt;
    }
    id = *found;
  }
  const DaemonEntry* self = role == Role::server ? config->find_server(*id) : config->find_mds(*id);
  if (!self) {
    std::fprintf(stderr, "%s: config %s has no [[%s]] with id %u\n", program, config_path.c_str(), table, *id);
    return std::nullopt;
  }
  if (self->data_dir.empty()) {
    std::fprintf(stderr, "%s: config key '%s[id=%u].data_dir' is missing\n", program, table, *id);
    return std::nullopt;
  }
  init_logging(fmt::format("{}[{}]", program, *id), verbose);
  ::umask(077);
  auto key = load_secret(config->secret_file);
  if (!key) {
    std::fprintf(stderr, "%s: %s\n", program, key.status().to_string().c_str());
    return std::nullopt;
  }
  DaemonEntry entry = *self;
  return Identity{std::move(*config), *id, std::move(entry), *key};
}

Loop::Loop(const char* program, asio::io_context& io) : program_(program), io_(io) {
  std::signal(SIGPIPE, SIG_IGN);
}

bool Loop::serve_metrics(const std::optional<Endpoint>& at, rpc::MetricsHttpServer::Source source) {
  if (!at) return true;
  auto http = rpc::MetricsHttpServer::listen(io_, *at, std::move(source));
  if (!http) {
    std::fprintf(stderr, "%s: %s\n", program_, http.status().to_string().c_str());
    return false;
  }
  metrics_http_ = std::move(*http);
  metrics_http_->start();
  spdlog::info("serving Prometheus metrics on http://{}/metrics", Endpoint{at->host, metrics_http_->port()}.to_string());
  return true;
}

void Loop::on_shutdown(std::function<void()> stop) { stops_.push_back(std::move(stop)); }

int Loop::run(const std::string& ready_file, uint16_t port, const std::string& serving) {
  asio::signal_set signals(io_, SIGINT, SIGTERM);
  signals.async_wait([this](const asio::error_code&, int sig) {
    spdlog::info("signal {}: shutting down", sig);
    for (auto& stop : stops_) stop();
    if (metrics_http_) metrics_http_->stop();
    io_.stop();
  });
  if (!ready_file.empty()) {
    if (auto st = write_ready_file(ready_file, port); !st.ok()) {
      std::fprintf(stderr, "%s: %s\n", program_, st.to_string().c_str());
      return 1;
    }
  }
  spdlog::info("{}", serving);
  io_.run();
  return 0;
}

}  // namespace pvfs::daemon
