#include "tests/support/file_content.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pvfs::test {

std::optional<std::string> read_file(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string read_text(const std::filesystem::path& file) { return read_file(file).value_or(""); }

uint64_t pattern_word(uint64_t seed, uint64_t word) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + word + 0x632be59bd9b4e019ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void fill_pattern(std::span<std::byte> out, uint64_t seed, uint64_t offset) {
  size_t i = 0;
  while (i < out.size() && (offset + i) % 8 != 0) {
    out[i] = std::byte(pattern_word(seed, (offset + i) / 8) >> (8 * ((offset + i) % 8)));
    ++i;
  }
  for (; i + 8 <= out.size(); i += 8) {
    const uint64_t w = pattern_word(seed, (offset + i) / 8);
    std::memcpy(out.data() + i, &w, 8);  // little-endian host
  }
  for (; i < out.size(); ++i) out[i] = std::byte(pattern_word(seed, (offset + i) / 8) >> (8 * ((offset + i) % 8)));
}

std::optional<uint64_t> pattern_mismatch(std::span<const std::byte> got, uint64_t seed, uint64_t offset) {
  std::byte expected[4096];
  for (size_t done = 0; done < got.size();) {
    const size_t n = std::min(sizeof expected, got.size() - done);
    fill_pattern({expected, n}, seed, offset + done);
    if (std::memcmp(expected, got.data() + done, n) != 0)
      for (size_t i = 0; i < n; ++i)
        if (expected[i] != got[done + i]) return offset + done + i;
    done += n;
  }
  return std::nullopt;
}

std::optional<uint64_t> nonzero_at(std::span<const std::byte> got, uint64_t offset) {
  const auto it = std::find_if(got.begin(), got.end(), [](std::byte b) { return b != std::byte{0}; });
  if (it == got.end()) return std::nullopt;
  return offset + static_cast<uint64_t>(it - got.begin());
}

}  // namespace pvfs::test
