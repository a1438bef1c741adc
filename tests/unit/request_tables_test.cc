// The daemons' tables from request kind to handler (mds/handlers/table.cc,
// StorageService::routes()): every kind the schema has is served by exactly
// one handler. A kind missing from a table would be answered not_supported
// at run time; the compiler cannot see it, this test does.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include <capnp/schema.h>

#include "mds/handlers/table.h"
#include "server/storage_service.h"
#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"

namespace pvfs {
namespace {

// How often each union member of `Request` appears in `table`, by name.
template <class Request, class Entry>
std::map<std::string, int> served(std::span<const Entry> table) {
  std::map<std::string, int> count;
  for (auto field : capnp::Schema::from<Request>().getUnionFields())
    count[field.getProto().getName()] = 0;
  for (const Entry& e : table) {
    bool known = false;
    for (auto field : capnp::Schema::from<Request>().getUnionFields())
      if (field.getProto().getDiscriminantValue() == static_cast<uint16_t>(e.kind)) {
        ++count[field.getProto().getName()];
        known = true;
      }
    CHECK_MESSAGE(known, "a table entry for a kind the schema lacks: ", static_cast<int>(e.kind));
  }
  return count;
}

TEST_CASE("every metadata request kind has exactly one handler") {
  for (const auto& [name, n] : served<proto::mds::Request>(mds::handlers::table())) {
    CAPTURE(name);
    // Sent by an MDS to a client (fs/dir_lease_cache.h), which serves it.
    if (name == "recallDirLease") CHECK(n == 0);
    else CHECK(n == 1);
  }
  for (const auto& e : mds::handlers::table()) CHECK(static_cast<bool>(e.handler));
}

TEST_CASE("every storage request kind has exactly one handler") {
  for (const auto& [name, n] : served<proto::storage::Request>(StorageService::routes())) {
    CAPTURE(name);
    CHECK(n == 1);
  }
  for (const auto& e : StorageService::routes()) CHECK(static_cast<bool>(e.handler));
}

}  // namespace
}  // namespace pvfs
