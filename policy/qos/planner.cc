#include "policy/qos/planner.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace pvfs::qos {

namespace {

double seconds(Nanos t) { return std::chrono::duration<double>(t).count(); }
Nanos from_seconds(double s) { return Nanos(static_cast<int64_t>(std::llround(s * 1e9))); }

// One window being sized: a dedicated job's, or the shared one (job empty).
struct Unit {
  std::string job;
  Nanos length{0};
  Nanos left{0};  // time to the deadline (shared: its most urgent member)
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

Plan with_profile(const Plan& planned, std::string_view job, Nanos period, uint32_t share_pct) {
  Plan out;
  out.period = period;
  const Nanos window = period * std::clamp<uint32_t>(share_pct, 1, 100) / 100;
  const Nanos rest = period - window;
  const Nanos planned_period = planned.period > Nanos(0) ? planned.period : period;
  bool placed = false;
  const auto place = [&] {
    if (placed) return;
    out.windows.push_back({WindowKind::dedicated, std::string(job), window});
    placed = true;
  };
  for (const Window& w : planned.windows) {
    if (w.kind == WindowKind::dedicated && w.job == job) continue;
    if (w.kind != WindowKind::dedicated || w.job > job) place();
    // Through double: length x rest can pass 64 bits of nanoseconds.
    const Nanos length(static_cast<int64_t>(static_cast<double>(w.length.count()) *
                                            static_cast<double>(rest.count()) /
                                            static_cast<double>(planned_period.count())));
    if (length > Nanos(0)) out.windows.push_back({w.kind, w.job, length});
  }
  place();
  for (const auto& member : planned.shared_members)
    if (member != job) out.shared_members.push_back(member);
  return out;
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
  bool best_effort = false;  // a job without a goal wants service
  std::vector<const JobReport*> fresh;  // new dedicated windows: need an initial size

  // §3.2.1 chooses who gets a window of its own; §3.2.2 adjusts each one
  // by T_adjust towards the job's bound.
  for (const JobReport& r : reports) {
    State& st = jobs_[r.job];
    JobPlan& p = st.plan;
    const Nanos before = p.dedicated ? p.window : Nanos(0);
    const bool was_shared = st.shared_last;
    st.shared_last = false;
    p.cut = Nanos(0);
    if (!r.goal) {
      st = State{};
      best_effort = best_effort || r.active;
      continue;
    }
    if (!r.active) {  // nothing to serve: no window this period; keep what was learnt
      p.window = Nanos(0);
      continue;
    }
    const bool shares = options_.share_by_locality && r.seek_cost <= r.idle_cost;
    if (!shares) p.promoted = false;  // its locality earns it the window now
    // §3.2.2: a member of the shared window that got less than its bound
    // over the period gets a window of its own, first sized from the rate
    // it had in the shared one.
    if (shares && was_shared && static_cast<double>(r.bytes) < r.bound * Ts) {
      p.promoted = true;
      p.rate = shared_before.count() > 0 ? static_cast<double>(r.window_bytes) / seconds(shared_before) : 0.0;
    }
    if (shares && !p.promoted) {
      p.dedicated = false;
      p.window = Nanos(0);
      st.shared_last = true;
      shared_goals.push_back(&r);
      continue;
    }
    p.dedicated = true;
    if (before.count() > 0 && r.window_bytes > 0) {
      // T_adjust = (B_required * T_period - D) / (D_ushape / T_window):
      // §3.2.2 divides by T_init_window; we read it as the rate the job got
      // in the window it had (the same while that is its initial size). D
      // counts all its bytes: what it got in others' idle time it need not
      // get in its own window.
      p.rate = static_cast<double>(r.window_bytes) / seconds(before);
      const double adjust = (r.bound * Ts - static_cast<double>(r.bytes)) / p.rate;
      p.window = std::clamp(from_seconds(std::max(0.0, seconds(before) + adjust)), floor, T);
      // A promoted job that now needs no more than the shortest window
      // goes back to the shared one next period, where locality put it.
      if (p.promoted && p.window <= floor) p.promoted = false;
    } else if (before.count() > 0) {
      // Served nothing in it, so no rate to adjust by: a window shorter
      // than what another job's operation ran into it, or a job that sent
      // nothing while it lasted. Behind its bound, the job gets twice the
      // window (a window of the same size would stay empty); else the same.
      p.window = static_cast<double>(r.bytes) < r.bound * Ts ? std::min(before * 2, T) : before;
    } else {
      fresh.push_back(&r);
      continue;
    }
    units.push_back({r.job, p.window, r.left, Nanos(0)});
  }

  // The shared window: long enough for the most demanding member at the
  // rate each got in the last shared window.
  Nanos shared_need{0};
  Nanos shared_left = Nanos::max();
  auto shared_rate = [&](const JobReport& r) {
    return shared_before.count() > 0 ? static_cast<double>(r.window_bytes) / seconds(shared_before) : 0.0;
  };
  for (const JobReport* r : shared_goals) {
    shared_left = std::min(shared_left, r->left);
    Nanos need = shared_before.count() > 0 ? shared_before : Nanos(0);
    if (const double rate = shared_rate(*r); rate > 0)
      need = from_seconds(std::max(0.0, seconds(shared_before) + (r->bound * Ts - static_cast<double>(r->bytes)) / rate));
    shared_need = std::max(shared_need, std::clamp(need, floor, T));
  }

  // Initial sizes inversely proportional to each window's throughput
  // (§3.2.2, after IOrchestrator); an unmeasured window counts at the mean
  // of the measured ones, and a new shared window as one more window.
  if (!fresh.empty() || (!shared_goals.empty() && shared_before.count() == 0)) {
    std::vector<double> rates;
    for (const Unit& u : units) rates.push_back(jobs_.find(u.job)->second.plan.rate);
    for (const JobReport* r : fresh) rates.push_back(jobs_.find(r->job)->second.plan.rate);
    double known = 0;
    int n_known = 0;
    for (double x : rates)
      if (x > 0) known += x, ++n_known;
    const double mean = n_known ? known / n_known : 1.0;
    double inverse_sum = 0;
    for (double x : rates) inverse_sum += 1.0 / (x > 0 ? x : mean);
    if (!shared_goals.empty()) inverse_sum += 1.0 / mean;
    if (best_effort) inverse_sum += 1.0 / mean;
    auto initial = [&](double x) { return std::clamp(from_seconds(Ts * (1.0 / (x > 0 ? x : mean)) / inverse_sum), floor, T); };
    for (const JobReport* r : fresh) {
      JobPlan& p = jobs_.find(r->job)->second.plan;
      p.window = initial(p.rate);
      units.push_back({r->job, p.window, r->left, Nanos(0)});
    }
    if (!shared_goals.empty() && shared_before.count() == 0) shared_need = initial(0);
  }
  if (shared_need.count() > 0) units.push_back({"", shared_need, shared_left, Nanos(0)});

  Nanos total{0};
  for (const Unit& u : units) total += u.length;
  auto report_of = [&](std::string_view job) -> const JobReport& {
    for (const JobReport& r : reports)
      if (r.job == job) return r;
    PVFS_CHECK(false);
    return reports.front();
  };

  if (total > T) {
    // Overload: best effort gets nothing; then T_overload is cut from the
    // windows in proportion to the time each job has left (the most urgent
    // lose least), none below the floor (water-filling). The baseline
    // shares the shortage evenly.
    Nanos over = total - T;
    auto weight_of = [&](const Unit* u) { return options_.track_loss ? std::max(1e-9, seconds(u->left)) : 1.0; };
    std::vector<Unit*> open;
    for (Unit& u : units) open.push_back(&u);
    while (over.count() > 0 && !open.empty()) {
      double weight = 0;
      for (Unit* u : open) weight += weight_of(u);
      Nanos taken{0};
      std::vector<Unit*> still;
      for (Unit* u : open) {
        const Nanos share = from_seconds(seconds(over) * weight_of(u) / weight);
        const Nanos room = u->length - u->cut - floor;
        const Nanos c = std::clamp(share, Nanos(0), std::max(room, Nanos(0)));
        u->cut += c;
        taken += c;
        if (c == share && c < room) still.push_back(u);
      }
      if (taken.count() == 0) break;
      over -= std::min(over, taken);
      open = std::move(still);
    }
    // T_loss = D_ushape * (T_cut / T_ushape) / B_required, with
    // D_ushape / T_ushape the rate the job got in its window.
    for (Unit& u : units) {
      if (u.cut.count() == 0) continue;
      auto record = [&](const JobReport& r, double rate) {
        JobPlan& p = jobs_[r.job].plan;
        p.cut = u.cut;
        if (rate <= 0 || r.bound <= 0 || !options_.track_loss) return;
        p.loss += from_seconds(rate * seconds(u.cut) / r.bound);
      };
      if (!u.job.empty()) {
        record(report_of(u.job), jobs_[u.job].plan.rate);
        jobs_[u.job].plan.window = u.length - u.cut;
      } else {
        for (const JobReport* r : shared_goals) record(*r, shared_rate(*r));
      }
      u.length -= u.cut;
      total -= u.cut;
    }
  } else if (options_.track_loss) {
    // Slack: make up recorded losses first, most urgent job first.
    Nanos slack = T - total;
    std::vector<const JobReport*> owed;
    for (const JobReport& r : reports)
      if (r.goal && r.active && jobs_[r.job].plan.loss.count() > 0) owed.push_back(&r);
    std::stable_sort(owed.begin(), owed.end(), [](const JobReport* a, const JobReport* b) { return a->left < b->left; });
    for (const JobReport* r : owed) {
      if (slack.count() <= 0) break;
      JobPlan& p = jobs_[r->job].plan;
      const std::string key = p.dedicated ? r->job : std::string();
      Unit* unit = nullptr;
      for (Unit& u : units)
        if (u.job == key) unit = &u;
      const double rate = p.dedicated ? p.rate : shared_rate(*r);
      if (!unit || rate <= 0 || r->bound <= 0) continue;
      const Nanos give = std::min(from_seconds(seconds(p.loss) * r->bound / rate), slack);
      unit->length += give;
      slack -= give;
      total += give;
      p.loss -= std::min(p.loss, from_seconds(seconds(give) * rate / r->bound));
      if (p.dedicated) p.window = unit->length;
    }
  }

  Plan plan;
  plan.period = T;
  Nanos shared{0};
  for (const Unit& u : units) {
    if (u.job.empty()) shared = u.length;
    else plan.windows.push_back({WindowKind::dedicated, u.job, u.length});
  }
  std::sort(plan.windows.begin(), plan.windows.end());
  // Every window at its floor and still too many (or rounding): shrink
  // them all alike so the plan fits the period.
  Nanos planned = shared;
  for (const Window& w : plan.windows) planned += w.length;
  if (planned > T) {
    const double scale = seconds(T) / seconds(planned);
    auto scaled = [&](Nanos t) { return Nanos(static_cast<int64_t>(std::floor(static_cast<double>(t.count()) * scale))); };
    planned = Nanos(0);
    for (Window& w : plan.windows) {
      w.length = scaled(w.length);
      planned += w.length;
      jobs_[w.job].plan.window = w.length;
    }
    shared = std::min(scaled(shared), T - planned);
    planned += shared;
  }
  // The time left over goes to best effort, or, without any, to the
  // shared window; otherwise it stays open to all.
  const Nanos free = T - planned;
  Nanos best{0};
  if (best_effort) best = free;
  else if (shared.count() > 0) shared += free;
  if (shared.count() > 0) {
    plan.windows.push_back({WindowKind::shared, "", shared});
    for (const JobReport* r : shared_goals) plan.shared_members.push_back(r->job);
    std::sort(plan.shared_members.begin(), plan.shared_members.end());
  }
  if (best >= floor && best.count() > 0) plan.windows.push_back({WindowKind::best_effort, "", best});
  shared_ = shared;
  for (auto& [name, st] : jobs_)
    if (!st.plan.dedicated) st.plan.window = Nanos(0);
  return plan;
}

}  // namespace pvfs::qos
