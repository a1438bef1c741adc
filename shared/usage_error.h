// What every pvfs program does with a command line it cannot parse: one line
// on stderr that names the program and points at its --help, and exit code 2
// (as the tests/cli suite checks). Holds no parser: CLI11 stays in the
// programs' main files, which name its error type to parse_command_line().
#pragma once

#include <optional>
#include <string_view>

namespace pvfs {

// Prints "PROGRAM: MESSAGE (see PROGRAM --help)" on stderr and returns 2,
// the exit code of every usage error.
int usage_error(std::string_view program, std::string_view message);

// Parses argv with `app` (a CLI::App), catching `ParseError` (CLI::ParseError).
// Returns nullopt when the program should go on, or the code main() returns:
// 0 once the app has printed --help or --version, 2 after usage_error().
template <class ParseError, class App>
std::optional<int> parse_command_line(App& app, int argc, char** argv, std::string_view program) {
  try {
    app.parse(argc, argv);
  } catch (const ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return usage_error(program, e.what());
  }
  return std::nullopt;
}

}  // namespace pvfs
