#include "server/object_gates.h"

namespace pvfs {

asio::awaitable<void> ObjectGates::wait(Gate& gate, std::chrono::steady_clock::time_point until) {
  auto timer = std::make_shared<asio::steady_timer>(ex_, until);
  gate.waiters.push_back(timer);
  asio::error_code ec;
  co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<ObjectGates::Shared> ObjectGates::enter_shared(ObjectId object) {
  // std::map nodes are stable: the reference survives other insertions.
  while (gates_[object].exclusive)
    co_await wait(gates_[object], std::chrono::steady_clock::time_point::max());
  ++gates_[object].shared;
  co_return Shared(this, object);
}

asio::awaitable<ObjectGates::Exclusive> ObjectGates::enter_exclusive(
    ObjectId object, std::chrono::milliseconds patience) {
  const auto until = std::chrono::steady_clock::now() + patience;
  for (;;) {
    Gate& gate = gates_[object];
    if (gate.shared == 0 && !gate.exclusive) break;
    if (std::chrono::steady_clock::now() >= until) {
      if (gate.shared == 0 && !gate.exclusive && gate.waiters.empty()) gates_.erase(object);
      co_return Exclusive();
    }
    co_await wait(gate, until);
  }
  gates_[object].exclusive = true;
  co_return Exclusive(this, object);
}

void ObjectGates::leave(ObjectId object, bool exclusive) {
  auto it = gates_.find(object);
  if (it == gates_.end()) return;
  Gate& gate = it->second;
  if (exclusive) gate.exclusive = false;
  else --gate.shared;
  if (gate.shared > 0 || gate.exclusive) return;
  // Wake everyone; each re-checks. Waiters are few and rare (pulls only run
  // on idle servers).
  auto waiters = std::move(gate.waiters);
  gates_.erase(it);
  for (auto& t : waiters) t->cancel();
}

}  // namespace pvfs
