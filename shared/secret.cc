#include "shared/secret.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <sodium.h>

namespace pvfs {

namespace {
void ensure_sodium() {
  static const bool ok = sodium_init() >= 0;
  PVFS_CHECK(ok);
}
}  // namespace

Result<Secret> load_secret(const std::filesystem::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status(Errc::not_found, fmt::format("cannot read secret file {}: {}", file.string(),
                                               std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::from_errno(err, fmt::format("cannot stat secret file {}", file.string()));
  }
  // As ssh does with private keys: a key others can read is no longer secret,
  // and one others can write is no longer ours.
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    return Status(Errc::access_denied,
                  fmt::format("UNPROTECTED KEY FILE: {} has mode {:04o}, open to group or others; "
                              "refusing it (chmod 600 {})",
                              file.string(), st.st_mode & 07777, file.string()));
  }
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n < 0) return Status::from_errno(errno, fmt::format("cannot read secret file {}", file.string()));
  std::string text(buf, static_cast<size_t>(n));
  const size_t from = std::min(text.size(), text.find_first_not_of(" \t\r\n"));
  std::string hex = text.substr(from, text.find_first_of(" \t\r\n", from) - from);
  Secret key{};
  size_t len = 0;
  if (hex.size() != 64 ||
      sodium_hex2bin(key.data(), key.size(), hex.data(), hex.size(), nullptr, &len, nullptr) != 0 ||
      len != key.size())
    return Status(Errc::invalid_argument,
                  fmt::format("secret file {} must hold 64 hex digits", file.string()));
  return key;
}

Status generate_secret(const std::filesystem::path& file) {
  Secret key{};
  random_bytes(key);
  char hex[65];
  sodium_bin2hex(hex, sizeof hex, key.data(), key.size());
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return Status::from_errno(errno, fmt::format("cannot create secret file {}: {}", file.string(),
                                                 std::strerror(errno)));
  std::string line = std::string(hex) + "\n";
  ssize_t n = ::write(fd, line.data(), line.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size()))
    return Status::from_errno(err, fmt::format("cannot write secret file {}", file.string()));
  return {};
}

Mac keyed_hash(const Secret& key, std::span<const uint8_t> message) {
  ensure_sodium();
  Mac out{};
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, key.data(), key.size());
  crypto_auth_hmacsha256_update(&st, message.data(), message.size());
  crypto_auth_hmacsha256_final(&st, out.data());
  return out;
}

bool mac_equal(const Mac& a, const Mac& b) {
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

void random_bytes(std::span<uint8_t> out) {
  ensure_sodium();
  randombytes_buf(out.data(), out.size());
}

}  // namespace pvfs
