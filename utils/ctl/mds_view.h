// The text side of pvfs-ctl mds: combines what the members of an MDS
// cluster answered (utils/common/mds_status.h) into one report -- the map with
// each member's share and regions, the members with their last interval,
// the delegate's tuning steps, the file set moves of every member -- and
// renders it as tables or JSON. Pure functions over plain values (no I/O,
// no clock; times print in UTC); thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shared/status.h"
#include "utils/ctl/ctl_format.h"
#include "utils/common/mds_status.h"

namespace pvfs::ctl {

// One member of the config and what it answered (an error when it did not).
struct MdsAnswer {
  DaemonTarget target;
  Result<MdsClusterView> view;
};

struct MdsRegion {
  double begin = 0, end = 0;  // [begin, end) fractions of the unit interval
};

// One row of the members table: a member of the shown view, or a member of
// the config the view does not list.
struct MdsRow {
  uint32_t id = 0;
  std::string address;
  // "up": answered and counted alive by the view; "fenced": the same, but
  // it says it holds no lease and serves nothing; "failed": answered, but
  // the view counts it failed (or does not list it); "down": did not answer
  // (or, for a member not in the config, the view counts it failed).
  std::string state;
  bool in_view = false;  // `member` holds the view's entry, with the
  MdsMemberView member;  // slowdown the member itself reported (0: unknown)
  double share = 0;      // of the mapped half, from the map (or the entry)
  std::vector<MdsRegion> regions;
};

struct MdsAsked {
  std::string name;     // "mds0"
  std::string address;
  bool answered = false;
  std::string error;    // why not
};

struct MdsReport {
  std::vector<MdsAsked> asked;  // config order
  std::optional<uint32_t> view_of;  // the member whose view is shown; none: nobody answered
  uint32_t delegate = 0;
  std::string placement;
  std::string map_text;
  uint64_t map_version = 0;
  uint32_t partitions = 0, rounds = 0;
  std::string map_error;  // the map did not parse (the rows then carry no regions)
  std::vector<MdsRow> rows;          // by id
  std::vector<MdsTuningStep> history;  // oldest first
  std::vector<MdsMove> moves;          // every member's, oldest first, without repeats
};

// The answer whose view is shown: from a member that is the delegate in its
// own view, else any; among those the newest map (then the lowest id).
// nullopt when nobody answered. An unreadable map counts as version 0.
std::optional<size_t> pick_view(const std::vector<MdsAnswer>& answers);

// Combines the answers (config order) into one report: the shown view's
// map, members and placement (each member's slowdown from its own answer,
// since members report only their own); the tuning history of the answer with the
// most recent step; the moves of all answers, merged by time, a move
// reported by both its ends counted once (the receiver's record, which
// names no sender, is left out when the sender's is there).
MdsReport build_mds_report(const std::vector<MdsAnswer>& answers);

// The report as text: a summary line (members, delegate, placement, map
// version and partitions, whose view), the members table (MDS, ADDRESS, STATE, SLOWDOWN, FILESETS,
// LATENCY, REQUESTS, SHARE, REGIONS), with `verbose` each member's file set
// ids, then the last `max_steps` tuning steps (TIME, MAP, AVERAGE, MDS,
// LATENCY, DECISION, SHARE old->new; one row per server) and the last
// `max_moves` moves (TIME, SET, FROM, TO, BYTES, DURATION, OUTCOME).
// Empty when nobody answered (the caller says so); else ends with a newline.
std::string render_mds(const MdsReport& report, bool verbose, size_t max_steps = 5, size_t max_moves = 20);

// The report as one JSON object: view_of, delegate, placement, map
// {version, partitions, rounds, text, error}, asked [{name, address,
// answered, error}], members [{id, name, address, state, alive, slowdown,
// share, regions [[begin, end]...], file_sets [...], interval {seq,
// latency_ms, requests}}], history [{at_unix_ms, average_ms, map_version,
// servers [{server, latency_ms, decision, old_share, new_share}]}], moves
// [{set, from, to, at_unix_ms, bytes, duration_ms, outcome}] -- all of the
// history and moves. Absent values are null. Ends with a newline.
std::string render_mds_json(const MdsReport& report);

// "HH:MM:SS" (UTC) of a Unix time in milliseconds.
std::string utc_clock(int64_t unix_ms);

}  // namespace pvfs::ctl
