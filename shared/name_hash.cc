#include "shared/name_hash.h"

#include <cstring>

#include <sodium.h>

namespace pvfs {

static_assert(kNameHashKeyBytes == crypto_shorthash_KEYBYTES);
static_assert(crypto_shorthash_BYTES == sizeof(uint64_t));

NameHashKey random_name_hash_key() {
  static const bool ready = sodium_init() >= 0;
  (void)ready;
  NameHashKey key;
  randombytes_buf(key.data(), key.size());
  return key;
}

uint64_t name_hash(const NameHashKey& key, std::string_view name) {
  unsigned char out[crypto_shorthash_BYTES];
  crypto_shorthash(out, reinterpret_cast<const unsigned char*>(name.data()), name.size(),
                   reinterpret_cast<const unsigned char*>(key.data()));
  uint64_t h;
  std::memcpy(&h, out, sizeof h);
  return h;
}

}  // namespace pvfs
