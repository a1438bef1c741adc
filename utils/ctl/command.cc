#include "utils/ctl/command.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "utils/ctl/ctl_format.h"

namespace pvfs::ctl {

CLI::App* Commands::add(const std::string& name, const std::string& description, Run run) {
  CLI::App* command = app_.add_subcommand(name, description);
  commands_.emplace_back(command, std::move(run));
  return command;
}

void Commands::add_daemon_options(CLI::App* command) {
  // Not CLI11's envname: it would also apply the variable through the
  // options of the commands not run, which share daemon_.config_path.
  command->add_option("-c,--config", daemon_.config_path, "cluster config file (TOML) [$PVFS_CONFIG]");
  command->add_option("-t,--timeout", timeout_ms_, "ms to wait for each daemon [the config's timeouts.connect_ms]")
      ->check(CLI::Range(1u, 3600000u));
}

int Commands::run(int argc, char** argv) {
  // CLI11 would report a mistyped command as "a subcommand is required".
  if (argc > 1 && argv[1][0] != '-' &&
      app_.get_subcommands([&](const CLI::App* c) { return c->check_name(argv[1]); }).empty()) {
    std::fprintf(stderr, "pvfs-ctl: unknown command '%s' (see pvfs-ctl --help)\n", argv[1]);
    return 2;
  }
  try {
    app_.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app_.exit(e);  // --help, --version
    std::fprintf(stderr, "pvfs-ctl: %s (see pvfs-ctl --help)\n", e.what());
    return 2;
  }
  daemon_.timeout = std::chrono::milliseconds(timeout_ms_);
  if (const char* env = std::getenv("PVFS_CONFIG"); daemon_.config_path.empty() && env)
    daemon_.config_path = env;
  for (auto& [command, run] : commands_)
    if (*command) return run(daemon_);
  return 2;
}

CLI::Validator size_transform() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto bytes = parse_size(text);
        if (!bytes) return bytes.status().detail();
        text = std::to_string(*bytes);
        return {};
      },
      "SIZE");
}

CLI::Validator server_list_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto ids = parse_server_list(text);
        return ids ? std::string() : ids.status().detail();
      },
      "IDS");
}

}  // namespace pvfs::ctl
