#include "policy/qos/training.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace pvfs::qos {

namespace {

double secs(Nanos d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

double ProfileEpoch::throughput() const {
  const double s = secs(service);
  return s > 0 ? static_cast<double>(bytes) / s : 0.0;
}

Nanos Profile::total() const {
  return ended() && end_unix_ms > start_unix_ms ? Nanos(std::chrono::milliseconds(end_unix_ms - start_unix_ms))
                                                : Nanos(0);
}

Nanos Profile::comp() const { return std::max(Nanos(0), total() - io); }

void add_epochs(Profile& profile, std::span<const ProfileEpoch> records) {
  for (const ProfileEpoch& r : records) {
    profile.bytes += r.bytes;
    if (profile.epochs.size() < kMaxProfileEpochs) profile.epochs.push_back(r);
    else ++profile.dropped;
  }
}

Nanos busiest_server_service(const Profile& profile) {
  std::map<uint32_t, Nanos> by_server;
  for (const ProfileEpoch& r : profile.epochs) by_server[r.server] += r.service;
  Nanos most{0};
  for (const auto& [server, t] : by_server) most = std::max(most, t);
  return most;
}

std::map<uint32_t, double> busy_fractions(const Profile& profile) {
  std::map<uint32_t, double> out;
  for (const ProfileEpoch& r : profile.epochs) out[r.server] += secs(r.service);
  const double io = secs(profile.io);
  for (auto& [server, service] : out) service = io > 0 ? std::clamp(service / io, 0.0, 1.0) : 1.0;
  return out;
}

Profile with_io(Profile p) {
  if (p.io_source == IoSource::job) return p;
  uint64_t longest = 0;
  for (const auto& [client, span] : p.clients) longest = std::max(longest, span.last_ns - span.first_ns);
  if (longest > 0) {
    p.io = Nanos(static_cast<int64_t>(std::min<uint64_t>(longest, uint64_t{1} << 62)));
    p.io_source = IoSource::clients;
  } else {
    p.io = busiest_server_service(p);
    p.io_source = IoSource::servers;
  }
  return p;
}

Nanos DiskCost::service(uint64_t distance, uint64_t length) const {
  PVFS_CHECK(bytes_per_s > 0);
  const double transfer = static_cast<double>(length) / bytes_per_s;
  return (distance > 0 ? seek : Nanos(0)) + Nanos(static_cast<int64_t>(std::llround(transfer * 1e9)));
}

Result<DiskCost> estimate_disk(const Profile& profile) {
  constexpr double kBlock = 4096;
  constexpr double kScattered = 1 << 20;
  double best_sequential = 0, best_any = 0;
  for (const ProfileEpoch& r : profile.epochs) {
    const double b = r.throughput();
    best_any = std::max(best_any, b);
    if (r.avg_dist_bytes < kBlock) best_sequential = std::max(best_sequential, b);
  }
  if (best_any <= 0) return Status(Errc::invalid_argument, "the profile has no record with a service time");
  DiskCost disk;
  disk.bytes_per_s = best_sequential > 0 ? best_sequential : best_any;
  std::vector<double> seeks;
  for (const ProfileEpoch& r : profile.epochs) {
    if (r.avg_dist_bytes < kScattered || r.requests == 0 || r.service.count() <= 0) continue;
    const double per_request = secs(r.service) / static_cast<double>(r.requests);
    seeks.push_back(std::max(0.0, per_request - r.avg_size_bytes / disk.bytes_per_s));
  }
  if (!seeks.empty()) {
    std::nth_element(seeks.begin(), seeks.begin() + static_cast<std::ptrdiff_t>(seeks.size() / 2), seeks.end());
    disk.seek = Nanos(static_cast<int64_t>(std::llround(seeks[seeks.size() / 2] * 1e9)));
  }
  return disk;
}

std::vector<EpochSample> synthetic_epochs(const DiskCost& disk, const TrainOptions& options, std::mt19937_64& rng) {
  PVFS_CHECK(options.synthetic_sets > 0 && options.synthetic_epochs > 0 && options.synthetic_max_requests > 0 &&
             options.epoch.count() > 0);
  std::vector<EpochSample> out;
  const auto sweep = synthetic_sweep(options.synthetic, options.synthetic_sets, rng);
  for (const SyntheticOptions& o : sweep) {
    LocalityTracker tracker(options.epoch);
    SyntheticWorkload w(o, 0);
    Nanos t{0};
    uint64_t head = 0;
    const Nanos span = options.epoch * options.synthetic_epochs;
    for (int r = 0; r < options.synthetic_max_requests && t < span; ++r) {
      for (const SyntheticRequest& piece : split(w.next(rng), o.max_request_bytes)) {
        const uint64_t distance = piece.lba >= head ? piece.lba - head : head - piece.lba;
        const Nanos took = std::max(Nanos(1), disk.service(distance, piece.length));
        head = piece.lba + piece.length;
        tracker.record("synthetic", piece.lba, piece.length, t, t + took);
        t += took;
      }
    }
    for (EpochSample& e : tracker.close(t + options.epoch)) out.push_back(std::move(e));
  }
  return out;
}

Result<Trained> train(const Profile& profile, Nanos required, const DiskCost& disk, const TrainOptions& options,
                      std::mt19937_64& rng) {
  if (!profile.ended()) return Status(Errc::invalid_argument, "the profiling run has not ended");
  if (!(disk.bytes_per_s > 0) || disk.seek.count() < 0)
    return Status(Errc::invalid_argument, "the disk estimate needs a throughput > 0 and a seek >= 0");
  if (options.synthetic_sets <= 0 || options.synthetic_epochs <= 0 || options.synthetic_max_requests <= 0 ||
      options.epoch.count() <= 0)
    return Status(Errc::invalid_argument, "need synthetic sets, epochs and requests > 0, epoch > 0");
  if (Status st = validate(options.synthetic); !st.ok()) return st;
  auto a = alpha(required, profile.total(), profile.comp());
  if (!a) return a.status();
  Trained out;
  std::vector<Sample> samples;
  const std::map<uint32_t, double> busy = busy_fractions(profile);
  for (const ProfileEpoch& r : profile.epochs) {
    const double b = r.throughput();
    if (b <= 0) continue;
    samples.push_back({{r.avg_dist_bytes, r.avg_size_bytes}, b * busy.at(r.server) / *a});
  }
  out.profile_samples = samples.size();
  if (out.profile_samples < static_cast<size_t>(std::max(options.grow.folds, 1)))
    return Status(Errc::invalid_argument,
                  "the profile has " + std::to_string(out.profile_samples) +
                      " usable record(s), fewer than the cross-validation's folds: profile a longer run");
  for (const EpochSample& e : synthetic_epochs(disk, options, rng)) {
    const double b = e.throughput();
    if (b <= 0) continue;
    samples.push_back({{e.avg_dist_bytes, e.avg_size_bytes}, b / *a});
  }
  out.synthetic_samples = samples.size() - out.profile_samples;
  auto grown = grow(samples, options.grow);
  if (!grown) return grown.status();
  out.met = grown->met;
  Model& m = out.model;
  m.job = profile.job;
  m.alpha = *a;
  m.profile = profile.total();
  m.comp = profile.comp();
  m.epoch = options.epoch;
  m.bytes = profile.bytes;
  m.cv_error = grown->cv_error;
  m.tree = std::move(grown->tree);
  return out;
}

Result<double> rescale(const Model& model, double bound, Nanos required) {
  auto a = alpha(required, model.profile, model.comp);
  if (!a) return a.status();
  return bound * model.alpha / *a;
}

}  // namespace pvfs::qos
