#include "shared/metrics/request_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace pvfs::metrics {

void LatencyBuckets::add(std::chrono::nanoseconds latency) {
  const int64_t ns = std::max<int64_t>(0, latency.count());
  const uint64_t us = (static_cast<uint64_t>(ns) + 999) / 1000;  // rounded up: a bucket's bound is never low
  const size_t k = us <= 1 ? 0 : std::min<size_t>(kBuckets - 1, std::bit_width(us - 1));
  ++buckets_[k];
  ++count_;
  sum_ns_ += static_cast<double>(ns);
  max_ns_ = std::max(max_ns_, ns);
}

double LatencyBuckets::quantile_of(const std::array<uint64_t, kBuckets>& counts, double q) {
  uint64_t total = 0;
  for (uint64_t n : counts) total += n;
  if (total == 0) return 0;
  // The rank of the q-quantile among the samples, counted from 1.
  const uint64_t rank =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(total) - 1e-9)));
  uint64_t seen = 0;
  size_t k = 0;
  for (; k + 1 < kBuckets; ++k) {
    seen += counts[k];
    if (seen >= rank) break;
  }
  return static_cast<double>(uint64_t{1} << k) / 1e6;
}

double LatencyBuckets::quantile_seconds(double q) const {
  if (count_ == 0) return 0;
  return std::min(quantile_of(buckets_, q), static_cast<double>(max_ns_) / 1e9);
}

RequestStats::RequestStats(std::vector<std::string> type_names) : names_(std::move(type_names)) {
  names_.push_back("other");
  types_.resize(names_.size());
}

void RequestStats::record(size_t type, bool failed, uint64_t bytes_in, uint64_t bytes_out,
                          std::chrono::nanoseconds latency) {
  PerType& t = types_[std::min(type, types_.size() - 1)];
  ++t.requests;
  t.errors += failed ? 1 : 0;
  t.bytes_in += bytes_in;
  t.bytes_out += bytes_out;
  t.latency.add(latency);
  ++total_;
}

void RequestStats::append_to(Families& out, const std::string& prefix) const {
  Family requests = make_family(prefix + "_requests_total", "Requests served, by request type.",
                                Type::counter);
  Family errors = make_family(prefix + "_request_errors_total",
                              "Requests answered with an error, by request type.", Type::counter);
  Family in = make_family(prefix + "_received_bytes_total",
                          "Bulk data bytes received with requests (file data written), by request type.",
                          Type::counter);
  Family sent = make_family(prefix + "_sent_bytes_total",
                            "Bulk data bytes sent in replies (file data read), by request type.",
                            Type::counter);
  Family latency = make_family(prefix + "_request_latency_seconds",
                               "Time from a request's arrival to its reply, by request type.",
                               Type::summary);
  for (size_t i = 0; i < types_.size(); ++i) {
    const PerType& t = types_[i];
    if (t.requests == 0) continue;
    const std::vector<Label> type{{"type", names_[i]}};
    requests.samples.push_back({type, static_cast<double>(t.requests), {}});
    errors.samples.push_back({type, static_cast<double>(t.errors), {}});
    in.samples.push_back({type, static_cast<double>(t.bytes_in), {}});
    sent.samples.push_back({type, static_cast<double>(t.bytes_out), {}});
    for (const char* q : {"0.5", "0.99"}) {
      auto labels = type;
      labels.push_back({"quantile", q});
      latency.samples.push_back({labels, t.latency.quantile_seconds(std::stod(q)), {}});
    }
    latency.samples.push_back({type, t.latency.sum_seconds(), "_sum"});
    latency.samples.push_back({type, static_cast<double>(t.latency.count()), "_count"});
  }
  for (auto* f : {&requests, &errors, &in, &sent, &latency}) out.push_back(std::move(*f));
}

}  // namespace pvfs::metrics
