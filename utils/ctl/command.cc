#include "utils/ctl/command.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "shared/text_format.h"
#include "shared/usage_error.h"
#include "utils/ctl/ctl_format.h"

namespace pvfs::ctl {

namespace {

constexpr const char* kConfigHelp = "cluster config file (TOML) [$PVFS_CONFIG]";
constexpr const char* kTimeoutHelp = "ms to wait for each daemon [the config's timeouts.connect_ms]";

// Whether `arg` is a daemon option that takes its value as the next argument.
bool takes_value(std::string_view arg) { return arg == "-c" || arg == "--config" || arg == "-t" || arg == "--timeout"; }

}  // namespace

Commands::Commands(CLI::App& app) : app_(app) {
  // Not CLI11's envname: it would also apply the variable through the
  // options of the commands not run, which share daemon_.config_path.
  app_.add_option("-c,--config", daemon_.config_path, kConfigHelp);
  app_.add_option("-t,--timeout", timeout_ms_, kTimeoutHelp)->check(CLI::Range(1u, 3600000u));
}

CLI::App* Commands::add(const std::string& name, const std::string& description, Run run) {
  CLI::App* command = app_.add_subcommand(name, description);
  commands_.emplace_back(command, std::move(run));
  return command;
}

void Commands::add_daemon_options(CLI::App* command) {
  command->add_option("-c,--config", daemon_.config_path, kConfigHelp);
  command->add_option("-t,--timeout", timeout_ms_, kTimeoutHelp)->check(CLI::Range(1u, 3600000u));
}

int Commands::run(int argc, char** argv) {
  // The command: the first argument that is neither an option nor the
  // value of a daemon option before it. CLI11 would report a mistyped
  // command as "a subcommand is required".
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (takes_value(arg)) {
      ++i;
      continue;
    }
    if (arg.starts_with("-")) continue;
    if (!app_.get_subcommands([&](const CLI::App* c) { return c->check_name(argv[i]); }).empty()) break;
    std::vector<std::string_view> names;
    for (const CLI::App* c : app_.get_subcommands({})) names.push_back(c->get_name());
    const std::string close = closest_name(arg, names);
    return usage_error("pvfs-ctl", fmt::format("unknown command '{}'{}", argv[i],
                                               close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close)));
  }
  if (auto code = pvfs::parse_command_line<CLI::ParseError>(app_, argc, argv, "pvfs-ctl")) return *code;
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

CLI::Validator server_name_transform() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::string_view id = text;
        if (id.starts_with("server")) id.remove_prefix(6);
        const bool digits = !id.empty() && id.size() <= 9 &&
                            id.find_first_not_of("0123456789") == std::string_view::npos;
        if (!digits) return "not a storage server: '" + text + "' (give its id, 3, or its name, server3)";
        text = std::string(id);
        return {};
      },
      "ID");
}

}  // namespace pvfs::ctl
