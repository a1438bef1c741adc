// Unit tests of shared/layout: split_range piece by piece and as a property
// over random layouts, object_size_for_file_size against a brute-force sum
// of split_range and file_size_for_object_size as its inverse, and choose_layout's clamping, filtering and rotation.
// Pure; a seeded generator, no I/O.
#include "shared/layout.h"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

namespace pvfs {
namespace {

Layout make_layout(uint64_t stripe_size, uint32_t count) {
  Layout layout;
  layout.stripe_size = stripe_size;
  for (uint32_t i = 0; i < count; ++i) layout.servers.push_back(ServerId(100 + i));
  return layout;
}

std::vector<ServerId> layout_ids(std::initializer_list<uint32_t> values) {
  std::vector<ServerId> out;
  for (uint32_t v : values) out.push_back(ServerId(v));
  return out;
}

bool same_piece(const Piece& a, const Piece& b) {
  return a.object_index == b.object_index && a.object_offset == b.object_offset &&
         a.file_offset == b.file_offset && a.length == b.length &&
         a.buffer_offset == b.buffer_offset;
}

// Where one file byte lives, straight from the definition in layout.h.
std::pair<uint32_t, uint64_t> locate(const Layout& layout, uint64_t file_offset) {
  const uint64_t stripe_no = file_offset / layout.stripe_size;
  const uint64_t count = layout.stripe_count();
  return {static_cast<uint32_t>(stripe_no % count),
          (stripe_no / count) * layout.stripe_size + file_offset % layout.stripe_size};
}

}  // namespace

TEST_CASE("a range inside one stripe is one piece in that stripe's object") {
  const Layout layout = make_layout(4096, 4);
  auto pieces = split_range(layout, 100, 200);
  REQUIRE(pieces.size() == 1);
  CHECK(same_piece(pieces[0], Piece{0, 100, 100, 200, 0}));

  // Stripe 5 is object 1, in that object's second stripe.
  pieces = split_range(layout, 5 * 4096 + 10, 50);
  REQUIRE(pieces.size() == 1);
  CHECK(same_piece(pieces[0], Piece{1, 4096 + 10, 5 * 4096 + 10, 50, 0}));

  // Exactly one whole stripe.
  pieces = split_range(layout, 3 * 4096, 4096);
  REQUIRE(pieces.size() == 1);
  CHECK(same_piece(pieces[0], Piece{3, 0, 3 * 4096, 4096, 0}));
}

TEST_CASE("an empty range has no pieces") {
  CHECK(split_range(make_layout(4096, 3), 12345, 0).empty());
}

TEST_CASE("a range with unaligned ends spanning stripes is cut at stripe boundaries") {
  const Layout layout = make_layout(4096, 3);
  auto pieces = split_range(layout, 4000, 5000);
  REQUIRE(pieces.size() == 3);
  CHECK(same_piece(pieces[0], Piece{0, 4000, 4000, 96, 0}));
  CHECK(same_piece(pieces[1], Piece{1, 0, 4096, 4096, 96}));
  CHECK(same_piece(pieces[2], Piece{2, 0, 8192, 808, 4192}));
}

TEST_CASE("a range wrapping past the last object continues in the first object's next stripe") {
  const Layout layout = make_layout(1000, 3);
  // Stripes 2, 3, 4: objects 2, 0, 1; stripes 3 and 4 are in each object's second stripe.
  auto pieces = split_range(layout, 2500, 2000);
  REQUIRE(pieces.size() == 3);
  CHECK(same_piece(pieces[0], Piece{2, 500, 2500, 500, 0}));
  CHECK(same_piece(pieces[1], Piece{0, 1000, 3000, 1000, 500}));
  CHECK(same_piece(pieces[2], Piece{1, 1000, 4000, 500, 1500}));
}

TEST_CASE("with stripe count 1 consecutive stripes merge into one piece") {
  const Layout layout = make_layout(4096, 1);
  auto pieces = split_range(layout, 10, 3 * 4096);
  REQUIRE(pieces.size() == 1);
  CHECK(same_piece(pieces[0], Piece{0, 10, 10, 3 * 4096, 0}));

  // With two objects nothing merges: each stripe is its own piece.
  pieces = split_range(make_layout(4096, 2), 10, 3 * 4096);
  CHECK(pieces.size() == 4);
}

TEST_CASE("pieces of random ranges tile the request and map every byte to its object") {
  std::mt19937_64 rng(12345);
  for (int iter = 0; iter < 3000; ++iter) {
    const uint64_t stripe = std::uniform_int_distribution<uint64_t>(1, 5000)(rng);
    const uint32_t count = std::uniform_int_distribution<uint32_t>(1, 9)(rng);
    const Layout layout = make_layout(stripe, count);
    const uint64_t offset = std::uniform_int_distribution<uint64_t>(0, 50 * stripe)(rng);
    const uint64_t length = std::uniform_int_distribution<uint64_t>(0, 12 * stripe)(rng);
    CAPTURE(stripe);
    CAPTURE(count);
    CAPTURE(offset);
    CAPTURE(length);

    auto pieces = split_range(layout, offset, length);
    uint64_t expect_file = offset;
    uint64_t total = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      const Piece& p = pieces[i];
      REQUIRE(p.length > 0);
      REQUIRE(p.file_offset == expect_file);
      REQUIRE(p.buffer_offset == p.file_offset - offset);
      REQUIRE(p.object_index < count);
      // First and last byte of the piece are where the definition puts them,
      // and a piece never leaves one object's contiguous run.
      REQUIRE(locate(layout, p.file_offset) == std::pair{p.object_index, p.object_offset});
      REQUIRE(locate(layout, p.file_offset + p.length - 1) ==
              std::pair{p.object_index, p.object_offset + p.length - 1});
      if (count > 1) REQUIRE(p.file_offset / stripe == (p.file_offset + p.length - 1) / stripe);
      if (i > 0) {
        // Merging is complete: no two neighbours could have been one piece.
        const Piece& prev = pieces[i - 1];
        REQUIRE_FALSE((prev.object_index == p.object_index &&
                       prev.object_offset + prev.length == p.object_offset));
      }
      expect_file += p.length;
      total += p.length;
    }
    REQUIRE(total == length);
    if (count == 1) REQUIRE(pieces.size() == (length ? 1u : 0u));
  }
}

TEST_CASE("object sizes match a brute-force sum of split_range over the whole file") {
  std::mt19937_64 rng(777);
  for (int iter = 0; iter < 2000; ++iter) {
    const uint64_t stripe = iter % 4 == 0 ? 4096 : std::uniform_int_distribution<uint64_t>(1, 3000)(rng);
    const uint32_t count = std::uniform_int_distribution<uint32_t>(1, 12)(rng);
    const Layout layout = make_layout(stripe, count);
    uint64_t file_size = std::uniform_int_distribution<uint64_t>(0, 30 * stripe)(rng);
    // Boundaries are where off-by-ones hide.
    if (iter % 3 == 0) file_size -= file_size % stripe;
    CAPTURE(stripe);
    CAPTURE(count);
    CAPTURE(file_size);

    std::map<uint32_t, uint64_t> bytes;
    std::map<uint32_t, uint64_t> extent;
    for (const Piece& p : split_range(layout, 0, file_size)) {
      bytes[p.object_index] += p.length;
      extent[p.object_index] = std::max(extent[p.object_index], p.object_offset + p.length);
    }
    for (uint32_t index = 0; index < count; ++index) {
      const uint64_t size = object_size_for_file_size(layout, index, file_size);
      CHECK(size == bytes[index]);
      CHECK(size == extent[index]);
    }
  }
}

TEST_CASE("object sizes at hand-checked points") {
  const Layout layout = make_layout(100, 3);
  // 250 bytes: stripes 0 and 1 full, stripe 2 holds 50.
  CHECK(object_size_for_file_size(layout, 0, 250) == 100);
  CHECK(object_size_for_file_size(layout, 1, 250) == 100);
  CHECK(object_size_for_file_size(layout, 2, 250) == 50);
  // 301 bytes: object 0 has stripe 0 and 1 byte of stripe 3.
  CHECK(object_size_for_file_size(layout, 0, 301) == 101);
  CHECK(object_size_for_file_size(layout, 1, 301) == 100);
  CHECK(object_size_for_file_size(layout, 2, 301) == 100);
  CHECK(object_size_for_file_size(layout, 2, 0) == 0);
}

TEST_CASE("the file size an object's bytes imply is the end of its last byte in the file") {
  const Layout layout = make_layout(100, 3);
  CHECK(file_size_for_object_size(layout, 0, 0) == 0);
  CHECK(file_size_for_object_size(layout, 0, 1) == 1);
  CHECK(file_size_for_object_size(layout, 0, 100) == 100);
  CHECK(file_size_for_object_size(layout, 0, 101) == 301);  // first byte of stripe 3
  CHECK(file_size_for_object_size(layout, 2, 50) == 250);
  // The largest file size any object implies is the file size, for every
  // size: the inverse of object_size_for_file_size where it matters.
  for (uint64_t size = 0; size <= 1000; ++size) {
    uint64_t end = 0;
    for (uint32_t j = 0; j < 3; ++j)
      end = std::max(end, file_size_for_object_size(layout, j, object_size_for_file_size(layout, j, size)));
    CHECK(end == size);
  }
}

TEST_CASE("choose_layout clamps the stripe count to the live servers") {
  const auto live = layout_ids({1, 2, 3, 4});
  Layout layout = choose_layout(LayoutPolicy{0, 10, {}}, LayoutPolicy{}, live, 0);
  CHECK(layout.servers == live);

  // Unset count falls to the default, and an unset default means all live servers.
  layout = choose_layout(LayoutPolicy{}, LayoutPolicy{0, 2, {}}, live, 0);
  CHECK(layout.servers == layout_ids({1, 2}));
  layout = choose_layout(LayoutPolicy{}, LayoutPolicy{}, live, 0);
  CHECK(layout.servers.size() == 4);
  layout = choose_layout(LayoutPolicy{0, 3, {}}, LayoutPolicy{0, 1, {}}, live, 0);
  CHECK(layout.servers == layout_ids({1, 2, 3}));
}

TEST_CASE("choose_layout takes the stripe size from the policy, then the defaults") {
  const auto live = layout_ids({1, 2});
  CHECK(choose_layout(LayoutPolicy{8192, 0, {}}, LayoutPolicy{65536, 0, {}}, live, 0).stripe_size ==
        8192);
  CHECK(choose_layout(LayoutPolicy{}, LayoutPolicy{65536, 0, {}}, live, 0).stripe_size == 65536);
  CHECK(choose_layout(LayoutPolicy{}, LayoutPolicy{}, live, 0).stripe_size == kDefaultStripeSize);
}

TEST_CASE("an explicit server list is used in its order, filtered to live servers") {
  const auto live = layout_ids({1, 2, 3, 5});
  LayoutPolicy policy{0, 0, layout_ids({5, 9, 2})};
  // The random start does not rotate an explicit list.
  for (uint64_t start : {0u, 1u, 7u}) {
    Layout layout = choose_layout(policy, LayoutPolicy{}, live, start);
    CHECK(layout.servers == layout_ids({5, 2}));
    CHECK(layout.valid());
  }
  policy.stripe_count = 1;
  CHECK(choose_layout(policy, LayoutPolicy{}, live, 3).servers == layout_ids({5}));

  // A list of servers none of which is live gives no layout.
  Layout none = choose_layout(LayoutPolicy{0, 0, layout_ids({7, 8})}, LayoutPolicy{}, live, 0);
  CHECK(none.servers.empty());
  CHECK_FALSE(none.valid());
}

TEST_CASE("the random start rotates the first server over all live servers") {
  const auto live = layout_ids({1, 2, 3, 4});
  CHECK(choose_layout(LayoutPolicy{0, 2, {}}, LayoutPolicy{}, live, 0).servers == layout_ids({1, 2}));
  CHECK(choose_layout(LayoutPolicy{0, 2, {}}, LayoutPolicy{}, live, 3).servers == layout_ids({4, 1}));
  CHECK(choose_layout(LayoutPolicy{0, 2, {}}, LayoutPolicy{}, live, 6).servers == layout_ids({3, 4}));
  CHECK(choose_layout(LayoutPolicy{}, LayoutPolicy{}, live, 2).servers == layout_ids({3, 4, 1, 2}));

  std::set<uint32_t> firsts;
  for (uint64_t start = 0; start < 4; ++start)
    firsts.insert(choose_layout(LayoutPolicy{0, 1, {}}, LayoutPolicy{}, live, start).servers[0].value);
  CHECK(firsts.size() == 4);
  // Huge draws are fine too.
  CHECK(choose_layout(LayoutPolicy{0, 1, {}}, LayoutPolicy{}, live, UINT64_MAX).servers ==
        layout_ids({4}));
}

TEST_CASE("no live servers gives an empty layout") {
  Layout layout = choose_layout(LayoutPolicy{0, 3, {}}, LayoutPolicy{}, {}, 5);
  CHECK(layout.servers.empty());
  CHECK_FALSE(layout.valid());
}

TEST_CASE("check_policy refuses servers the cluster does not have, repeats and too large stripe counts") {
  const auto cluster = layout_ids({0, 1, 2, 5});
  CHECK(check_policy(LayoutPolicy{}, cluster).ok());
  CHECK(check_policy(LayoutPolicy{0, 4, {}}, cluster).ok());
  CHECK(check_policy(LayoutPolicy{0, 2, layout_ids({5, 0})}, cluster).ok());
  CHECK(check_policy(LayoutPolicy{0, 0, layout_ids({5, 0, 1, 2})}, cluster).ok());

  Status unknown = check_policy(LayoutPolicy{0, 0, layout_ids({1, 9})}, cluster);
  CHECK(unknown.code() == Errc::invalid_argument);
  CHECK(unknown.detail() == "storage server 9 is not in the cluster (its servers: 0,1,2,5)");
  Status twice = check_policy(LayoutPolicy{0, 0, layout_ids({1, 2, 1})}, cluster);
  CHECK(twice.code() == Errc::invalid_argument);
  CHECK(twice.detail() == "storage server 1 is listed twice");
  Status wide = check_policy(LayoutPolicy{0, 5, {}}, cluster);
  CHECK(wide.code() == Errc::invalid_argument);
  CHECK(wide.detail() == "stripe count 5 is more than the cluster's 4 storage server(s)");
  Status listed = check_policy(LayoutPolicy{0, 3, layout_ids({0, 1})}, cluster);
  CHECK(listed.code() == Errc::invalid_argument);
  CHECK(listed.detail() == "stripe count 3 is more than the 2 storage server(s) listed");
  CHECK(check_policy(LayoutPolicy{0, 1, {}}, {}).code() == Errc::invalid_argument);
}

}  // namespace pvfs
