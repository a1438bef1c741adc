// Status codes on the wire: every code survives the round trip, the wire
// enum has one value per code, and values from a newer peer degrade to EIO.
#include "shared/rpc/wire_status.h"

#include <set>

#include <capnp/schema.h>
#include <doctest/doctest.h>

namespace pvfs::rpc {

TEST_CASE("every status code comes back from the wire as itself") {
  for (uint16_t v = 0; v <= static_cast<uint16_t>(Errc::kLast); ++v) {
    const Errc code = static_cast<Errc>(v);
    CAPTURE(errc_name(code));
    CHECK(from_wire(to_wire(code)) == code);
  }
}

TEST_CASE("distinct status codes travel as distinct wire values") {
  std::set<uint16_t> seen;
  for (uint16_t v = 0; v <= static_cast<uint16_t>(Errc::kLast); ++v)
    seen.insert(static_cast<uint16_t>(to_wire(static_cast<Errc>(v))));
  CHECK(seen.size() == static_cast<size_t>(Errc::kLast) + 1);
}

TEST_CASE("the wire enum declares exactly one value per status code") {
  auto enumerants = capnp::Schema::from<proto::Errc>().getEnumerants();
  CHECK(enumerants.size() == static_cast<size_t>(Errc::kLast) + 1);
  // Spot checks by name, so a reordering in the schema cannot pass unnoticed.
  CHECK(to_wire(Errc::not_found) == proto::Errc::NOT_FOUND);
  CHECK(to_wire(Errc::access_denied) == proto::Errc::ACCESS_DENIED);
  CHECK(to_wire(Errc::no_data) == proto::Errc::NO_XATTR);
  CHECK(to_wire(Errc::timeout) == proto::Errc::TIMEOUT);
  CHECK(to_wire(Errc::again) == proto::Errc::AGAIN);
}

TEST_CASE("a wire value this build does not know becomes an I/O error") {
  const uint16_t last = static_cast<uint16_t>(Errc::kLast);
  for (uint16_t v : {uint16_t(last + 1), uint16_t(last + 100), uint16_t(0xFFFF)})
    CHECK(from_wire(static_cast<proto::Errc>(v)) == Errc::io);
}

}  // namespace pvfs::rpc
