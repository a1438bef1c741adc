// The floors of the source tree, checked on every build: which folder may
// include which. A lower floor never includes a higher one:
//
//   shared/                      the vocabulary, RPC, LMDB: includes only shared/
//   policy/                      dispatch, load, redirect, elevator, placement,
//                                membership, qos, iosched, locks: pure code that takes time and
//                                randomness as arguments, so policy/ and the
//                                vocabulary of shared/ (ids, status) only: never
//                                config, RPC or a daemon, and no I/O library
//                                (asio, LMDB, Cap'n Proto, threads, logging)
//   config/                      the cluster's TOML file: holds the policies'
//                                own options, so shared/, policy/ and itself
//   daemon/                      the boot sequence and event loop pvfs-server
//                                and pvfs-mds share: shared/, policy/, config/
//                                and itself
//   fs/, mds/, server/           one daemon each: shared/, policy/, config/,
//                                daemon/ and their own folder
//   utils/                       tools: anything but tests/ (the simulator,
//                                utils/sim, only shared/ and policy/)
//
// A failure names the file, the line and the rule it breaks.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;

namespace {

struct Include {
  std::string file;  // relative to the source root
  int line = 0;
  std::string target;  // what is between the quotes or the angle brackets
  bool quoted = false;
};

// Every #include of the .h and .cc files under root/folder.
std::vector<Include> includes_under(const fs::path& root, const std::string& folder) {
  std::vector<Include> out;
  if (!fs::exists(root / folder)) return out;
  for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
    const auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
    std::ifstream in(entry.path());
    std::string text;
    int number = 0;
    while (std::getline(in, text)) {
      ++number;
      auto hash = text.find_first_not_of(" \t");
      if (hash == std::string::npos || text.compare(hash, 8, "#include") != 0) continue;
      auto open = text.find_first_of("\"<", hash + 8);
      if (open == std::string::npos) continue;
      auto close = text.find(text[open] == '"' ? '"' : '>', open + 1);
      if (close == std::string::npos) continue;
      out.push_back({fs::relative(entry.path(), root).generic_string(), number,
                     text.substr(open + 1, close - open - 1), text[open] == '"'});
    }
  }
  return out;
}

bool starts_with_any(const std::string& s, const std::vector<std::string>& prefixes) {
  for (const auto& p : prefixes)
    if (s.rfind(p, 0) == 0) return true;
  return false;
}

// The project includes (quoted, with a folder) of files under `folder` that
// name none of `allowed`.
std::vector<std::string> upward(const fs::path& root, const std::string& folder,
                                const std::vector<std::string>& allowed) {
  std::vector<std::string> bad;
  for (const auto& inc : includes_under(root, folder)) {
    if (!inc.quoted || inc.target.find('/') == std::string::npos) continue;
    if (starts_with_any(inc.target, allowed)) continue;
    bad.push_back(inc.file + ":" + std::to_string(inc.line) + " includes " + inc.target);
  }
  return bad;
}

// Includes of I/O libraries in pure policy code.
std::vector<std::string> io_in(const fs::path& root, const std::string& folder) {
  static const std::vector<std::string> io = {"asio", "lmdb", "capnp", "kj/", "thread", "fstream",
                                              "sys/", "unistd.h", "fcntl.h", "spdlog"};
  std::vector<std::string> bad;
  for (const auto& inc : includes_under(root, folder)) {
    if (inc.quoted || !starts_with_any(inc.target, io)) continue;
    bad.push_back(inc.file + ":" + std::to_string(inc.line) + " includes <" + inc.target + ">");
  }
  return bad;
}

fs::path source_root() {
  const char* root = std::getenv("PVFS_SOURCE_ROOT");
  REQUIRE_MESSAGE(root, "PVFS_SOURCE_ROOT is not set: run this test through meson test");
  return root;
}

// What a policy may see of shared/: the plain types every floor speaks.
const std::vector<std::string> kVocabulary = {"shared/ids.h", "shared/status.h"};

std::vector<std::string> with_vocabulary(std::vector<std::string> allowed) {
  allowed.insert(allowed.end(), kVocabulary.begin(), kVocabulary.end());
  return allowed;
}

// One offence per line, for the failure message.
std::string lines(const std::vector<std::string>& offences) {
  std::string out;
  for (const auto& o : offences) out += "\n  " + o;
  return out;
}

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

}  // namespace

TEST_CASE("the checker finds an upward include and an I/O library in a policy") {
  pvfs::test::TempDir dir("layering");
  const fs::path root = dir.path();
  write(root / "shared/a.h", "#include \"shared/b.h\"\n#include <vector>\n");
  write(root / "shared/b.h", "  #include \"fs/client.h\"  // a client in the vocabulary\n");
  write(root / "policy/load/p.cc",
        "#include \"policy/load/p.h\"\n#include <asio.hpp>\n#include \"config/config.h\"\n");
  CHECK(upward(root, "shared", {"shared/"}) == std::vector<std::string>{"shared/b.h:1 includes fs/client.h"});
  CHECK(io_in(root, "policy") == std::vector<std::string>{"policy/load/p.cc:2 includes <asio.hpp>"});
  CHECK(io_in(root, "shared").empty());
  CHECK(upward(root, "policy", with_vocabulary({"policy/"})) ==
        std::vector<std::string>{"policy/load/p.cc:3 includes config/config.h"});
}

TEST_CASE("shared/ includes nothing above it") {
  const auto bad = upward(source_root(), "shared", {"shared/"});
  CHECK_MESSAGE(bad.empty(), lines(bad));
}

TEST_CASE("policies include only policy/ and the vocabulary of shared/, and no I/O library") {
  const fs::path root = source_root();
  const auto bad = upward(root, "policy", with_vocabulary({"policy/"}));
  CHECK_MESSAGE(bad.empty(), lines(bad));
  const auto io = io_in(root, "policy");
  CHECK_MESSAGE(io.empty(), lines(io));
}

TEST_CASE("config/ includes shared/, policy/ and itself only") {
  const auto bad = upward(source_root(), "config", {"shared/", "policy/", "config/"});
  CHECK_MESSAGE(bad.empty(), lines(bad));
}

TEST_CASE("daemon/ includes shared/, policy/, config/ and itself only") {
  const auto bad = upward(source_root(), "daemon", {"shared/", "policy/", "config/", "daemon/"});
  CHECK_MESSAGE(bad.empty(), lines(bad));
}

TEST_CASE("the simulator sees the policies, not the daemons") {
  const auto bad = upward(source_root(), "utils/sim", {"shared/", "policy/", "utils/sim/"});
  CHECK_MESSAGE(bad.empty(), lines(bad));
}

TEST_CASE("each daemon includes shared/, policy/, config/, daemon/ and its own folder only") {
  const fs::path root = source_root();
  for (const auto& [folder, allowed] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"fs", {"shared/", "policy/", "config/", "daemon/", "fs/"}},
           {"mds", {"shared/", "policy/", "config/", "daemon/", "mds/"}},
           {"server", {"shared/", "policy/", "config/", "daemon/", "server/"}},
       }) {
    const auto bad = upward(root, folder, allowed);
    CHECK_MESSAGE(bad.empty(), lines(bad));
  }
}

TEST_CASE("no program includes the tests") {
  const fs::path root = source_root();
  for (const std::string folder : {"shared", "policy", "config", "daemon", "fs", "mds", "server", "utils"}) {
    std::vector<std::string> bad;
    for (const auto& inc : includes_under(root, folder))
      if (inc.quoted && inc.target.rfind("tests/", 0) == 0) bad.push_back(inc.file + " includes " + inc.target);
    CHECK_MESSAGE(bad.empty(), lines(bad));
  }
}
