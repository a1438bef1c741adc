// An in-process network for tests: services listen on an Endpoint (only a
// name here), Peers and tests connect to it, and every connection is a real
// Connection (handshake, seals, frames, back-pressure) over a MemoryStream
// pair, so a request reaches a real StorageService or MdsService handler
// without a socket. Tests cut, hold or drop what travels on a connection
// through its MemoryLink, and refuse new connections with unlisten().
// Everything runs on one single-threaded io_context; not thread-safe.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "shared/rpc/network.h"

namespace pvfs::rpc {

class MemoryNetwork final : public Network {
 public:
  explicit MemoryNetwork(asio::any_io_executor ex) : ex_(std::move(ex)) {}

  // Answers connections to `at` as `auth` (the responder's side of the
  // handshake) and hands their requests to `handler`. Replaces an earlier
  // listener of `at`; connections already made keep theirs.
  void listen(const Endpoint& at, const Auth& auth, Connection::Handler handler);
  // New connections to `at` are refused (unavailable) from now on.
  void unlisten(const Endpoint& at);
  // While `refused`, connections to `at` are refused though it listens (a
  // partition, with cut() for the connections already made).
  void refuse(const Endpoint& at, bool refused);

  // As Connection::connect; refused (unavailable) when nothing listens on `to`.
  asio::awaitable<Result<std::shared_ptr<Connection>>> connect(const Endpoint& to, const Auth& auth,
                                                               milliseconds timeout) override;

  // The links of every connection made to `at`, oldest first.
  std::vector<MemoryLink> links(const Endpoint& at) const;
  // Cuts every connection made to `at` so far (see MemoryLink::cut).
  void cut(const Endpoint& at);
  // What the responders of connections made from now on see as the
  // initiator's address (Connection::peer_address); "127.0.0.1" at first.
  void set_source_address(std::string address) { source_ = std::move(address); }

 private:
  struct Listener {
    Auth auth;
    Connection::Handler handler;
  };
  asio::any_io_executor ex_;
  std::map<std::string, Listener> listeners_;
  std::map<std::string, std::vector<MemoryLink>> links_;
  std::set<std::string> refused_;
  std::string source_ = "127.0.0.1";
};

}  // namespace pvfs::rpc
