// Mutual challenge-response over the cluster secret, run on every new
// connection before any frame. The initiator sends its hello (who it is,
// whether it wants encryption, a random nonce); the responder answers with
// its own hello; the initiator proves it knows the key with
// HMAC(key, 'I' || initiator hello || responder hello); only after checking
// that does the responder send its proof (tag 'R'). Both hellos, so both
// roles, daemon ids and nonces, are bound into both proofs and into the
// session keys that protect every later frame (frame_seal.h). Pure message
// construction and checking; the socket work is in connection.cc.
//
// An end on a local socket (local_socket.h) says so in its hello. When both
// ends do and neither asks for encryption, frames' bulk data goes without a
// tag: the kernel moves it between the two processes that proved the key,
// and no third party can write into a connected Unix socket. Headers and
// messages keep theirs. A peer built before this flag ignores it and does
// not set it, so the two keep tagging everything.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "shared/secret.h"

namespace pvfs::rpc {

inline constexpr size_t kNonceBytes = 32;
using Nonce = std::array<uint8_t, kNonceBytes>;
// "PVFSAUTH", version, kind, flags, reserved, u32 id (little-endian), nonce.
inline constexpr size_t kHelloBytes = 16 + kNonceBytes;
using Hello = std::array<uint8_t, kHelloBytes>;

// What kind of process is on an end of a connection.
enum class Kind : uint8_t { client = 'C', mds = 'M', server = 'S' };

// Who this process says it is in its hello. Clients and tools use id 0.
struct Identity {
  Kind kind = Kind::client;
  uint32_t id = 0;
  bool operator==(const Identity&) const = default;
};
// "client", "mds 2", "server 0".
std::string to_string(const Identity& who);

// What a process needs to open connections: the cluster key, who it is, and
// whether it asks for encrypted frames ([security] encrypt). Converts from a
// bare Secret for clients and tools that ask nothing more.
struct Auth {
  Auth(const Secret& key_, Identity self_ = {}, bool encrypt_ = false)  // NOLINT: implicit on purpose
      : key(key_), self(self_), encrypt(encrypt_) {}
  Secret key;
  Identity self;
  bool encrypt = false;
};

struct HelloFields {
  Identity who;
  bool encrypt = false;
  bool local = false;  // on a local socket: takes frames whose data has no tag
  Nonce nonce{};
};

Hello make_hello(const Identity& who, bool encrypt, const Nonce& nonce, bool local = false);
// The fields, or nullopt when the hello is not a pvfs hello of this version
// or names an unknown kind.
std::optional<HelloFields> parse_hello(const Hello& hello);

enum class Side : uint8_t { initiator = 'I', responder = 'R' };
// The proof `side` sends, over both hellos as they went on the wire.
Mac make_proof(const Secret& key, Side side, const Hello& initiator, const Hello& responder);
// Whether `proof` came from a holder of `key` playing `side`. Constant time.
bool check_proof(const Secret& key, Side side, const Hello& initiator, const Hello& responder,
                 const Mac& proof);

// The two per-direction keys of a session, derived from the cluster key and
// both hellos (keyed BLAKE2b); fresh for every connection because both
// nonces are.
struct SessionKeys {
  Secret initiator_to_responder{};
  Secret responder_to_initiator{};
};
SessionKeys derive_session_keys(const Secret& key, const Hello& initiator, const Hello& responder);

}  // namespace pvfs::rpc
