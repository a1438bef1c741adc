// The cluster key file: a fresh one is private and reads back; one open to
// group or others is refused, as ssh refuses such private keys, with an
// error naming the file and its mode. Real files in a temporary folder.
#include "shared/secret.h"

#include <sys/stat.h>

#include <fstream>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

namespace pvfs {

TEST_CASE("a generated key file is 0600 and loads") {
  test::TempDir dir;
  const auto file = dir.path() / "cluster.key";
  REQUIRE(generate_secret(file).ok());
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(load_secret(file).ok());
  CHECK_FALSE(generate_secret(file).ok());  // never overwritten
}

TEST_CASE("a key file open to group or others is refused with its name and mode") {
  test::TempDir dir;
  const auto file = dir.path() / "cluster.key";
  REQUIRE(generate_secret(file).ok());
  for (mode_t mode : {0644, 0640, 0604, 0620, 0602, 0660, 0400 | 040}) {
    CAPTURE(mode);
    REQUIRE(::chmod(file.c_str(), mode) == 0);
    auto key = load_secret(file);
    REQUIRE_FALSE(key.ok());
    CHECK(key.code() == Errc::access_denied);
    const std::string detail = key.status().detail();
    CHECK(detail.find(file.string()) != std::string::npos);
    char octal[8];
    std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(mode));
    CHECK(detail.find(octal) != std::string::npos);
  }
  for (mode_t mode : {0600, 0400}) {
    REQUIRE(::chmod(file.c_str(), mode) == 0);
    CHECK(load_secret(file).ok());
  }
}

TEST_CASE("a key file holding anything but 64 hex digits is refused") {
  test::TempDir dir;
  for (const char* text : {"", "abc\n", "zz00000000000000000000000000000000000000000000000000000000000000\n"}) {
    const auto file = dir.path() / "bad.key";
    std::filesystem::remove(file);
    std::ofstream(file) << text;
    std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    CHECK(load_secret(file).code() == Errc::invalid_argument);
  }
  const auto file = dir.path() / "spaced.key";
  std::ofstream(file) << "  " << std::string(64, 'a') << "\n";
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  CHECK(load_secret(file).ok());
}

TEST_CASE("a missing key file is an error naming it") {
  test::TempDir dir;
  auto key = load_secret(dir.path() / "none.key");
  CHECK(key.code() == Errc::not_found);
  CHECK(key.status().detail().find("none.key") != std::string::npos);
}

}  // namespace pvfs
