#include "shared/log_limiter.h"

namespace pvfs {

namespace {
constexpr std::string_view kOther = "other reasons";
}  // namespace

LogLimiter::Verdict LogLimiter::admit(std::string_view reason, Clock::time_point now) {
  auto it = reasons_.find(reason);
  if (it == reasons_.end()) {
    if (reasons_.size() >= kMaxReasons) {
      reason = kOther;
      it = reasons_.find(reason);
    }
    if (it == reasons_.end()) {
      reasons_.emplace(std::string(reason), Reason{now, 0});
      return Verdict{true, 0};
    }
  }
  Reason& r = it->second;
  if (now - r.last < interval_) {
    ++r.held;
    ++holding_;
    return Verdict{false, 0};
  }
  const Verdict v{true, r.held};
  holding_ -= r.held;
  r = Reason{now, 0};
  return v;
}

std::vector<LogLimiter::Held> LogLimiter::drain(Clock::time_point now) {
  std::vector<Held> out;
  for (auto it = reasons_.begin(); it != reasons_.end();) {
    Reason& r = it->second;
    if (now - r.last < interval_) {
      ++it;
      continue;
    }
    if (r.held > 0) {
      out.push_back(Held{it->first, r.held});
      holding_ -= r.held;
      r = Reason{now, 0};
      ++it;
    } else {
      it = reasons_.erase(it);  // quiet for a whole interval: forgotten
    }
  }
  return out;
}

}  // namespace pvfs
