// Tests of shared/rpc/read_ahead.h: the bytes a connection read past the
// frame it was reading come out in order, whole, and the room for the
// next read is all that is not held.
#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "shared/rpc/read_ahead.h"

namespace pvfs::rpc {

namespace {

// Puts bytes 0, 1, 2... (mod 256) from `first` on into the room, as a read would.
size_t fill_read_ahead(ReadAhead& ahead, size_t bytes, uint8_t first) {
  auto room = ahead.room();
  const size_t n = std::min(bytes, room.size());
  for (size_t i = 0; i < n; ++i) room[i] = std::byte(static_cast<uint8_t>(first + i));
  ahead.filled(n);
  return n;
}

}  // namespace

TEST_CASE("read-ahead bytes come out in the order they were read, across takes of any size") {
  ReadAhead ahead;
  CHECK(ahead.size() == 0);
  CHECK(ahead.room().size() == ReadAhead::kBytes);
  REQUIRE(fill_read_ahead(ahead, 100, 0) == 100);
  std::vector<std::byte> header(16), rest(200);
  CHECK(ahead.take(header) == 16);
  CHECK(header[0] == std::byte{0});
  CHECK(header[15] == std::byte{15});
  CHECK(ahead.size() == 84);
  CHECK(ahead.take(rest) == 84);  // only what is held
  CHECK(rest[0] == std::byte{16});
  CHECK(rest[83] == std::byte{99});
  CHECK(ahead.size() == 0);
  CHECK(ahead.take(rest) == 0);
}

TEST_CASE("the room for the next read is everything not held, with the held bytes kept first") {
  ReadAhead ahead;
  REQUIRE(fill_read_ahead(ahead, ReadAhead::kBytes, 0) == ReadAhead::kBytes);
  CHECK(ahead.room().empty());  // full: a read takes nothing more
  std::vector<std::byte> part(ReadAhead::kBytes - 10);
  REQUIRE(ahead.take(part) == part.size());
  // 10 held (bytes kBytes-10 .. kBytes-1 mod 256); the room is the rest.
  CHECK(ahead.room().size() == ReadAhead::kBytes - 10);
  REQUIRE(fill_read_ahead(ahead, 5, 42) == 5);
  std::vector<std::byte> out(15);
  CHECK(ahead.take(out) == 15);
  const auto first_kept = static_cast<uint8_t>(ReadAhead::kBytes - 10);
  CHECK(out[0] == std::byte{first_kept});
  CHECK(out[9] == std::byte{static_cast<uint8_t>(first_kept + 9)});
  CHECK(out[10] == std::byte{42});
  CHECK(out[14] == std::byte{46});
}

}  // namespace pvfs::rpc
