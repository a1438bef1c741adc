// Per-object admission between a storage server's local writes (many at a
// time) and a maintainer pulling a redirected range home (alone): a pull
// must not copy old fragment bytes over a local write that lands while it
// runs. Coroutine-friendly; belongs to the service's network thread.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>

#include <asio.hpp>

#include "shared/ids.h"

namespace pvfs {

class ObjectGates {
 public:
  explicit ObjectGates(asio::any_io_executor ex) : ex_(std::move(ex)) {}

  // Held while a local write, truncate or remove of the object runs. Waits
  // while a pull holds the object.
  class Shared;
  asio::awaitable<Shared> enter_shared(ObjectId object);
  // Held by a pull: waits until no local operation holds the object and
  // keeps new ones out. Gives up (returns an empty guard) after `patience`.
  class Exclusive;
  asio::awaitable<Exclusive> enter_exclusive(ObjectId object, std::chrono::milliseconds patience);

  class Shared {
   public:
    Shared(ObjectGates* gates, ObjectId object) : gates_(gates), object_(object) {}
    Shared(Shared&& o) noexcept : gates_(std::exchange(o.gates_, nullptr)), object_(o.object_) {}
    Shared& operator=(Shared&&) = delete;
    ~Shared() { if (gates_) gates_->leave(object_, false); }
   private:
    ObjectGates* gates_;
    ObjectId object_;
  };
  class Exclusive {
   public:
    Exclusive() = default;
    Exclusive(ObjectGates* gates, ObjectId object) : gates_(gates), object_(object) {}
    Exclusive(Exclusive&& o) noexcept : gates_(std::exchange(o.gates_, nullptr)), object_(o.object_) {}
    Exclusive& operator=(Exclusive&&) = delete;
    ~Exclusive() { if (gates_) gates_->leave(object_, true); }
    explicit operator bool() const { return gates_ != nullptr; }
   private:
    ObjectGates* gates_ = nullptr;
    ObjectId object_{};
  };

 private:
  struct Gate {
    int shared = 0;
    bool exclusive = false;
    std::deque<std::shared_ptr<asio::steady_timer>> waiters;
  };
  asio::awaitable<void> wait(Gate& gate, std::chrono::steady_clock::time_point until);
  void leave(ObjectId object, bool exclusive);

  asio::any_io_executor ex_;
  std::map<ObjectId, Gate> gates_;
};

}  // namespace pvfs
