// One request to one daemon on a connection of its own: connect (and
// authenticate), call, close. The one way the tools ask a daemon a single
// question (pvfs-ctl's probes and repairs, pvfs-cluster's readiness checks).
// Blocking: each call runs its own io_context (rpc::run_sync), so not for
// use inside another io_context's thread. Thread-safe: calls share nothing.
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <kj/exception.h>

#include "config/config.h"
#include "shared/rpc/message.h"
#include "shared/secret.h"
#include "shared/status.h"

namespace pvfs {

// How long a tool's call waits: `timeout` for a word from the daemon (and
// for the connect), and up to `busy_limit` in all while the daemon says it
// is still serving the request (shared/rpc/connection.h; 0: not at all).
// A plain timeout converts to one that does not wait while busy: probes
// and readiness checks want a quick answer; scans and repairs
// (pvfs-ctl fsck) should finish on a loaded cluster.
struct Wait {
  Wait(std::chrono::milliseconds timeout) : timeout(timeout) {}  // NOLINT: implicit on purpose
  Wait(std::chrono::milliseconds timeout, std::chrono::milliseconds busy_limit)
      : timeout(timeout), busy_limit(busy_limit) {}
  std::chrono::milliseconds timeout;
  std::chrono::milliseconds busy_limit{0};
};

// The daemon's reply to `request`. Errors: those of the connection
// (unavailable, timeout, access_denied) or the daemon's own.
Result<std::unique_ptr<rpc::InMessage>> call_once(const Endpoint& at, const Secret& key,
                                                  Wait wait, rpc::OutMessage& request);

// `read(reply)`, a reply that Cap'n Proto cannot read (a broken or hostile
// daemon) as Errc::io "malformed reply: ...".
template <typename T, typename Read>
Result<T> read_reply(Read& read, rpc::InMessage& reply) {
  try {
    return read(reply);
  } catch (const kj::Exception& e) {
    return Status(Errc::io, std::string("malformed reply: ") + e.getDescription().cStr());
  }
}

// `fill(rpc::OutMessage&)` builds the request; `read(rpc::InMessage&)`
// turns the reply into the answer, a Result<T>. A reply that Cap'n Proto
// cannot read (a broken or hostile daemon) is Errc::io "malformed reply: ...".
template <typename T, typename Fill, typename Read>
Result<T> call_once(const Endpoint& at, const Secret& key, Wait wait, Fill fill, Read read) {
  rpc::OutMessage request;
  fill(request);
  auto reply = call_once(at, key, wait, request);
  if (!reply) return reply.status();
  return read_reply<T>(read, **reply);
}

// For a request whose reply says only whether the daemon did it.
template <typename Fill>
Status call_once(const Endpoint& at, const Secret& key, Wait wait, Fill fill) {
  rpc::OutMessage request;
  fill(request);
  return call_once(at, key, wait, request).status();
}

// As the first call_once, and whether the daemon was reached (connected
// and authenticated): its own error, or a timeout waiting for its answer,
// then says the daemon is up.
Result<std::unique_ptr<rpc::InMessage>> call_once(const Endpoint& at, const Secret& key, Wait wait,
                                                  rpc::OutMessage& request, bool& reached);

// How long call_mds_in_order pauses before it asks the members again.
inline constexpr std::chrono::milliseconds kDelegateRetryPause{100};

// For a request that one metadata server answers for the cluster (the QoS
// and I/O scheduler delegate): asks the [[mds]] members in id order, past
// those that are unreachable, time out or say they are not the one
// (Errc::unavailable), and returns the first other answer. When every
// member was passed but one of them was up, the members are still
// settling who the delegate is (for a second or so after they start, and
// after a delegate failed): asks them all again every kDelegateRetryPause
// until `wait.timeout` has passed since the first ask, unless one that was
// up timed out (it may yet do the request). Then, or when none was up,
// the last one's error as "mds N: ...".
template <typename T, typename Fill, typename Read>
Result<T> call_mds_in_order(const Config& config, const Secret& key, Wait wait, Fill fill, Read read) {
  std::vector<DaemonEntry> members = config.mds;
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  Status last(Errc::unavailable, "the config names no metadata server");
  const auto give_up = std::chrono::steady_clock::now() + wait.timeout;
  for (;;) {
    bool some_up = false, timed_out = false;
    for (const auto& m : members) {
      rpc::OutMessage request;
      fill(request);
      bool reached = false;
      auto reply = call_once(m.address, key, wait, request, reached);
      Result<T> answer = reply ? read_reply<T>(read, **reply) : Result<T>(reply.status());
      if (answer || (answer.code() != Errc::unavailable && answer.code() != Errc::timeout)) return answer;
      // A member that timed out may still do the request: not asked twice.
      if (answer.code() == Errc::timeout && reached) timed_out = true;
      some_up = some_up || (reached && answer.code() == Errc::unavailable);
      last = Status(answer.code(), fmt::format("mds {}: {}", m.id, answer.status().detail()));
    }
    if (!some_up || timed_out || std::chrono::steady_clock::now() + kDelegateRetryPause >= give_up) return last;
    std::this_thread::sleep_for(kDelegateRetryPause);
  }
}

}  // namespace pvfs
