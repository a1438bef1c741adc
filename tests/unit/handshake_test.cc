// The mutual challenge-response every connection runs first: both sides
// accept each other only when they hold the same key, and no proof can be
// reflected or replayed. Drives the pure message functions directly.
#include "shared/rpc/handshake.h"

#include <cstring>

#include <doctest/doctest.h>

namespace pvfs::rpc {
namespace {

Nonce nonce_of(uint8_t seed) {
  Nonce n{};
  for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<uint8_t>(seed * 31 + i * 7);
  return n;
}

Secret key_of(uint8_t seed) {
  Secret k{};
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(seed + i);
  return k;
}

}  // namespace

TEST_CASE("a hello carries the pvfs magic, the version and the sender's nonce") {
  const Nonce mine = nonce_of(1);
  Hello h = make_hello(mine);
  CHECK(std::memcmp(h.data(), "PVFSAUTH", 8) == 0);
  CHECK(h[8] == 1);
  Nonce parsed{};
  REQUIRE(parse_hello(h, parsed));
  CHECK(parsed == mine);
}

TEST_CASE("a hello with another magic or version is not a pvfs hello") {
  Nonce out{};
  Hello wrong_magic = make_hello(nonce_of(2));
  wrong_magic[0] = 'X';
  CHECK_FALSE(parse_hello(wrong_magic, out));
  Hello wrong_version = make_hello(nonce_of(2));
  wrong_version[8] = 2;
  CHECK_FALSE(parse_hello(wrong_version, out));
  Hello zeros{};
  CHECK_FALSE(parse_hello(zeros, out));
  // A frame header sent where a hello belongs (a client skipping the handshake).
  Hello frame{};
  std::memcpy(frame.data(), "PVF1", 4);
  CHECK_FALSE(parse_hello(frame, out));
}

TEST_CASE("a client and a server holding the same key accept each other") {
  const Secret key = key_of(9);
  const Nonce client_nonce = nonce_of(3), server_nonce = nonce_of(4);
  Mac from_client = make_proof(key, Role::client, server_nonce, client_nonce);
  Mac from_server = make_proof(key, Role::server, client_nonce, server_nonce);
  CHECK(check_proof(key, Role::client, server_nonce, client_nonce, from_client));
  CHECK(check_proof(key, Role::server, client_nonce, server_nonce, from_server));
}

TEST_CASE("a proof made with another key is refused by both sides") {
  const Secret key = key_of(9), other = key_of(10);
  const Nonce client_nonce = nonce_of(3), server_nonce = nonce_of(4);
  CHECK_FALSE(check_proof(key, Role::client, server_nonce, client_nonce,
                          make_proof(other, Role::client, server_nonce, client_nonce)));
  CHECK_FALSE(check_proof(key, Role::server, client_nonce, server_nonce,
                          make_proof(other, Role::server, client_nonce, server_nonce)));
}

TEST_CASE("a server's own proof sent back to it by an impostor is refused") {
  // The impostor (no key) echoes the server's nonce as its own, hoping the
  // server's proof answers the server's challenge. The role byte stops it.
  const Secret key = key_of(9);
  const Nonce n = nonce_of(5);
  Mac server_proof = make_proof(key, Role::server, n, n);
  CHECK_FALSE(check_proof(key, Role::client, n, n, server_proof));
}

TEST_CASE("a proof recorded on one connection does not pass on another") {
  const Secret key = key_of(9);
  const Nonce client_nonce = nonce_of(3);
  Mac recorded = make_proof(key, Role::client, nonce_of(4), client_nonce);
  // The server picks a fresh nonce for the new connection.
  CHECK_FALSE(check_proof(key, Role::client, nonce_of(6), client_nonce, recorded));
}

TEST_CASE("a proof with any one bit flipped is refused") {
  const Secret key = key_of(9);
  const Nonce client_nonce = nonce_of(3), server_nonce = nonce_of(4);
  const Mac good = make_proof(key, Role::client, server_nonce, client_nonce);
  for (size_t bit = 0; bit < good.size() * 8; ++bit) {
    Mac bad = good;
    bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    CHECK_FALSE(check_proof(key, Role::client, server_nonce, client_nonce, bad));
  }
}

}  // namespace pvfs::rpc
