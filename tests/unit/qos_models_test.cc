// The QoS profiles and models every metadata member keeps
// (mds/qos_models.h): the text form round-trips bit for bit, a damaged
// file or a damaged embedded model is corrupt with the reason, and the
// file is written and read back.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fstream>
#include <random>

#include "mds/qos_models.h"
#include "tests/support/temp_dir.h"

namespace pvfs::mds {
namespace {

using namespace std::chrono_literals;

QosModels sample_models() {
  QosModels m;
  m.version = 12;
  qos::Profile p;
  p.job = "slurm.77";
  p.share_pct = 60;
  p.start_unix_ms = 1764201600000;
  p.end_unix_ms = 1764201612345;
  p.io = 4'500'000'001ns;
  p.io_source = qos::IoSource::job;
  p.dropped = 3;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 40; ++i)
    qos::add_epochs(p, std::vector<qos::ProfileEpoch>{{static_cast<uint32_t>(i % 2), 1000 + i, 7,
                                                       static_cast<double>(rng() % 100000) / 3.0, 65536.0 / 3.0,
                                                       rng() % 1000000, qos::Nanos(rng() % 100000000)}});
  m.profiles[p.job] = p;
  qos::Profile running;
  running.job = "bench";
  running.start_unix_ms = 1764201700000;
  qos::join_span(running.clients, 0xfedcba9876543210ull, {1'500, 2'000'000'000});
  qos::join_span(running.clients, 7, {0, 40});
  m.profiles[running.job] = running;
  QosModelEntry e;
  e.revision = 11;
  e.samples = 340;
  e.profile_samples = 40;
  e.required_ns = 30'000'000'000;
  e.trained_unix_ms = 1764201620000;
  e.met = true;
  e.model.job = "slurm.77";
  e.model.alpha = 2.75;
  e.model.profile = 12'345ms;
  e.model.comp = 7'845'000'000ns;
  e.model.epoch = 100ms;
  e.model.bytes = 1 << 30;
  e.model.cv_error = 0.0625;
  std::vector<qos::Sample> s;
  for (int i = 0; i < 200; ++i) {
    const double d = static_cast<double>(rng() % 1000000), z = 4096.0 * static_cast<double>(1 + rng() % 32);
    s.push_back({{d, z}, z / (d > 0 ? 0.01 : 0.0001)});
  }
  e.model.tree = qos::grow(s, {}).value().tree;
  m.models["slurm.77"] = e;
  return m;
}

}  // namespace

TEST_CASE("QoS profiles and models round-trip through their text form bit for bit") {
  const QosModels m = sample_models();
  const std::string text = serialize(m);
  auto back = parse_models(text);
  REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  CHECK(back->version == 12);
  CHECK(back->profiles == m.profiles);
  REQUIRE(back->models.size() == 1);
  const auto& e = back->models.at("slurm.77");
  CHECK(e.revision == 11);
  CHECK(e.samples == 340);
  CHECK(e.profile_samples == 40);
  CHECK(e.required_ns == 30'000'000'000);
  CHECK(e.met);
  CHECK(qos::serialize(e.model) == qos::serialize(m.models.at("slurm.77").model));
  CHECK(serialize(*back) == text);
  auto empty = parse_models(serialize(QosModels{}));
  REQUIRE(empty.ok());
  CHECK(empty->version == 0);
  CHECK(empty->profiles.empty());
}

TEST_CASE("a file from before clients timed a job's I/O still reads, with no clients") {
  QosModels m = sample_models();
  m.profiles.erase("bench");
  std::string body = serialize(m);
  body = body.substr(0, body.rfind("checksum "));
  // The profile line as it was written then: no client count at the end.
  const size_t line = body.find("profile slurm.77 ");
  const size_t eol = body.find('\n', line);
  REQUIRE(body.substr(eol - 2, 2) == " 0");
  body.erase(eol - 2, 2);
  auto old = parse_models(body + fmt::format("checksum {:016x}\n", qos::text_checksum(body)));
  REQUIRE_MESSAGE(old.ok(), old.status().to_string());
  CHECK(old->profiles == m.profiles);
  CHECK(old->profiles.at("slurm.77").io_source == qos::IoSource::job);
}

TEST_CASE("damaged QoS models are corrupt, naming what is wrong") {
  const std::string text = serialize(sample_models());
  auto truncated = parse_models(text.substr(0, text.size() / 2));
  CHECK(truncated.code() == Errc::corrupt);
  std::string edited = text;
  edited[edited.find("alpha 2.75") + 6] = '3';
  auto changed = parse_models(edited);
  CHECK(changed.code() == Errc::corrupt);
  CHECK(changed.status().detail().find("checksum mismatch") != std::string::npos);
  CHECK(parse_models("").code() == Errc::corrupt);
  // The embedded model file damaged under a consistent outer checksum: its
  // own checksum names it.
  QosModels m = sample_models();
  std::string inner = qos::serialize(m.models.at("slurm.77").model);
  std::string body = text.substr(0, text.rfind("checksum "));
  const size_t at = body.find("alpha 2.75");
  body[at + 6] = '3';
  char hex[17];
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : body) h = (h ^ c) * 0x100000001b3ull;
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  auto inner_bad = parse_models(body + "checksum " + hex + "\n");
  CHECK(inner_bad.code() == Errc::corrupt);
  CHECK(inner_bad.status().detail().find("the model of job slurm.77") != std::string::npos);
  CHECK(inner_bad.status().detail().find("checksum mismatch") != std::string::npos);
}

TEST_CASE("QoS models saved to a file read back; no file is none; a damaged file is corrupt with its path") {
  test::TempDir dir;
  const auto path = dir.path() / "qos-models";
  auto absent = load_models(path);
  REQUIRE(absent.ok());
  CHECK(absent->version == 0);
  REQUIRE(save_models(path, sample_models()).ok());
  auto loaded = load_models(path);
  REQUIRE(loaded.ok());
  CHECK(serialize(*loaded) == serialize(sample_models()));
  {
    std::ofstream out(path, std::ios::app);
    out << "junk\n";
  }
  auto damaged = load_models(path);
  CHECK(damaged.code() == Errc::corrupt);
  CHECK(damaged.status().detail().find(path.string()) != std::string::npos);
}

}  // namespace pvfs::mds
