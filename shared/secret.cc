#include "shared/secret.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
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
  std::ifstream in(file);
  if (!in) return Status(Errc::not_found, fmt::format("cannot read secret file {}", file.string()));
  std::string hex;
  in >> hex;
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
