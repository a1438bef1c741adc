// Unit tests of shared/metrics: the Prometheus text renderer and reader,
// RequestStats' percentiles and families, setting the log level by name
// (shared/log_level), and the /metrics HTTP responder's answers
// (shared/rpc/metrics_http, without sockets).
#include <chrono>
#include <cmath>
#include <string>

#include <doctest/doctest.h>
#include <spdlog/spdlog.h>

#include "shared/log_level.h"
#include "shared/metrics/metrics.h"
#include "shared/metrics/prometheus.h"
#include "shared/metrics/request_stats.h"
#include "shared/rpc/metrics_http.h"

namespace pvfs::metrics {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

}  // namespace

TEST_CASE("a counter renders as HELP, TYPE and one line per sample") {
  Families f;
  Family requests = make_family("pvfs_server_requests_total", "Requests served.", Type::counter);
  requests.samples.push_back({{{"type", "write"}}, 42, {}});
  requests.samples.push_back({{{"type", "read"}, {"class", "normal"}}, 7, {}});
  f.push_back(requests);
  add_single(f, "pvfs_server_load_bytes", "Bytes outstanding.", Type::gauge, 1048576);
  CHECK(render_prometheus(f) ==
        "# HELP pvfs_server_requests_total Requests served.\n"
        "# TYPE pvfs_server_requests_total counter\n"
        "pvfs_server_requests_total{type=\"write\"} 42\n"
        "pvfs_server_requests_total{type=\"read\",class=\"normal\"} 7\n"
        "# HELP pvfs_server_load_bytes Bytes outstanding.\n"
        "# TYPE pvfs_server_load_bytes gauge\n"
        "pvfs_server_load_bytes 1048576\n");
}

TEST_CASE("label values escape backslash, quote and newline; help escapes backslash and newline") {
  Families f;
  Family jobs = make_family("pvfs_job_requests_total", "Per job \\ \"quoted\"\nsecond line", Type::counter);
  jobs.samples.push_back({{{"job", "a\\b\"c\nd"}}, 1, {}});
  f.push_back(jobs);
  const std::string text = render_prometheus(f);
  CHECK(text ==
        "# HELP pvfs_job_requests_total Per job \\\\ \"quoted\"\\nsecond line\n"
        "# TYPE pvfs_job_requests_total counter\n"
        "pvfs_job_requests_total{job=\"a\\\\b\\\"c\\nd\"} 1\n");
  auto back = parse_prometheus(text);
  REQUIRE(back.ok());
  CHECK(*back == f);
}

TEST_CASE("a summary renders its quantiles, then _sum and _count with the family's name") {
  Families f;
  Family latency = make_family("pvfs_mds_request_latency_seconds", "Latency.", Type::summary);
  latency.samples.push_back({{{"type", "lookup"}, {"quantile", "0.5"}}, 0.000125, {}});
  latency.samples.push_back({{{"type", "lookup"}, {"quantile", "0.99"}}, 0.002, {}});
  latency.samples.push_back({{{"type", "lookup"}}, 1.5, "_sum"});
  latency.samples.push_back({{{"type", "lookup"}}, 1000, "_count"});
  f.push_back(latency);
  const std::string text = render_prometheus(f);
  CHECK(text ==
        "# HELP pvfs_mds_request_latency_seconds Latency.\n"
        "# TYPE pvfs_mds_request_latency_seconds summary\n"
        "pvfs_mds_request_latency_seconds{type=\"lookup\",quantile=\"0.5\"} 0.000125\n"
        "pvfs_mds_request_latency_seconds{type=\"lookup\",quantile=\"0.99\"} 0.002\n"
        "pvfs_mds_request_latency_seconds_sum{type=\"lookup\"} 1.5\n"
        "pvfs_mds_request_latency_seconds_count{type=\"lookup\"} 1000\n");
  auto back = parse_prometheus(text);
  REQUIRE(back.ok());
  CHECK(*back == f);
}

TEST_CASE("families without samples are left out, and special values print as Prometheus spells them") {
  Families f;
  f.push_back(make_family("pvfs_empty", "Nothing yet.", Type::counter));
  add_single(f, "pvfs_nan", "n", Type::gauge, std::nan(""));
  add_single(f, "pvfs_inf", "i", Type::gauge, HUGE_VAL);
  add_single(f, "pvfs_big", "b", Type::counter, 12345678901234.0);
  const std::string text = render_prometheus(f);
  CHECK(text.find("pvfs_empty") == std::string::npos);
  CHECK(text.find("pvfs_nan NaN\n") != std::string::npos);
  CHECK(text.find("pvfs_inf +Inf\n") != std::string::npos);
  CHECK(text.find("pvfs_big 12345678901234\n") != std::string::npos);
  CHECK(render_prometheus({}).empty());
}

TEST_CASE("the reader names the line of a malformed sample") {
  auto bad = parse_prometheus("# TYPE x counter\nx{a=\"1\" 3\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().detail().find("line 2") != std::string::npos);
  auto value = parse_prometheus("x twelve\n");
  REQUIRE_FALSE(value.ok());
  CHECK(value.status().detail().find("line 1") != std::string::npos);
  auto timestamped = parse_prometheus("# TYPE y gauge\ny 3 1700000000000\n");
  REQUIRE(timestamped.ok());
  CHECK(sum(*timestamped, "y") == 3);
}

TEST_CASE("latency percentiles are never below the true value and less than twice it") {
  LatencyBuckets b;
  CHECK(b.quantile_seconds(0.5) == 0);
  // 98 fast requests of 100 us, 2 slow ones of 30 ms.
  for (int i = 0; i < 98; ++i) b.add(microseconds(100));
  b.add(milliseconds(30));
  b.add(milliseconds(30));
  const double p50 = b.quantile_seconds(0.5), p99 = b.quantile_seconds(0.99);
  CHECK(p50 >= 100e-6);
  CHECK(p50 < 200e-6);
  CHECK(p99 >= 30e-3);
  CHECK(p99 <= 30e-3);  // capped at the largest latency seen
  CHECK(b.count() == 100);
  CHECK(b.sum_seconds() == doctest::Approx(98 * 100e-6 + 2 * 30e-3));
}

TEST_CASE("RequestStats counts requests, errors and bytes per type and shows only types seen") {
  RequestStats stats({"write", "read", "status"});
  stats.record(0, false, 65536, 0, microseconds(500));
  stats.record(0, false, 65536, 0, microseconds(700));
  stats.record(1, true, 0, 0, microseconds(50));
  stats.record(1, false, 0, 4096, microseconds(60));
  stats.record(99, false, 0, 0, microseconds(10));  // a newer request type
  CHECK(stats.total() == 5);
  Families f;
  stats.append_to(f, "pvfs_server");
  CHECK(sum(f, "pvfs_server_requests_total", {{"type", "write"}}) == 2);
  CHECK(sum(f, "pvfs_server_requests_total", {{"type", "other"}}) == 1);
  CHECK(sum(f, "pvfs_server_requests_total") == 5);
  CHECK(sum(f, "pvfs_server_request_errors_total", {{"type", "read"}}) == 1);
  CHECK(sum(f, "pvfs_server_received_bytes_total") == 131072);
  CHECK(sum(f, "pvfs_server_sent_bytes_total", {{"type", "read"}}) == 4096);
  const auto types = by_label(f, "pvfs_server_requests_total", "type");
  REQUIRE(types.size() == 3);  // "status" never arrived
  CHECK(types[0].first == "write");
  const Family* latency = find(f, "pvfs_server_request_latency_seconds");
  REQUIRE(latency);
  CHECK(latency->type == Type::summary);
  double count = 0;
  for (const auto& s : latency->samples)
    if (s.suffix == "_count" && label(s, "type") == "write") count = s.value;
  CHECK(count == 2);
  CHECK(render_prometheus(f).find("pvfs_server_request_latency_seconds_count{type=\"write\"} 2\n") !=
        std::string::npos);
}

TEST_CASE("the log level is set by name, and an unknown name lists the valid ones") {
  auto logger = spdlog::default_logger();
  const auto old = logger->level();
  CHECK(pvfs::set_log_level("debug").ok());
  CHECK(logger->level() == spdlog::level::debug);
  CHECK(pvfs::set_log_level("error").ok());
  CHECK(logger->level() == spdlog::level::err);
  Status bad = pvfs::set_log_level("loud");
  CHECK(bad.code() == Errc::invalid_argument);
  CHECK(bad.detail() == "unknown log level 'loud': use one of trace, debug, info, warn, error, off");
  CHECK(logger->level() == spdlog::level::err);
  logger->set_level(old);
}

TEST_CASE("the HTTP responder serves GET /metrics and refuses everything else without building metrics") {
  int built = 0;
  const rpc::MetricsHttpServer::Source source = [&] {
    ++built;
    Families f;
    add_single(f, "pvfs_up", "Up.", Type::gauge, 1);
    return f;
  };
  const auto ok = rpc::respond("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", true, source);
  CHECK(ok.status == 200);
  CHECK(ok.content_type == kPrometheusContentType);
  CHECK(ok.body == "# HELP pvfs_up Up.\n# TYPE pvfs_up gauge\npvfs_up 1\n");
  CHECK(ok.to_text() ==
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
        "Content-Length: 50\r\nConnection: close\r\n\r\n# HELP pvfs_up Up.\n# TYPE pvfs_up gauge\npvfs_up 1\n");
  CHECK(built == 1);
  CHECK(rpc::respond("GET /metrics?debug=1 HTTP/1.0\r\n\r\n", true, source).status == 200);
  CHECK(built == 2);
  CHECK(rpc::respond("GET / HTTP/1.1\r\n\r\n", true, source).status == 404);
  CHECK(rpc::respond("POST /metrics HTTP/1.1\r\n\r\n", true, source).status == 404);
  CHECK(rpc::respond("GET /metrics/x HTTP/1.1\r\n\r\n", true, source).status == 404);
  CHECK(rpc::respond("GET /metrics\r\n\r\n", true, source).status == 400);
  CHECK(rpc::respond("GET /metrics SPDY/3\r\n\r\n", true, source).status == 400);
  CHECK(rpc::respond("GET /metrics HTTP/1.1\r\nX: aaaa", false, source).status == 400);
  CHECK(rpc::respond("", false, source).status == 400);
  CHECK(built == 2);
}

}  // namespace pvfs::metrics
