// The QoS goals every metadata member keeps (mds/qos_goals.h): their text
// form round-trips, damage is refused naming what is wrong, and the file
// is written and read back.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fstream>

#include "mds/qos_goals.h"
#include "tests/support/temp_dir.h"

namespace pvfs::mds {
namespace {

QosGoals sample_goals() {
  QosGoals g;
  g.version = 7;
  g.policy = "ushape";
  g.goals["jobA"] = {"jobA", 600000, 0, 64 << 20, 6};
  g.goals["slurm.1234"] = {"slurm.1234", 90000, 1764201600000, 0, 3};
  return g;
}

// The text form's checksum (FNV-1a 64), for hand-written texts.
std::string with_checksum(const std::string& body) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : body) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return body + fmt::format("checksum {:016x}\n", h);
}

}  // namespace

TEST_CASE("QoS goals round-trip through their text form") {
  const QosGoals g = sample_goals();
  auto back = parse_goals(serialize(g));
  REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  CHECK(*back == g);
  QosGoals empty;
  auto none = parse_goals(serialize(empty));
  REQUIRE(none.ok());
  CHECK(none->policy.empty());
  CHECK(none->goals.empty());
}

TEST_CASE("goals saved before goals had ids read back, with id 0; the current form needs the id") {
  auto old = parse_goals(with_checksum("pvfs-qos-goals 1\nversion 4\npolicy -\ngoal jobA 600000 0 1024\n"));
  REQUIRE_MESSAGE(old.ok(), old.status().to_string());
  REQUIRE(old->goals.contains("jobA"));
  CHECK(old->goals.at("jobA") == QosGoal{"jobA", 600000, 0, 1024, 0});
  CHECK(parse_goals(with_checksum("pvfs-qos-goals 2\nversion 4\npolicy -\ngoal jobA 600000 0 1024\n")).code() ==
        Errc::corrupt);
  CHECK(serialize(*old).find("goal jobA 600000 0 1024 0\n") != std::string::npos);
}

TEST_CASE("a damaged QoS goals text is corrupt, naming what is wrong") {
  const std::string text = serialize(sample_goals());
  auto truncated = parse_goals(text.substr(0, text.size() / 2));
  CHECK(truncated.code() == Errc::corrupt);
  CHECK(truncated.status().detail().find("checksum") != std::string::npos);
  std::string edited = text;
  edited[edited.find("600000")] = '9';
  auto changed = parse_goals(edited);
  CHECK(changed.code() == Errc::corrupt);
  CHECK(changed.status().detail().find("checksum mismatch") != std::string::npos);
  CHECK(parse_goals("").code() == Errc::corrupt);
}

TEST_CASE("job ids that cannot name a goal are refused with the reason") {
  CHECK(check_goal_job("").code() == Errc::invalid_argument);
  CHECK(check_goal_job("a b").detail().find("whitespace") != std::string::npos);
  CHECK(check_goal_job(std::string(65, 'x')).code() == Errc::invalid_argument);
  CHECK(check_goal_job("job.42").ok());
}

TEST_CASE("QoS goals saved to a file read back; no file is no goals; a damaged file is corrupt") {
  test::TempDir dir;
  const auto path = dir.path() / "qos-goals";
  auto absent = load_goals(path);
  REQUIRE(absent.ok());
  CHECK(absent->version == 0);
  REQUIRE(save_goals(path, sample_goals()).ok());
  auto loaded = load_goals(path);
  REQUIRE(loaded.ok());
  CHECK(*loaded == sample_goals());
  {
    std::ofstream out(path, std::ios::app);
    out << "goal extra 1 0 0\n";
  }
  auto damaged = load_goals(path);
  CHECK(damaged.code() == Errc::corrupt);
  CHECK(damaged.status().detail().find(path.string()) != std::string::npos);
}

}  // namespace pvfs::mds
