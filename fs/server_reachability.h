// Which storage servers this client could not reach, and so how patiently a
// new call to one should try: a server not known to be down gets the whole
// RPC timeout (reconnecting every 200 ms rides out a restart); one that
// could not be reached for a whole call fails the calls of the next
// `quiet` at once, then gets one connection attempt per call until one
// works. So a SIGKILLed server costs the first call the timeout and the
// ones after it (the kernel's retry of a failed readahead included)
// nothing. Pure: the caller passes the time. Not thread-safe: owned by the
// client's io thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>

namespace pvfs {

class ServerReachability {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Try {
    patiently,   // retry connecting until the call's deadline
    once,        // one connection attempt; its failure fails the call
    not_at_all,  // fail the call without trying
  };

  explicit ServerReachability(std::chrono::milliseconds quiet) : quiet_(quiet) {}

  // How a call to `server` starting at `now` should try to reach it.
  Try how(uint32_t server, Clock::time_point now) const;
  // A call could not connect to `server` (before its deadline, or in its one
  // attempt) at `now`.
  void unreachable(uint32_t server, Clock::time_point now);
  // A connection to `server` worked: it is patiently tried again.
  void reached(uint32_t server) { down_since_.erase(server); }

 private:
  std::chrono::milliseconds quiet_;
  std::map<uint32_t, Clock::time_point> down_since_;  // last failure of each unreachable server
};

}  // namespace pvfs
