#include "server/qos/planner.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace pvfs::qos {

namespace {

double seconds(Nanos t) { return std::chrono::duration<double>(t).count(); }
Nanos from_seconds(double s) { return Nanos(static_cast<int64_t>(std::llround(s * 1e9))); }

// One window being sized: a dedicated job's, or the shared window's part
// for the goals of its members.
struct Unit {
  std::string job;         // empty: the shared window's goal part
  Nanos length{0};
  Nanos left{0};           // time to the deadline (shared part: its most urgent member)
  Nanos cut{0};
};

}  // namespace

Status validate(const PlannerOptions& o) {
  if (o.period.count() <= 0) return Status(Errc::invalid_argument, "period must be > 0");
  if (o.min_window.count() < 0 || o.min_window > o.period / 4)
    return Status(Errc::invalid_argument, "min_window must be in [0, period / 4]");
  return {};
}

WindowPlanner::WindowPlanner(PlannerOptions options) : options_(options) { PVFS_CHECK(validate(options).ok()); }

const JobPlan* WindowPlanner::job(std::string_view job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? nullptr : &it->second.plan;
}

Plan WindowPlanner::plan(std::span<const JobReport> reports) {
  const Nanos T = options_.period;
  const double Ts = seconds(T);
  const Nanos floor = options_.min_window;
  std::set<std::string, std::less<>> names;
  for (const JobReport& r : reports) {
    PVFS_CHECK(!r.job.empty());
    PVFS_CHECK(names.insert(r.job).second);
    PVFS_CHECK(!r.goal || (std::isfinite(r.bound) && r.bound >= 0));
  }
  std::erase_if(jobs_, [&](const auto& kv) { return !names.contains(kv.first); });

  const Nanos shared_before = shared_;
  std::vector<Unit> units;
  std::vector<const JobReport*> shared_goals;
  bool best_effort = false;  // someone without a window of its own wants service

  // §3.2.2: adjust each dedicated window by T_adjust; §3.2.1: choose who
  // gets one.
  std::vector<std::pair<const JobReport*, State*>> fresh;  // need an initial size
  for (const JobReport& r : reports) {
    State& st = jobs_[r.job];
    JobPlan& p = st.plan;
    const Nanos before = p.dedicated ? p.window : Nanos(0);
    p.cut = Nanos(0);
    if (!r.goal) {
      p = JobPlan{};
      best_effort = best_effort || r.active;
      continue;
    }
    if (!r.active) {  // nothing to serve: no window this period; keep what was learnt
      p.window = Nanos(0);
      continue;
    }
    const bool wants_own = !options_.share_by_locality || r.seek_cost > r.idle_cost;
    if (!wants_own) {
      p.dedicated = false;
      p.window = Nanos(0);
      shared_goals.push_back(&r);
      continue;
    }
    p.dedicated = true;
    if (before.count() > 0 && r.bytes > 0) {
      // T_adjust = (B_required * T_period - D) / (D / T_window): the paper
      // divides by T_init_window; we read that as the rate the job got in
      // the window it had, which is the same while the window is at its
      // initial size.
      p.rate = static_cast<double>(r.bytes) / seconds(before);
      const double adjust = (r.bound * Ts - static_cast<double>(r.bytes)) / p.rate;
      p.window = from_seconds(std::max(0.0, seconds(before) + adjust));
    } else if (before.count() > 0) {
      p.window = before;  // served nothing: no evidence to adjust on
    } else {
      fresh.emplace_back(&r, &st);
      continue;
    }
    p.window = std::clamp(p.window, floor, T);
    units.push_back({r.job, p.window, r.left, Nanos(0)});
  }

  // The shared window's part for its members' goals: long enough for the
  // most demanding of them at the rate each got in the last shared window.
  Nanos goal_part{0};
  Nanos shared_left = Nanos::max();
  for (const JobReport* r : shared_goals) {
    shared_left = std::min(shared_left, r->left);
    Nanos need = shared_goal_.count() > 0 ? shared_goal_ : floor;
    if (r->bytes > 0 && shared_before.count() > 0) {
      const double rate = static_cast<double>(r->bytes) / seconds(shared_before);
      need = from_seconds(r->bound * Ts / rate);
    }
    goal_part = std::max(goal_part, std::clamp(need, floor, T));
  }

  // Initial sizes inversely proportional to each window's throughput
  // (§3.2.2, after IOrchestrator); an unmeasured window counts at the mean
  // of the measured ones.
  if (!fresh.empty()) {
    std::vector<double> rates;
    for (const Unit& u : units) rates.push_back(jobs_.find(u.job)->second.plan.rate);
    double known = 0;
    int n_known = 0;
    for (double r : rates)
      if (r > 0) known += r, ++n_known;
    const double mean = n_known ? known / n_known : 1.0;
    double inverse_sum = 0;
    for (double r : rates) inverse_sum += 1.0 / (r > 0 ? r : mean);
    for (auto& [r, st] : fresh) inverse_sum += 1.0 / (st->plan.rate > 0 ? st->plan.rate : mean);
    if (!shared_goals.empty() || best_effort) inverse_sum += 1.0 / mean;
    for (auto& [r, st] : fresh) {
      const double x = st->plan.rate > 0 ? st->plan.rate : mean;
      st->plan.window = std::clamp(from_seconds(Ts * (1.0 / x) / inverse_sum), floor, T);
      units.push_back({r->job, st->plan.window, r->left, Nanos(0)});
    }
  }
  if (goal_part.count() > 0) units.push_back({"", goal_part, shared_left, Nanos(0)});

  Nanos total{0};
  for (const Unit& u : units) total += u.length;

  auto rate_of = [&](const std::string& job) { return jobs_.find(job)->second.plan.rate; };
  auto bound_of = [&](std::string_view job) -> const JobReport* {
    for (const JobReport& r : reports)
      if (r.job == job) return &r;
    return nullptr;
  };

  if (total > T) {
    // Overload: best effort has nothing left already; cut T_overload from
    // the windows in proportion to the time each job has left, so the most
    // urgent lose least, none below the floor (water-filling).
    Nanos over = total - T;
    std::vector<Unit*> open;
    for (Unit& u : units) open.push_back(&u);
    while (over.count() > 0 && !open.empty()) {
      double weight = 0;
      for (Unit* u : open) weight += std::max(1e-9, seconds(u->left));
      Nanos taken{0};
      std::vector<Unit*> still;
      for (Unit* u : open) {
        const Nanos share = from_seconds(seconds(over) * std::max(1e-9, seconds(u->left)) / weight);
        const Nanos room = u->length - u->cut - floor;
        const Nanos c = std::min(share, room);
        u->cut += c;
        taken += c;
        if (c < share || room == c) continue;  // at its floor
        still.push_back(u);
      }
      if (taken.count() == 0) break;
      over -= taken;
      open = std::move(still);
    }
    // T_loss = D * (T_cut / T_window) / B_required, with D / T_window the
    // rate the job got in its window.
    for (Unit& u : units) {
      if (u.cut.count() == 0) continue;
      auto record = [&](const JobReport& r, double rate) {
        if (rate <= 0 || r.bound <= 0) return;
        JobPlan& p = jobs_[r.job].plan;
        p.cut = u.cut;
        p.loss += from_seconds(rate * seconds(u.cut) / r.bound);
      };
      if (!u.job.empty()) {
        record(*bound_of(u.job), rate_of(u.job));
        jobs_[u.job].plan.window = u.length - u.cut;
      } else {
        for (const JobReport* r : shared_goals)
          if (shared_before.count() > 0) record(*r, static_cast<double>(r->bytes) / seconds(shared_before));
      }
      u.length -= u.cut;
      total -= u.cut;
    }
  } else {
    // Slack: make up recorded losses first, most urgent job first.
    Nanos slack = T - total;
    std::vector<const JobReport*> owed;
    for (const JobReport& r : reports)
      if (r.goal && r.active && jobs_[r.job].plan.loss.count() > 0) owed.push_back(&r);
    std::stable_sort(owed.begin(), owed.end(), [](const JobReport* a, const JobReport* b) { return a->left < b->left; });
    for (const JobReport* r : owed) {
      if (slack.count() <= 0) break;
      JobPlan& p = jobs_[r->job].plan;
      Unit* unit = nullptr;
      double rate = 0;
      for (Unit& u : units)
        if (u.job == (p.dedicated ? r->job : std::string())) unit = &u;
      if (p.dedicated) rate = p.rate;
      else if (shared_before.count() > 0) rate = static_cast<double>(r->bytes) / seconds(shared_before);
      if (!unit || rate <= 0 || r->bound <= 0) continue;
      const Nanos extra = from_seconds(seconds(p.loss) * r->bound / rate);
      const Nanos give = std::min(extra, slack);
      unit->length += give;
      slack -= give;
      total += give;
      p.loss -= std::min(p.loss, from_seconds(seconds(give) * rate / r->bound));
      if (p.dedicated) p.window = unit->length;
    }
  }

  // The shared window: its goal part, and all time still free for best
  // effort (every job without a window of its own is served in it).
  Plan plan;
  plan.period = T;
  Nanos goal_len{0};
  for (const Unit& u : units) {
    if (u.job.empty()) goal_len = u.length;
    else plan.windows.push_back({u.job, u.length});
  }
  std::sort(plan.windows.begin(), plan.windows.end());
  Nanos free = T - total;
  Nanos shared = goal_len + (free.count() > 0 ? free : Nanos(0));
  if (shared > Nanos(0) && shared < floor && goal_len.count() == 0) shared = Nanos(0);
  if (shared.count() > 0) plan.windows.push_back({"", shared});
  shared_ = shared;
  shared_goal_ = goal_len;
  for (auto& [name, st] : jobs_)
    if (!st.plan.dedicated || st.plan.window.count() == 0) st.plan.window = Nanos(0);
  return plan;
}

}  // namespace pvfs::qos
