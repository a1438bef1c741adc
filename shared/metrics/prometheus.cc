#include "shared/metrics/prometheus.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace pvfs::metrics {

namespace {

std::string escape(std::string_view text, bool quote) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && quote) out += "\\\"";
    else out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

Status line_error(size_t line, std::string_view what) {
  return Status(Errc::invalid_argument, fmt::format("line {}: {}", line, what));
}

bool name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

Result<double> parse_number(std::string_view text) {
  if (text == "NaN") return std::nan("");
  if (text == "+Inf" || text == "Inf") return HUGE_VAL;
  if (text == "-Inf") return -HUGE_VAL;
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size())
    return Status(Errc::invalid_argument, fmt::format("bad value '{}'", text));
  return v;
}

// Parses `{name="value",...}` at text[at] (which is '{'); moves `at` past it.
Result<std::vector<Label>> parse_labels(std::string_view text, size_t& at) {
  std::vector<Label> labels;
  ++at;
  for (;;) {
    while (at < text.size() && (text[at] == ' ' || text[at] == ',')) ++at;
    if (at < text.size() && text[at] == '}') {
      ++at;
      return labels;
    }
    const size_t start = at;
    while (at < text.size() && name_char(text[at], at == start)) ++at;
    if (at == start || at >= text.size() || text[at] != '=' || at + 1 >= text.size() || text[at + 1] != '"')
      return Status(Errc::invalid_argument, "bad label");
    Label l;
    l.name = std::string(text.substr(start, at - start));
    at += 2;
    for (;; ++at) {
      if (at >= text.size()) return Status(Errc::invalid_argument, "unterminated label value");
      const char c = text[at];
      if (c == '"') break;
      if (c == '\\' && at + 1 < text.size()) {
        const char e = text[++at];
        l.value += e == 'n' ? '\n' : e;
      } else {
        l.value += c;
      }
    }
    ++at;
    labels.push_back(std::move(l));
  }
}

std::string unescape_help(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      ++i;
      out += text[i] == 'n' ? '\n' : text[i];
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

std::string render_prometheus(const Families& families) {
  std::string out;
  for (const auto& f : families) {
    if (f.samples.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, escape(f.help, false), f.name,
                       type_name(f.type));
    for (const auto& s : f.samples) {
      out += f.name;
      out += s.suffix;
      if (!s.labels.empty()) {
        out += '{';
        for (size_t i = 0; i < s.labels.size(); ++i)
          out += fmt::format("{}{}=\"{}\"", i ? "," : "", s.labels[i].name, escape(s.labels[i].value, true));
        out += '}';
      }
      out += ' ';
      out += number(s.value);
      out += '\n';
    }
  }
  return out;
}

Result<Families> parse_prometheus(std::string_view text) {
  Families out;
  size_t line_no = 0;
  auto family_named = [&](std::string_view name) -> Family& {
    for (auto& f : out)
      if (f.name == name) return f;
    out.push_back(make_family(std::string(name), {}, Type::gauge));
    return out.back();
  };
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line[0] == '#') {
      const bool help = line.starts_with("# HELP "), type = line.starts_with("# TYPE ");
      if (!help && !type) continue;
      std::string_view rest = line.substr(7);
      const size_t space = rest.find(' ');
      const std::string_view name = rest.substr(0, space);
      const std::string_view value = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
      if (name.empty()) return line_error(line_no, "HELP or TYPE without a metric name");
      Family& f = family_named(name);
      if (help) {
        f.help = unescape_help(value);
      } else if (value == "counter") {
        f.type = Type::counter;
      } else if (value == "gauge" || value == "untyped") {
        f.type = Type::gauge;
      } else if (value == "summary") {
        f.type = Type::summary;
      } else {
        return line_error(line_no, fmt::format("unsupported type '{}'", value));
      }
      continue;
    }
    size_t at = 0;
    while (at < line.size() && name_char(line[at], at == 0)) ++at;
    if (at == 0) return line_error(line_no, "a sample must start with a metric name");
    const std::string_view name = line.substr(0, at);
    Sample sample;
    if (at < line.size() && line[at] == '{') {
      auto labels = parse_labels(line, at);
      if (!labels) return line_error(line_no, labels.status().detail());
      sample.labels = std::move(*labels);
    }
    while (at < line.size() && line[at] == ' ') ++at;
    const size_t end = line.find(' ', at);
    auto value = parse_number(line.substr(at, end == std::string_view::npos ? end : end - at));
    if (!value) return line_error(line_no, value.status().detail());
    sample.value = *value;
    Family* family = nullptr;
    for (auto& f : out)
      if (f.name == name) family = &f;
    for (auto& f : out)
      for (const char* suffix : {"_sum", "_count"})
        if (!family && f.type == Type::summary && name == f.name + suffix) {
          family = &f;
          sample.suffix = suffix;
        }
    if (!family) family = &family_named(name);
    family->samples.push_back(std::move(sample));
  }
  return out;
}

}  // namespace pvfs::metrics
