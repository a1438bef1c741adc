// Mutual challenge-response over the cluster secret, run on every new
// connection before any frame: each side sends a random nonce, then proves
// it knows the key with HMAC(key, role || peer nonce || own nonce). The role
// byte stops a reflected proof. Pure message construction and checking;
// the socket work is in connection.cc.
#pragma once

#include <array>
#include <cstdint>

#include "shared/secret.h"

namespace pvfs::rpc {

inline constexpr size_t kNonceBytes = 32;
using Nonce = std::array<uint8_t, kNonceBytes>;
// "PVFSAUTH" + version byte + 7 reserved bytes + nonce.
inline constexpr size_t kHelloBytes = 16 + kNonceBytes;
using Hello = std::array<uint8_t, kHelloBytes>;

enum class Role : uint8_t { client = 'C', server = 'S' };

Hello make_hello(const Nonce& nonce);
// The peer's nonce, or false when the hello is not a pvfs hello.
bool parse_hello(const Hello& hello, Nonce& peer_nonce);
// The proof `role` sends.
Mac make_proof(const Secret& key, Role role, const Nonce& peer_nonce, const Nonce& own_nonce);
// Whether `proof` came from a holder of `key` playing `peer_role`.
bool check_proof(const Secret& key, Role peer_role, const Nonce& own_nonce, const Nonce& peer_nonce,
                 const Mac& proof);

}  // namespace pvfs::rpc
