#include "utils/ctl/mds_view.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "policy/placement/anu_map.h"
#include "shared/text_format.h"

namespace pvfs::ctl {

namespace {

std::string member_name(uint32_t id) { return id == kUnknownMember ? "?" : fmt::format("mds{}", id); }

// A receiver's and a sender's record of one shipment are this close in time.
constexpr int64_t kSameMoveMs = 10000;

uint64_t map_version_of(const std::string& text) {
  auto map = placement::AnuMap::parse(text);
  return map ? map->version() : 0;
}

// A mean latency as people read it; "-" for an interval without requests.
std::string latency_cell(double ms, uint64_t requests) {
  if (requests == 0 || !std::isfinite(ms)) return "-";
  return human_micros(static_cast<uint64_t>(std::llround(std::max(ms, 0.0) * 1000.0)));
}

// "-" for 0: a member that served nothing.
std::string latency_cell(double ms) {
  if (!std::isfinite(ms) || ms <= 0) return "-";
  return human_micros(static_cast<uint64_t>(std::llround(std::max(ms, 0.0) * 1000.0)));
}

std::string share_cell(double share) { return fmt::format("{:.3f}", share); }

// 0: not known (members report only their own); 1: not slowed.
std::string slowdown_cell(double factor) {
  if (factor <= 0 || !std::isfinite(factor)) return "?";
  if (!(factor > 1.0)) return "-";
  return fmt::format("{:g}x", factor);
}

std::string regions_cell(const std::vector<MdsRegion>& regions) {
  if (regions.empty()) return "-";
  std::string out;
  for (const auto& r : regions) out += fmt::format("{}[{:.3f},{:.3f})", out.empty() ? "" : " ", r.begin, r.end);
  return out;
}

std::string id_list(const std::vector<uint16_t>& ids, const char* separator) {
  std::string out;
  for (uint16_t id : ids) out += fmt::format("{}{}", out.empty() ? "" : separator, id);
  return out;
}

// The tail of `items` of at most `max`, and how many were left out.
template <typename T>
std::pair<std::vector<T>, size_t> last(const std::vector<T>& items, size_t max) {
  const size_t skip = items.size() > max ? items.size() - max : 0;
  return {std::vector<T>(items.begin() + static_cast<std::ptrdiff_t>(skip), items.end()), skip};
}

}  // namespace

std::string utc_clock(int64_t unix_ms) {
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000 - (unix_ms % 1000 < 0 ? 1 : 0));
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  return fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::optional<size_t> pick_view(const std::vector<MdsAnswer>& answers) {
  std::optional<size_t> best;
  // Better: the delegate in its own view, then the newer map, then the lower id.
  auto key = [&](size_t i) {
    const MdsClusterView& v = *answers[i].view;
    return std::make_tuple(v.self == v.delegate, map_version_of(v.map), -static_cast<int64_t>(v.self));
  };
  for (size_t i = 0; i < answers.size(); ++i) {
    if (!answers[i].view) continue;
    if (!best || key(i) > key(*best)) best = i;
  }
  return best;
}

MdsReport build_mds_report(const std::vector<MdsAnswer>& answers) {
  MdsReport report;
  for (const auto& a : answers)
    report.asked.push_back({a.target.name, a.target.address.to_string(), a.view.ok(),
                            a.view ? std::string() : a.view.status().to_string()});
  const auto shown = pick_view(answers);
  static const MdsClusterView kNoView;
  const MdsClusterView& view = shown ? *answers[*shown].view : kNoView;
  std::optional<placement::AnuMap> map;
  if (shown) {
    report.view_of = view.self;
    report.delegate = view.delegate;
    report.placement = view.placement;
    report.map_text = view.map;
    if (auto parsed = placement::AnuMap::parse(view.map)) {
      map = std::move(*parsed);
      report.map_version = map->version();
      report.partitions = map->partition_count();
      report.rounds = map->rounds();
    } else {
      report.map_error = parsed.status().to_string();
    }
  }
  std::map<uint32_t, std::vector<MdsRegion>> regions;
  std::map<uint32_t, double> shares;
  if (map && !map->empty())
    for (const auto& r : map->regions()) {
      shares[r.server.value] = r.share;
      for (const auto& i : r.intervals) regions[r.server.value].push_back({i.begin, i.end});
    }

  // Whether each configured member answered us.
  std::map<uint32_t, bool> answered;
  std::map<uint32_t, std::string> configured_address;
  for (const auto& a : answers) {
    answered[a.target.id] = a.view.ok();
    configured_address[a.target.id] = a.target.address.to_string();
  }
  // Each member knows its own slowdown, and its own file sets and interval
  // better than the others (theirs are as of the last heartbeat).
  std::map<uint32_t, MdsMemberView> own;
  std::map<uint32_t, bool> serving;
  for (const auto& a : answers)
    if (a.view) {
      serving[a.view->self] = a.view->serving;
      for (const auto& m : a.view->members)
        if (m.id == a.view->self) own[m.id] = m;
    }
  std::map<uint32_t, MdsRow> rows;
  for (const auto& m : view.members) {
    MdsRow row;
    row.id = m.id;
    row.address = m.address;
    row.in_view = true;
    row.member = m;
    if (auto it = own.find(m.id); it != own.end()) {
      row.member.slowdown = it->second.slowdown;
      row.member.file_sets = it->second.file_sets;
      row.member.interval = it->second.interval;
    }
    row.share = map ? shares[m.id] : m.share;
    if (auto it = regions.find(m.id); it != regions.end()) row.regions = it->second;
    if (auto it = answered.find(m.id); it == answered.end()) row.state = m.alive ? "up" : "down";
    else row.state = !it->second ? "down" : m.alive ? "up" : "failed";
    if (row.state == "up" && serving.count(m.id) && !serving[m.id]) row.state = "fenced";
    rows[m.id] = std::move(row);
  }
  for (const auto& [id, ok] : answered) {
    if (rows.count(id)) continue;
    MdsRow row;
    row.id = id;
    row.address = configured_address[id];
    row.state = ok ? "failed" : "down";
    rows[id] = std::move(row);
  }
  for (auto& [id, row] : rows) report.rows.push_back(std::move(row));

  // History: the answer whose last step is the most recent (the delegate's,
  // unless it has just changed).
  const MdsClusterView* history_from = nullptr;
  for (const auto& a : answers) {
    if (!a.view || a.view->history.empty()) continue;
    const auto key = std::make_pair(a.view->history.back().at_unix_ms, a.view->history.size());
    if (!history_from ||
        key > std::make_pair(history_from->history.back().at_unix_ms, history_from->history.size()))
      history_from = &*a.view;
  }
  if (history_from) report.history = history_from->history;

  std::vector<MdsMove> all;
  for (const auto& a : answers)
    if (a.view) all.insert(all.end(), a.view->moves.begin(), a.view->moves.end());
  for (const auto& m : all) {
    const bool seen = std::any_of(report.moves.begin(), report.moves.end(), [&](const MdsMove& o) {
      return o.set == m.set && o.from == m.from && o.to == m.to && o.at_unix_ms == m.at_unix_ms;
    });
    // The receiver of a shipment does not know the sender: its record is
    // left out when the sender reported the same move.
    const bool sender_said = m.from == kUnknownMember &&
                             std::any_of(all.begin(), all.end(), [&](const MdsMove& o) {
                               return o.from != kUnknownMember && o.set == m.set && o.to == m.to &&
                                      std::llabs(o.at_unix_ms - m.at_unix_ms) <= kSameMoveMs;
                             });
    if (!seen && !sender_said) report.moves.push_back(m);
  }
  std::stable_sort(report.moves.begin(), report.moves.end(), [](const MdsMove& a, const MdsMove& b) {
    return std::tie(a.at_unix_ms, a.set) < std::tie(b.at_unix_ms, b.set);
  });
  return report;
}

std::string render_mds(const MdsReport& report, bool verbose, size_t max_steps, size_t max_moves) {
  if (!report.view_of) return {};
  std::string out = fmt::format("MDS cluster: {} member(s), delegate {}, placement {}, ", report.rows.size(),
                                member_name(report.delegate), report.placement.empty() ? "?" : report.placement);
  if (report.map_error.empty())
    out += fmt::format("map version {} ({} partitions)", report.map_version, report.partitions);
  else
    out += fmt::format("unreadable map ({})", report.map_error);
  out += fmt::format("; as {} sees it\n", member_name(*report.view_of));

  std::vector<std::vector<std::string>> rows = {
      {"MDS", "ADDRESS", "STATE", "SLOWDOWN", "FILESETS", "LATENCY", "SERVICE", "REQUESTS", "SHARE", "REGIONS"}};
  for (const auto& r : report.rows) {
    const bool known = r.in_view;
    const auto& interval = r.member.interval;
    rows.push_back({member_name(r.id), r.address, r.state, known ? slowdown_cell(r.member.slowdown) : "-",
                    known ? std::to_string(r.member.file_sets.size()) : "-",
                    known ? latency_cell(interval.latency_ms, interval.requests) : "-",
                    known && interval.requests ? latency_cell(interval.service_ms) : "-",
                    known ? std::to_string(interval.requests) : "-", known ? share_cell(r.share) : "-",
                    regions_cell(r.regions)});
  }
  out += table(rows, {4, 5, 6, 7, 8});
  if (verbose) {
    out += "\nFile sets:\n";
    for (const auto& r : report.rows)
      if (r.in_view)
        out += fmt::format("  {}: {}\n", member_name(r.id),
                           r.member.file_sets.empty() ? "-" : id_list(r.member.file_sets, " "));
  }

  const auto [steps, steps_skipped] = last(report.history, max_steps);
  if (steps.empty()) {
    out += report.placement == "anu" || report.placement.empty()
               ? "\nTuning: no steps yet\n"
               : fmt::format("\nTuning: none (placement {} is never tuned)\n", report.placement);
  } else {
    out += steps_skipped ? fmt::format("\nTuning, last {} of {} steps (UTC):\n", steps.size(), report.history.size())
                         : fmt::format("\nTuning, {} step(s) (UTC):\n", steps.size());
    std::vector<std::vector<std::string>> t = {{"TIME", "MAP", "AVERAGE", "MDS", "LATENCY", "DECISION", "SHARE"}};
    for (const auto& s : steps) {
      if (s.servers.empty()) t.push_back({utc_clock(s.at_unix_ms), std::to_string(s.map_version),
                                          latency_cell(s.average_ms), "-", "-", "-", "-"});
      for (size_t i = 0; i < s.servers.size(); ++i) {
        const auto& srv = s.servers[i];
        t.push_back({i ? "" : utc_clock(s.at_unix_ms), i ? "" : std::to_string(s.map_version),
                     i ? "" : latency_cell(s.average_ms), member_name(srv.server), latency_cell(srv.latency_ms),
                     srv.decision, share_cell(srv.old_share) + "->" + share_cell(srv.new_share)});
      }
    }
    out += table(t, {1, 2, 4});
  }

  const auto [moves, moves_skipped] = last(report.moves, max_moves);
  if (moves.empty()) {
    out += "\nMoves: none\n";
  } else {
    out += moves_skipped ? fmt::format("\nMoves, last {} of {} (UTC):\n", moves.size(), report.moves.size())
                         : fmt::format("\nMoves, {} (UTC):\n", moves.size());
    std::vector<std::vector<std::string>> t = {{"TIME", "SET", "FROM", "TO", "BYTES", "DURATION", "OUTCOME"}};
    for (const auto& m : moves)
      t.push_back({utc_clock(m.at_unix_ms), std::to_string(m.set), member_name(m.from), member_name(m.to),
                   human_bytes(m.bytes), human_micros(uint64_t{m.duration_ms} * 1000), m.outcome});
    out += table(t, {1, 4, 5});
  }
  return out;
}

std::string render_mds_json(const MdsReport& report) {
  auto opt = [](const std::optional<uint32_t>& v) { return v ? std::to_string(*v) : std::string("null"); };
  const bool shown = report.view_of.has_value();
  std::string out = fmt::format(
      "{{\n  \"view_of\": {}, \"delegate\": {}, \"placement\": {},\n", opt(report.view_of),
      shown ? std::to_string(report.delegate) : "null", shown ? json_string(report.placement) : "null");
  if (!shown)
    out += "  \"map\": null,\n";
  else if (report.map_error.empty())
    out += fmt::format("  \"map\": {{\"version\": {}, \"partitions\": {}, \"rounds\": {}, \"text\": {}, \"error\": null}},\n",
                       report.map_version, report.partitions, report.rounds, json_string(report.map_text));
  else
    out += fmt::format("  \"map\": {{\"version\": null, \"partitions\": null, \"rounds\": null, \"text\": {}, \"error\": {}}},\n",
                       json_string(report.map_text), json_string(report.map_error));

  out += "  \"asked\": [";
  for (size_t i = 0; i < report.asked.size(); ++i) {
    const auto& a = report.asked[i];
    out += fmt::format("{}\n    {{\"name\": {}, \"address\": {}, \"answered\": {}, \"error\": {}}}", i ? "," : "",
                       json_string(a.name), json_string(a.address), a.answered ? "true" : "false",
                       a.answered ? "null" : json_string(a.error));
  }
  out += report.asked.empty() ? "],\n" : "\n  ],\n";

  out += "  \"members\": [";
  for (size_t i = 0; i < report.rows.size(); ++i) {
    const auto& r = report.rows[i];
    std::string regions;
    for (const auto& g : r.regions)
      regions += fmt::format("{}[{}, {}]", regions.empty() ? "" : ", ", json_number(g.begin), json_number(g.end));
    out += fmt::format("{}\n    {{\"id\": {}, \"name\": {}, \"address\": {}, \"state\": {}, ", i ? "," : "", r.id,
                       json_string(member_name(r.id)), json_string(r.address), json_string(r.state));
    if (r.in_view)
      out += fmt::format(
          "\"alive\": {}, \"slowdown\": {}, \"share\": {}, \"regions\": [{}], \"file_sets\": [{}], "
          "\"interval\": {{\"seq\": {}, \"latency_ms\": {}, \"requests\": {}, \"busy\": {}, "
          "\"service_ms\": {}}}}}",
          r.member.alive ? "true" : "false", r.member.slowdown > 0 ? json_number(r.member.slowdown) : "null",
          json_number(r.share), regions, id_list(r.member.file_sets, ", "), r.member.interval.seq,
          json_number(r.member.interval.latency_ms), r.member.interval.requests,
          json_number(r.member.interval.busy), json_number(r.member.interval.service_ms));
    else
      out += "\"alive\": null, \"slowdown\": null, \"share\": null, \"regions\": [], \"file_sets\": [], "
             "\"interval\": null}";
  }
  out += report.rows.empty() ? "],\n" : "\n  ],\n";

  out += "  \"history\": [";
  for (size_t i = 0; i < report.history.size(); ++i) {
    const auto& s = report.history[i];
    std::string servers;
    for (const auto& srv : s.servers)
      servers += fmt::format(
          "{}{{\"server\": {}, \"latency_ms\": {}, \"decision\": {}, \"old_share\": {}, \"new_share\": {}}}",
          servers.empty() ? "" : ", ", srv.server, json_number(srv.latency_ms), json_string(srv.decision),
          json_number(srv.old_share), json_number(srv.new_share));
    out += fmt::format("{}\n    {{\"at_unix_ms\": {}, \"average_ms\": {}, \"map_version\": {}, \"servers\": [{}]}}",
                       i ? "," : "", s.at_unix_ms, json_number(s.average_ms), s.map_version, servers);
  }
  out += report.history.empty() ? "],\n" : "\n  ],\n";

  out += "  \"moves\": [";
  for (size_t i = 0; i < report.moves.size(); ++i) {
    const auto& m = report.moves[i];
    out += fmt::format(
        "{}\n    {{\"set\": {}, \"from\": {}, \"to\": {}, \"at_unix_ms\": {}, \"bytes\": {}, \"duration_ms\": {}, "
        "\"outcome\": {}}}",
        i ? "," : "", m.set, m.from, m.to, m.at_unix_ms, m.bytes, m.duration_ms, json_string(m.outcome));
  }
  out += report.moves.empty() ? "]\n" : "\n  ]\n";
  return out + "}\n";
}

}  // namespace pvfs::ctl
