#include "policy/qos/gate.h"

#include <algorithm>

namespace pvfs::qos {

std::string_view qos_policy_name(QosPolicy policy) {
  switch (policy) {
    case QosPolicy::off: return "off";
    case QosPolicy::average: return "average";
    case QosPolicy::ushape: return "ushape";
  }
  return "?";
}

std::optional<QosPolicy> parse_qos_policy(std::string_view text) {
  for (QosPolicy p : {QosPolicy::off, QosPolicy::average, QosPolicy::ushape})
    if (qos_policy_name(p) == text) return p;
  return std::nullopt;
}

void WindowGate::install(Plan plan, Nanos start, int repeat) {
  PVFS_CHECK(plan.period.count() > 0 && repeat >= 1);
  Nanos total{0};
  for (const Window& w : plan.windows) {
    PVFS_CHECK(w.length.count() >= 0);
    total += w.length;
  }
  PVFS_CHECK(total <= plan.period);
  plan_ = std::move(plan);
  start_ = start;
  repeat_ = repeat;
}

void WindowGate::clear() { plan_.reset(); }

bool WindowGate::has_own_window(std::string_view job) const {
  for (const Window& w : plan_->windows)
    if (w.kind == WindowKind::dedicated && w.job == job && w.length.count() > 0) return true;
  return false;
}

bool WindowGate::shared_member(std::string_view job) const {
  return std::binary_search(plan_->shared_members.begin(), plan_->shared_members.end(), job);
}

WindowGate::Current WindowGate::current(Nanos now) const {
  Current c;
  c.ends = Nanos::max();
  if (!plan_) return c;
  const Nanos period = plan_->period;
  if (now < start_) {
    c.ends = start_;
    return c;
  }
  const int64_t index = (now - start_) / period;
  if (index >= repeat_) return c;
  const Nanos period_start = start_ + period * index;
  Nanos at = period_start;
  for (const Window& w : plan_->windows) {
    if (now < at + w.length) {
      c.kind = w.kind == WindowKind::dedicated ? Current::Kind::dedicated
               : w.kind == WindowKind::shared  ? Current::Kind::shared
                                               : Current::Kind::best_effort;
      c.job = w.job;
      c.ends = at + w.length;
      return c;
    }
    at += w.length;
  }
  // The unplanned tail of a period: open until the next one.
  c.ends = index + 1 < repeat_ ? period_start + period : Nanos::max();
  return c;
}

Admission WindowGate::admit(std::string_view job, Nanos now) const {
  const Current c = current(now);
  switch (c.kind) {
    case Current::Kind::open: return Admission::yes;
    case Current::Kind::dedicated: return c.job == job ? Admission::yes : Admission::no;
    case Current::Kind::shared: return shared_member(job) ? Admission::yes : Admission::no;
    case Current::Kind::best_effort:
      return has_own_window(job) || shared_member(job) ? Admission::if_idle : Admission::yes;
  }
  return Admission::yes;
}

Nanos WindowGate::own_time(std::string_view job, Nanos from, Nanos to) const {
  Nanos own{0};
  if (!plan_) return own;
  // A window at a time; an operation spans a few, so the bound only
  // guards against a span of many periods.
  Nanos t = from;
  for (int step = 0; t < to && step < 256; ++step) {
    const Current c = current(t);
    const Nanos end = std::min(c.ends, to);
    const bool mine = (c.kind == Current::Kind::dedicated && c.job == job) ||
                      (c.kind == Current::Kind::shared && shared_member(job));
    if (mine) own += end - t;
    t = end;
  }
  return own;
}

uint64_t WindowGate::own_bytes(std::string_view job, uint64_t length, Nanos from, Nanos to) const {
  if (to <= from) return own_time(job, from, from + Nanos(1)).count() > 0 ? length : 0;
  const double share = static_cast<double>(own_time(job, from, to).count()) / static_cast<double>((to - from).count());
  return static_cast<uint64_t>(static_cast<double>(length) * std::clamp(share, 0.0, 1.0));
}

}  // namespace pvfs::qos
