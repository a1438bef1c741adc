// Test support: runs one of the project's command-line tools as a real
// process through the shell and captures its exit status, stdout and
// stderr. The tool's path comes from an environment variable meson sets
// for the test (PVFS_CTL, PVFS_BENCH). Header-only; test code only.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace pvfs::test {

struct Outcome {
  int status = -1;
  std::string out, err;
};

// For CAPTURE: shown only when a check fails.
inline std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "exit " << o.status << "\n--- stdout\n" << o.out << "--- stderr\n" << o.err;
}

// `text` quoted for the shell.
inline std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

inline std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The path in environment variable `var`; fails the test when unset.
inline std::string tool_path(const char* var) {
  const char* path = std::getenv(var);
  if (!path || !*path) FAIL(var, " is not set: run this test through `meson test`");
  return path;
}

// Runs the tool named by `var` with `args` (and `env`, "NAME=value ...", in
// front), its output captured in files under `scratch`.
inline Outcome run_tool(const char* var, const std::filesystem::path& scratch,
                        const std::vector<std::string>& args, const std::string& env = {}) {
  std::string command = env.empty() ? "" : "env " + env + " ";
  command += shell_quote(tool_path(var));
  for (const auto& a : args) command += " " + shell_quote(a);
  const auto out = scratch / "tool.out", err = scratch / "tool.err";
  command += " >" + shell_quote(out.string()) + " 2>" + shell_quote(err.string());
  Outcome o;
  const int raw = std::system(command.c_str());
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  o.out = slurp(out);
  o.err = slurp(err);
  return o;
}

// Counter or gauge `name` of daemon `daemon` ("mds0", "server1"; with label
// `label`, e.g. `type="remove"`, when given) from `pvfs-ctl stats
// --prometheus` of the cluster configured in `config`; 0 when absent.
inline double daemon_metric(const std::filesystem::path& scratch, const std::filesystem::path& config,
                            const std::string& daemon, const std::string& name,
                            const std::string& label = {}) {
  auto out = run_tool("PVFS_CTL", scratch, {"stats", "-c", config.string(), daemon, "--prometheus"});
  REQUIRE_MESSAGE(out.status == 0, out);
  std::istringstream in(out.out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name, 0) != 0 || line.size() <= name.size()) continue;
    if (line[name.size()] != ' ' && line[name.size()] != '{') continue;
    if (!label.empty() && line.find(label) == std::string::npos) continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return 0;
}

}  // namespace pvfs::test
