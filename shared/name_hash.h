// The hash of a directory entry's name in a directory lease (mds.capnp,
// DirLease): SipHash-2-4 (libsodium's crypto_shorthash) under a key the MDS
// draws for each lease, so that no one can choose names that collide. A
// collision only makes a client ask the MDS about a name it could have
// answered itself.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pvfs {

inline constexpr size_t kNameHashKeyBytes = 16;
using NameHashKey = std::array<std::byte, kNameHashKeyBytes>;

// A fresh random key.
NameHashKey random_name_hash_key();
uint64_t name_hash(const NameHashKey& key, std::string_view name);

}  // namespace pvfs
