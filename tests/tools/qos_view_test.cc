// pvfs-ctl qos's pure parts (utils/ctl/qos_view.h): durations and start
// times as users type them, and the status rendering.
#include <doctest/doctest.h>

#include "utils/ctl/qos_view.h"

namespace pvfs::qos_view_test {

using std::chrono::milliseconds;

TEST_CASE("qos durations read as users write them, and anything else is refused saying how to write one") {
  CHECK(parse_qos_duration("90s").value() == milliseconds(90000));
  CHECK(parse_qos_duration("10m").value() == milliseconds(600000));
  CHECK(parse_qos_duration("1h30m").value() == milliseconds(5400000));
  CHECK(parse_qos_duration("500ms").value() == milliseconds(500));
  CHECK(parse_qos_duration("120").value() == milliseconds(120000));
  for (const char* bad : {"", "0", "0s", "10x", "m", "-5s", "1.5h", "99999999999s"}) {
    auto r = parse_qos_duration(bad);
    CHECK_MESSAGE(r.code() == Errc::invalid_argument, bad);
    CHECK(r.status().detail().find("90s, 10m") != std::string::npos);
  }
}

TEST_CASE("qos start times: now, relative, seconds since 1970 and UTC dates") {
  const int64_t now = 1'764'201'600'000;  // 2025-11-27T00:00:00Z
  CHECK(parse_qos_start("now", now).value() == now);
  CHECK(parse_qos_start("+30s", now).value() == now + 30000);
  CHECK(parse_qos_start("1764201600", now).value() == now);
  CHECK(parse_qos_start("2025-11-27T00:00:00Z", now).value() == now);
  CHECK(parse_qos_start("2025-11-27T00:01:00", now).value() == now + 60000);
  CHECK(parse_qos_start("tomorrow", now).code() == Errc::invalid_argument);
  CHECK(parse_qos_start("+", now).code() == Errc::invalid_argument);
}

TEST_CASE("qos status marks a job behind its goal and says where its bound comes from") {
  QosView v;
  v.delegate = 1;
  v.policy = "ushape";
  v.period_ms = 1000;
  v.epoch_ms = 100;
  v.replicas = 3;
  QosJobRow late;
  late.job = "late";
  late.runtime_ms = 60000;
  late.start_unix_ms = 1;
  late.elapsed_ms = 50000;
  late.projected_ms = 80000;
  late.bound_bps = 1 << 20;
  late.bound_source = "average (no model)";
  late.behind = true;
  v.jobs.push_back(late);
  const std::string out = render_qos_status(v);
  CHECK(out.find("policy ushape") != std::string::npos);
  CHECK(out.find("held by 3 member(s)") != std::string::npos);
  CHECK(out.find("average (no model)") != std::string::npos);
  CHECK(out.find("BEHIND") != std::string::npos);
  CHECK(render_qos_json(v).find("\"behind\":true") != std::string::npos);
  CHECK(render_qos_list(QosView{}) == "no QoS goals\n");
}

TEST_CASE("qos status says which windows a job has because it fell behind in the shared one") {
  QosView v;
  v.policy = "ushape";
  QosJobRow own, promoted, shared;
  own.job = "seq";
  own.dedicated = true;
  own.window_ms = 300;
  promoted.job = "scattered";
  promoted.dedicated = true;
  promoted.promoted = true;
  promoted.window_ms = 450;
  shared.job = "light";
  v.jobs = {own, promoted, shared};
  const std::string out = render_qos_status(v);
  CHECK(out.find("300 ms ") != std::string::npos);
  CHECK(out.find("450 ms (was behind in shared)") != std::string::npos);
  CHECK(out.find("300 ms (was behind") == std::string::npos);
  CHECK(out.find("shared") != std::string::npos);
  const std::string json = render_qos_json(v);
  CHECK(json.find(R"("job":"scattered")") < json.find(R"("promoted":true)"));
  CHECK(json.find(R"("job":"seq")") < json.find(R"("promoted":false)"));
}

TEST_CASE("qos status says whether a finished job met its goal, not that it is behind") {
  QosView v;
  v.policy = "average";
  QosJobRow met;
  met.job = "met-job";
  met.runtime_ms = 60000;
  met.start_unix_ms = 1;
  met.elapsed_ms = met.projected_ms = met.done_ms = 42000;
  QosJobRow missed = met;
  missed.job = "missed-job";
  missed.elapsed_ms = missed.projected_ms = missed.done_ms = 75000;
  v.jobs = {met, missed};
  const std::string out = render_qos_status(v);
  CAPTURE(out);
  CHECK(out.find("BEHIND") == std::string::npos);
  CHECK(qos_verdict(met) == "met");
  CHECK(qos_verdict(missed) == "MISSED");
  auto line_of = [&](std::string_view job) {
    const size_t at = out.find(job);
    REQUIRE(at != std::string::npos);
    std::string line = out.substr(at, out.find('\n', at) - at);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
  };
  CHECK(line_of("met-job").ends_with(" met"));
  CHECK(line_of("missed-job").ends_with(" MISSED"));
  CHECK(render_qos_json(v).find("\"done_ms\":42000") != std::string::npos);
}

TEST_CASE("qos show prints a job's profile and model: revision, depth, leaves, CV error, training set") {
  QosModelView v;
  v.job = "J";
  v.version = 9;
  v.replicas = 3;
  v.has_profile = true;
  v.share_pct = 100;
  v.profile_ns = 12'500'000'000;
  v.comp_ns = 2'000'000'000;
  v.records = 240;
  v.profile_bytes = 1 << 30;
  const std::string bare = render_qos_model(v);
  CHECK(bare.find("T_profile 12.50 s, T_comp 2.00 s (I/O time of the busiest server)") != std::string::npos);
  CHECK(bare.find("model: none (pvfs-ctl qos train J)") != std::string::npos);
  v.has_model = true;
  v.revision = 9;
  v.format_version = 1;
  v.depth = 6;
  v.leaves = 31;
  v.nodes = 61;
  v.cv_error = 0.0812;
  v.met = true;
  v.samples = 900;
  v.profile_samples = 240;
  v.alpha = 2.5;
  v.required_ns = 30'000'000'000;
  const std::string out = render_qos_model(v);
  CHECK(out.find("model: revision 9, file format version 1, depth 6, 31 leaves (61 nodes)") != std::string::npos);
  CHECK(out.find("CV error 0.081 (under the threshold), training set 900 samples (240 from the profile, 660 "
                 "synthetic)") != std::string::npos);
  CHECK(out.find("alpha 2.500") != std::string::npos);
  v.met = false;
  CHECK(render_qos_model(v).find("NOT under") != std::string::npos);
  const std::string json = render_qos_model_json(v);
  CHECK(json.find("\"depth\":6,\"leaves\":31") != std::string::npos);
  CHECK(json.find("\"samples\":900") != std::string::npos);
  v.profiling = true;
  CHECK(render_qos_model(v).find("profile: running since") != std::string::npos);
}

}  // namespace pvfs::qos_view_test
